"""Import of replication runs: per-test results (CSV or JSON) -> PAS / ECS agreement artifact.

Input columns follow the spec's detailed_stats.csv: Study_ID, Sub_Study_ID, Finding_ID,
Test_Name, Scenario, Statistical_Test_Type, Human_Test_Statistic, Agent_Test_Statistic,
Agent_Effect_Size, Human_Effect_Size, Agent_Effect_d, Human_Effect_d, plus optional pi_human,
pi_agent, n_eff, PAS_Raw, Z_Diff and Domain. Names are matched case-insensitively (spaces and
hyphens count as underscores); other columns are ignored. JSON input is a list of objects with
the same keys (or an object holding that list under "tests" / "test_results").

The run interface (``metrics.families.runs``): ``OPTIONS``, ``Options``, ``parse`` (the
``tests`` file), ``compute`` and ``report``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metrics.families.agreement import (
    aggregate_study_ecs_strict,
    aggregate_study_pas,
    collect_ecs_points,
    compute_ecs_corr,
)
from metrics.families.agreement.numbers import finite_or_none
from metrics.families.json_input import InputError, load_json
from metrics.families.runs import Files, Option

from .card import card as card  # the run.py interface: parse, compute, report, card


@dataclass(frozen=True)
class Options:
    """The options of an agreement computation (ValueError names a bad one)."""

    # {domain: [study ids]} for the per-domain ECS (the spec's Cognition / Strategic / Social).
    # None: read each study's domain from the optional Domain column.
    study_groups: Mapping[str, Sequence[Any]] | None = None
    # Identify a finding by (Sub_Study_ID, Finding_ID): finding ids restart in each sub-study.
    composite_finding_ids: bool = True

    def __post_init__(self) -> None:
        groups = self.study_groups
        if groups is not None:
            if not isinstance(groups, Mapping) or not all(
                isinstance(ids, Sequence) and not isinstance(ids, str) for ids in groups.values()
            ):
                raise ValueError("study_groups must map each domain to a list of study ids")
            normalised = {str(domain): list(ids) for domain, ids in groups.items()}
            object.__setattr__(self, "study_groups", normalised)
        if not isinstance(self.composite_finding_ids, bool):
            raise ValueError("composite_finding_ids must be true or false")


OPTIONS = (
    Option(
        "study_groups",
        "mapping",
        'Per-domain ECS groups as JSON, e.g. {"Cognition": ["study_001"]}; empty: the '
        "Domain column.",
    ),
    Option("composite_finding_ids", "bool", "Identify a finding by (Sub_Study_ID, Finding_ID)."),
)

# Cell texts that mean "no value" (what pandas and spreadsheets write for missing numbers).
MISSING_TOKENS = frozenset({"", "nan", "na", "n/a", "none", "null"})
JSON_LIST_KEYS = ("tests", "test_results")


class _CellError(ValueError):
    """A cell's value is not what its column expects (message says what was expected)."""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _CellError(f"expected text, got {value!r}")
    if isinstance(value, float) and math.isnan(value):
        return None
    text = str(value).strip()
    return text or None


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise _CellError(f"expected a number, got {value!r}")
    if isinstance(value, str):
        if value.strip().lower() in MISSING_TOKENS:
            return None
        try:
            value = float(value.strip())
        except ValueError:
            raise _CellError(f"expected a number, got {value!r}") from None
    if not isinstance(value, int | float):
        raise _CellError(f"expected a number, got {value!r}")
    if math.isnan(value):
        return None
    if math.isinf(value):
        raise _CellError(f"expected a finite number, got {value!r}")
    return float(value)


def _probability(value: Any) -> float | None:
    number = _number(value)
    if number is not None and not 0.0 <= number <= 1.0:
        raise _CellError(f"expected a probability between 0 and 1, got {number:g}")
    return number


def _positive(value: Any) -> float | None:
    number = _number(value)
    if number is not None and number <= 0:
        raise _CellError(f"expected a positive number, got {number:g}")
    return number


@dataclass(frozen=True)
class _Column:
    label: str  # spelling used in messages
    key: str  # key of the parsed test dict
    parse: Callable[[Any], Any]


_COLUMN_LIST = [
    _Column("Study_ID", "study_id", _text),
    _Column("Sub_Study_ID", "sub_study_id", _text),
    _Column("Finding_ID", "finding_id", _text),
    _Column("Test_Name", "test_name", _text),
    _Column("Scenario", "scenario", _text),
    _Column("Statistical_Test_Type", "statistical_test_type", _text),
    _Column("Human_Test_Statistic", "human_test_statistic", _text),
    _Column("Agent_Test_Statistic", "agent_test_statistic", _text),
    _Column("Agent_Effect_Size", "agent_effect_size", _number),
    _Column("Human_Effect_Size", "human_effect_size", _number),
    _Column("Agent_Effect_d", "agent_effect_d", _number),
    _Column("Human_Effect_d", "human_effect_d", _number),
    _Column("pi_human", "pi_human", _probability),
    _Column("pi_agent", "pi_agent", _probability),
    _Column("n_eff", "n_eff", _positive),
    _Column("PAS_Raw", "pas", _probability),
    _Column("Z_Diff", "z_diff", _number),
    _Column("Domain", "domain", _text),
]
# Normalised header name -> column; "pas" is accepted as a spelling of PAS_Raw.
COLUMNS: dict[str, _Column] = {column.label.lower(): column for column in _COLUMN_LIST}
COLUMNS["pas"] = COLUMNS["pas_raw"]
# Columns every file needs, and the ones whose cells must be non-empty in every row.
_REQUIRED_COLUMNS = (
    ("Study_ID", "study_id"),
    ("Finding_ID", "finding_id"),
    ("Statistical_Test_Type", "statistical_test_type"),
)
REQUIRED_CELLS = ("study_id", "finding_id")


def _normalise_name(name: Any) -> str:
    return str(name).strip().lower().replace(" ", "_").replace("-", "_")


def _decode(data: bytes | str, file: str) -> str:
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(file, "", f"not UTF-8 text ({exc.reason})") from exc


def _known_columns(names: Sequence[Any], file: str) -> dict[str, str]:
    """Original header name -> normalised name of each recognised column; duplicates rejected."""
    seen: dict[str, str] = {}
    known: dict[str, str] = {}
    for name in names:
        normalised = _normalise_name(name)
        if normalised not in COLUMNS:
            continue
        key = COLUMNS[normalised].key
        if key in seen:
            raise InputError(
                file,
                "header",
                f"columns {seen[key]!r} and {name!r} both give {COLUMNS[normalised].label}",
            )
        seen[key] = str(name)
        known[str(name)] = normalised
    return known


def _check_required_columns(present_keys: set[str], file: str) -> None:
    """Name every missing required column, and the alternatives when none of a set is there."""
    problems = []
    missing = [label for label, key in _REQUIRED_COLUMNS if key not in present_keys]
    if missing:
        problems.append("missing required column(s) " + ", ".join(missing))
    if "pas" not in present_keys and not {"pi_human", "pi_agent"} <= present_keys:
        problems.append("needs a PAS_Raw column or both pi_human and pi_agent columns")
    has_d = {"human_effect_d", "agent_effect_d"} <= present_keys
    if not has_d and not {"human_effect_size", "agent_effect_size"} <= present_keys:
        problems.append(
            "needs Human_Effect_d and Agent_Effect_d or Human_Effect_Size and Agent_Effect_Size"
        )
    if problems:
        raise InputError(file, "header", "; ".join(problems))


def _parse_record(
    record: Mapping[str, Any], known: Mapping[str, str], where: str, file: str
) -> dict[str, Any]:
    """One row / object -> test dict; `where` names the row for error messages."""
    test: dict[str, Any] = {column.key: None for column in _COLUMN_LIST}
    for name, normalised in known.items():
        column = COLUMNS[normalised]
        try:
            test[column.key] = column.parse(record.get(name))
        except _CellError as exc:
            raise InputError(file, f"{where}, column {name}", str(exc)) from None
    for key in REQUIRED_CELLS:
        if test[key] is None:
            label = next(label for label, k in _REQUIRED_COLUMNS if k == key)
            raise InputError(file, f"{where}, column {label}", "expected a non-empty value")
    return test


def _csv_records(text: str, file: str) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """Header and (location, row) pairs; a row with more cells than the header is an error."""
    first_line = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in first_line and "," not in first_line else ","
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    header = list(reader.fieldnames or [])
    records = []
    try:
        for row_number, row in enumerate(reader, start=1):
            where = f"row {row_number} (line {reader.line_num})"
            if None in row:
                raise InputError(
                    file, where, f"has more cells than the {len(header)} header columns"
                )
            records.append((where, row))
    except csv.Error as exc:
        raise InputError(file, f"line {reader.line_num}", f"malformed CSV: {exc}") from exc
    return header, records


def _json_records(text: str, file: str) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    payload = load_json(text, file=file)
    if isinstance(payload, dict):
        payload = next((payload[key] for key in JSON_LIST_KEYS if key in payload), payload)
    if not isinstance(payload, list):
        raise InputError(file, "", "expected a JSON list of test objects")
    records = []
    for row_number, item in enumerate(payload, start=1):
        if not isinstance(item, dict):
            raise InputError(file, f"row {row_number}", f"expected a JSON object, got {item!r}")
        records.append((f"row {row_number}", item))
    header = list(dict.fromkeys(key for _, item in records for key in item))
    return header, records


def _check_domains(tests: Sequence[Mapping[str, Any]], wheres: Sequence[str], file: str) -> None:
    """A study lies in one domain: a second, different Domain value for it is an error."""
    first_domain: dict[str, tuple[str, str]] = {}
    for test, where in zip(tests, wheres, strict=True):
        if test["domain"] is None:
            continue
        domain, first_where = first_domain.setdefault(test["study_id"], (test["domain"], where))
        if domain != test["domain"]:
            raise InputError(
                file,
                f"{where}, column Domain",
                f"expected {domain!r} for study {test['study_id']!r} (as in {first_where}), "
                f"got {test['domain']!r}",
            )


def parse_tests(data: bytes, *, file: str) -> list[dict[str, Any]]:
    """Per-test results from CSV or JSON bytes (JSON when the text starts with '[' or '{').

    Each test dict has every key of the known columns (None when absent or empty) plus
    `source_row`. Raises InputError naming the file, the row and column, and what was expected.
    """
    text = _decode(data, file)
    is_json = text.lstrip()[:1] in ("[", "{")
    header, records = (_json_records if is_json else _csv_records)(text, file)
    if not records:
        raise InputError(file, "", "no test rows")
    known = _known_columns(header, file)
    _check_required_columns({COLUMNS[name].key for name in known.values()}, file)
    tests = []
    for row_number, (where, record) in enumerate(records, start=1):
        test = _parse_record(record, known, where, file)
        test["source_row"] = row_number
        tests.append(test)
    _check_domains(tests, [where for where, _ in records], file)
    return tests


def _finding_key(test: Mapping[str, Any], composite: bool) -> Any:
    sub_study = test.get("sub_study_id")
    if composite and sub_study is not None:
        return f"{sub_study}:{test['finding_id']}"
    return test["finding_id"]


def _study_groups_from_domains(tests: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for test in tests:
        domain = test.get("domain")
        if domain is not None and test["study_id"] not in groups.setdefault(domain, []):
            groups[domain].append(test["study_id"])
    return groups


def _group_by_study(tests: Sequence[Mapping[str, Any]]) -> dict[Any, list[Mapping[str, Any]]]:
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for test in tests:
        groups.setdefault(test["study_id"], []).append(test)
    return groups


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return math.fsum(present) / len(present) if present else None


def _study_summaries(keyed_tests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per study: PAS raw / norm, ECS_Strict (None without any finite Z_diff) and per finding."""
    summaries = []
    for study_id, tests in _group_by_study(keyed_tests).items():
        pas_raw, pas_norm, pas_findings = aggregate_study_pas(tests)
        has_z_diff = any(finite_or_none(test.get("z_diff")) is not None for test in tests)
        ecs_strict, strict_findings = aggregate_study_ecs_strict(tests)
        summaries.append(
            {
                "study_id": study_id,
                "pas_raw": pas_raw,
                "pas_norm": pas_norm,
                "ecs_strict": ecs_strict if has_z_diff else None,
                "n_tests": len(tests),
                "findings": [
                    {
                        "study_id": study_id,
                        "finding_id": finding_id,
                        **values,
                        "ecs_strict": strict_findings[finding_id] if has_z_diff else None,
                    }
                    for finding_id, values in pas_findings.items()
                ],
            }
        )
    return summaries


def _value_and_count(values: Mapping[Any, Any], counts: Mapping[Any, int]) -> dict[Any, Any]:
    return {key: {"value": values[key], "n_tests": counts[key]} for key in values}


def _main_section(studies: Sequence[dict[str, Any]], ecs: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "pas_raw": {
            "overall": _mean_or_none([study["pas_raw"] for study in studies]),
            "n_studies": len(studies),
            "per_study": {
                study["study_id"]: {
                    "value": study["pas_raw"],
                    "n_findings": len(study["findings"]),
                    "n_tests": study["n_tests"],
                }
                for study in studies
            },
        },
        "ecs": {
            "measure": "weighted Lin's CCC of human vs agent Cohen's d-equivalents",
            "overall": {"value": ecs["ecs_overall"], "n_tests": ecs["n_tests_overall"]},
            "per_domain": _value_and_count(ecs["ecs_domain"], ecs["n_tests_domain"]),
            "per_study": _value_and_count(ecs["ecs_per_study"], ecs["n_tests_per_study"]),
        },
    }


def _auxiliary_section(studies: Sequence[dict[str, Any]], ecs: Mapping[str, Any]) -> dict[str, Any]:
    per_study = {study["study_id"]: study for study in studies}
    return {
        "pas_norm": {
            "overall": _mean_or_none([study["pas_norm"] for study in studies]),
            "per_study": {sid: study["pas_norm"] for sid, study in per_study.items()},
        },
        "ecs_strict": {
            "overall": _mean_or_none([study["ecs_strict"] for study in studies]),
            "per_study": {sid: study["ecs_strict"] for sid, study in per_study.items()},
        },
        "ecs_pearson": {
            "overall": ecs["ecs_corr_overall"],
            "per_domain": ecs["ecs_corr_domain"],
            "per_study": ecs["ecs_corr_per_study"],
        },
        "caricature": {
            "overall": ecs["caricature_overall"],
            "per_domain": ecs["caricature_domain"],
            "per_study": ecs["caricature_per_study"],
        },
        "per_finding": [finding for study in studies for finding in study["findings"]],
    }


def _scatter(tests: Sequence[Mapping[str, Any]], keyed_tests: Sequence[Mapping[str, Any]]) -> list:
    """Human-vs-agent d points; `weight` is the two-level weight of the overall ECS."""
    return [
        {
            "study_id": point.study_id,
            "finding_id": tests[point.index]["finding_id"],
            "sub_study_id": tests[point.index].get("sub_study_id"),
            "test_name": tests[point.index].get("test_name"),
            "human_d": point.human_d,
            "agent_d": point.agent_d,
            "weight": point.weight,
        }
        for point in collect_ecs_points(keyed_tests)
    ]


def _json_ready(value: Any) -> Any:
    """Plain JSON types only: numpy scalars become floats, non-finite floats become None."""
    if isinstance(value, Mapping):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float) or hasattr(value, "__float__"):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


def parse(files: Files, options: Options) -> list[dict[str, Any]]:
    """The tests of the one ``tests`` file (see parse_tests)."""
    item = files["tests"][0]
    return parse_tests(item.data, file=item.name)


def compute(tests: Sequence[Mapping[str, Any]], options: Options) -> dict[str, Any]:
    """JSON-ready agreement artifact: `main` (PAS raw, ECS as CCC), `auxiliary` (PAS norm,
    ECS_Strict, Pearson r, caricature regression, per-finding values), `scatter`, `counts`
    and the resolved `options`."""
    composite = options.composite_finding_ids
    keyed = [{**test, "finding_id": _finding_key(test, composite)} for test in tests]
    study_groups = options.study_groups or _study_groups_from_domains(tests)
    studies = _study_summaries(keyed)
    ecs = compute_ecs_corr(keyed, study_groups=study_groups or None)
    return _json_ready(
        {
            "main": _main_section(studies, ecs),
            "auxiliary": _auxiliary_section(studies, ecs),
            "scatter": _scatter(tests, keyed),
            "counts": {
                "n_tests": len(tests),
                "n_studies": len(studies),
                "n_findings": sum(len(study["findings"]) for study in studies),
                "n_ecs_tests": ecs["n_tests_overall"],
            },
            "options": {"study_groups": study_groups, "composite_finding_ids": composite},
        }
    )


def _figure(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def report(artifact: Mapping[str, Any]) -> str:
    """Counts, then the main and auxiliary figures."""
    main, auxiliary, counts = artifact["main"], artifact["auxiliary"], artifact["counts"]
    return "\n".join(
        [
            f"REPLICATION AGREEMENT ({counts['n_tests']} tests, {counts['n_findings']} "
            f"findings, {counts['n_studies']} studies)",
            f"Main:      PAS (raw) {_figure(main['pas_raw']['overall'])}   "
            f"ECS (CCC) {_figure(main['ecs']['overall']['value'])} "
            f"(n={main['ecs']['overall']['n_tests']})",
            f"Auxiliary: PAS (normalised) {_figure(auxiliary['pas_norm']['overall'])}   "
            f"ECS_Strict {_figure(auxiliary['ecs_strict']['overall'])}",
        ]
    )
