"""Baseline vs candidate, each a run or a configuration with its replicates, on live ground
truth or a frozen snapshot: every figure's difference with paired intervals and a verdict,
and the statements that changed most (``metrics.families.extraction.experiments`` and
``changes`` do the math).

Computed in the background and stored (``metrics.engine.derived``): it reads the stored
per-statement and per-discussion counts of every run of both sides (the counts pulled out of
``contribution`` by the database), then the stored figures and payloads of the few statements
it lists. A page reads the stored row only (``comparison_parts``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.db.models import Case, IntegerField, QuerySet, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from audit.display import Labels
from audit.models import (
    LIVE_GROUND_TRUTH,
    Extraction,
    ExtractionRun,
    Feedback,
    GroundTruthSnapshot,
    RunConfiguration,
    SnapshotCoding,
    Statement,
)
from evalsite.api import DomainError
from metrics.engine.services import EXTRACTION
from metrics.engine.snapshots import SNAPSHOT_FAMILY, snapshot_results_compute
from metrics.families.extraction.changes import statement_changes
from metrics.families.extraction.experiments import (
    CUMULATIVE_FIGURES,
    CUMULATIVE_PREFIX,
    FIGURES,
    LABELS,
    STATEMENT_FIGURES,
    ExperimentComparison,
    Layout,
    compare_configurations,
    figure_values,
    layout_for,
    sarf_column,
)
from metrics.families.extraction.results import COUNT_FIELDS
from metrics.families.extraction.sarf import SARF_VARIABLES
from metrics.models import MetricResult

N_RESAMPLES = 2000
SEED = 42
N_LISTED = 50  # statements listed per filter and direction
TEXT_PREVIEW = 160
# The figures a statement list can be sorted by (the filter of the page's list).
LIST_FIGURES: tuple[str, ...] = ("aggregate", "people", "events", "pair_bonds", *SARF_VARIABLES)
Scope = MetricResult.Scope
Status = MetricResult.Status


class ComparisonInputError(DomainError):
    """A side or a ground truth named that does not exist (or is malformed)."""

    status_code = 400


class ComparisonNotFound(ComparisonInputError):
    """A well-formed side or snapshot that names nothing (or a configuration with no runs)."""

    status_code = 404


# --- sides and ground truth ----------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a run ("r12") or a configuration with its replicates ("c3")."""

    spec: str
    label: str
    runs: tuple[ExtractionRun, ...]
    unit: str

    @property
    def run_ids(self) -> list[int]:
        return [run.pk for run in self.runs]

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "label": self.label,
            "runs": [{"id": r.pk, "replicate": r.replicate, "notes": r.notes} for r in self.runs],
            "unit": self.unit,
        }


SIDE_PATTERN = r"^([rc]?)([0-9]{1,12})\Z"
SPEC = re.compile(SIDE_PATTERN)


def side_of_run(run: ExtractionRun) -> Side:
    return Side(f"r{run.pk}", run.label, (run,), run.unit)


def side_get(
    spec: object, *, name: str = "side", runs: Mapping[int, ExtractionRun] | None = None
) -> Side:
    """The side a spec names: "r12" or "12" a run, "c3" a configuration (all its replicates).
    ``runs``: every run by id, when the caller has read them all (a run is then not read
    again). Raises ComparisonInputError naming what is wrong."""
    match = SPEC.match(str(spec).strip()) if isinstance(spec, str | int) else None
    if match is None:
        raise ComparisonInputError(
            f"{name}: expected a run id (r12 or 12) or a configuration id (c3)"
        )
    kind, pk = match.group(1) or "r", int(match.group(2))
    if kind == "r":
        if runs is not None:
            run = runs.get(pk)
        else:
            run = ExtractionRun.objects.select_related("configuration").filter(pk=pk).first()
        if run is None:
            raise ComparisonNotFound(f"{name}: no extraction run {pk}")
        return side_of_run(run)
    configuration = RunConfiguration.objects.filter(pk=pk).first()
    if configuration is None:
        raise ComparisonNotFound(f"{name}: no configuration {pk}")
    replicates = tuple(configuration.runs.select_related("configuration").order_by("replicate"))
    if not replicates:
        raise ComparisonNotFound(f"{name}: configuration {pk} has no runs yet")
    n = len(replicates)
    label = f"{configuration.label} ({n} replicate{'s' if n != 1 else ''})"
    return Side(f"c{pk}", label, replicates, configuration.unit)


def snapshot_get(value: object) -> GroundTruthSnapshot | None:
    """The snapshot a parameter names; None, "" or "live": live ground truth."""
    if value in (None, "", "live"):
        return None
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 12:
        raise ComparisonInputError("snapshot: expected a snapshot id or 'live'")
    snapshot = GroundTruthSnapshot.objects.filter(pk=int(text)).first()
    if snapshot is None:
        raise ComparisonNotFound(f"snapshot: no ground-truth snapshot {text}")
    return snapshot


def basis_label(snapshot: GroundTruthSnapshot | None) -> str:
    return snapshot.basis_label if snapshot else LIVE_GROUND_TRUTH


def basis_rows(snapshot_id: int | None) -> QuerySet[MetricResult]:
    """The stored extraction results on this ground truth (None: live)."""
    if snapshot_id is None:
        return MetricResult.objects.filter(family=EXTRACTION)
    return MetricResult.objects.filter(family=SNAPSHOT_FAMILY, snapshot_id=snapshot_id)


# --- reading the counts ----------------------------------------------------------------------------

STATEMENT_FIELDS = ("run_id", "statement_id", "discussion_id", "not_fresh", "n_exact")
N_IDS = len(STATEMENT_FIELDS)


def _statement_rows(run_ids: list[int], snapshot_id: int | None) -> tuple[np.ndarray, list]:
    """One row per stored statement result of these runs (STATEMENT_FIELDS then the counts),
    and each row's SARF confusion tables."""
    counts = {
        f"n_{c}": Coalesce(Cast(KT(f"contribution__{c}"), IntegerField()), 0) for c in COUNT_FIELDS
    }
    rows = (
        basis_rows(snapshot_id)
        .filter(scope=Scope.STATEMENT, run_id__in=run_ids, contribution__isnull=False)
        .annotate(not_fresh=Case(When(status=Status.FRESH, then=0), default=1))
        .annotate(n_exact=Coalesce(Cast(KT("contribution__exact"), IntegerField()), 0), **counts)
        .order_by()
        .values_list(*STATEMENT_FIELDS, *counts, "contribution__sarf")
    )
    numbers, sarf = [], []
    for row in rows:
        numbers.append(row[:-1])
        sarf.append(row[-1] or {})
    table = np.array(numbers, dtype=np.int64).reshape(-1, N_IDS + len(COUNT_FIELDS))
    return table, sarf


def _discussion_rows(run_ids: list[int], snapshot_id: int | None) -> np.ndarray:
    counts = {
        f"n_{c}": Coalesce(Cast(KT(f"contribution__{c}"), IntegerField()), 0) for c in COUNT_FIELDS
    }
    rows = (
        basis_rows(snapshot_id)
        .filter(scope=Scope.DISCUSSION, run_id__in=run_ids, contribution__isnull=False)
        .annotate(**counts)
        .order_by()
        .values_list("run_id", "discussion_id", *counts)
    )
    return np.array(list(rows), dtype=np.int64).reshape(-1, 2 + len(COUNT_FIELDS))


@dataclass
class Tables:
    """Every run's per-discussion tables over what all runs of both sides cover, and the
    per-statement tables of the statements they all cover (sorted ids)."""

    layout: Layout
    discussions: np.ndarray  # discussion ids, sorted
    statements: np.ndarray  # statement ids both sides' runs all cover, sorted
    per_run: dict[int, np.ndarray]  # run -> (D, columns)
    per_statement: dict[int, np.ndarray]  # run -> (S, columns), statement counts only
    n_updating: int


def _common(ids_per_run: Iterable[np.ndarray]) -> np.ndarray:
    common: np.ndarray | None = None
    for ids in ids_per_run:
        common = ids if common is None else np.intersect1d(common, ids)
    return np.unique(common) if common is not None else np.zeros(0, dtype=np.int64)


def tables_read(run_ids: list[int], snapshot_id: int | None) -> Tables:
    statements, sarf = _statement_rows(run_ids, snapshot_id)
    discussions = _discussion_rows(run_ids, snapshot_id)
    common_s = _common(statements[statements[:, 0] == r, 1] for r in run_ids)
    common_d = _common(discussions[discussions[:, 0] == r, 1] for r in run_ids)
    keep_s = np.isin(statements[:, 1], common_s)
    kept_sarf = [sarf[i] for i in np.flatnonzero(keep_s)]
    statements = statements[keep_s]
    discussions = discussions[np.isin(discussions[:, 1], common_d)]
    layout = layout_for(kept_sarf)
    all_d = np.union1d(np.unique(statements[:, 2]), common_d)
    index, n_columns = layout.index(), len(layout.columns)
    per_run, per_statement = {}, {}
    for run_id in run_ids:
        mine = np.flatnonzero(statements[:, 0] == run_id)
        rows = statements[mine]
        order = np.argsort(rows[:, 1])
        rows, mine = rows[order], mine[order]
        s_table = np.zeros((len(rows), n_columns))
        s_table[:, : len(COUNT_FIELDS)] = rows[:, N_IDS:]
        s_table[:, index["exact"]] = rows[:, 4]
        s_table[:, index["statements"]] = 1
        for position, i in enumerate(mine):
            for variable, table in kept_sarf[i].items():
                for ai, cells in table.items():
                    for gt, n in cells.items():
                        s_table[position, index[sarf_column(variable, ai, gt)]] += n
        d_table = np.zeros((len(all_d), n_columns))
        np.add.at(d_table, np.searchsorted(all_d, rows[:, 2]), s_table)
        cumulative = discussions[discussions[:, 0] == run_id]
        start = index[CUMULATIVE_PREFIX + COUNT_FIELDS[0]]
        positions = np.searchsorted(all_d, cumulative[:, 1])
        d_table[positions, start : start + len(COUNT_FIELDS)] += cumulative[:, 2:]
        per_run[run_id], per_statement[run_id] = d_table, s_table
    return Tables(
        layout=layout,
        discussions=all_d,
        statements=common_s,
        per_run=per_run,
        per_statement=per_statement,
        n_updating=int(statements[:, 3].sum()),
    )


# --- the statements that changed most ------------------------------------------------------------


def _statement_figures(tables: Tables, side: Side, figure: str) -> np.ndarray:
    """(S,) the side's mean over replicates of each statement's figure (an empty statement's
    entity F1 is 1.0, as stored; a SARF figure without matched events is NaN)."""
    values = []
    for run_id in side.run_ids:
        v = figure_values(tables.per_statement[run_id], tables.layout, figure)
        if figure not in SARF_VARIABLES:
            v = np.where(np.isnan(v), 1.0, v)
        values.append(v)
    stacked = np.array(values).reshape(len(values), -1)
    present = (~np.isnan(stacked)).sum(axis=0)
    sums = np.nansum(stacked, axis=0)
    return np.where(present > 0, sums / np.maximum(present, 1), np.nan)


def _listed(
    tables: Tables, baseline: Side, candidate: Side, n: int
) -> dict[str, dict[str, list[dict]]]:
    lists: dict[str, dict[str, list[dict]]] = {}
    for figure in LIST_FIGURES:
        before = _statement_figures(tables, baseline, figure)
        after = _statement_figures(tables, candidate, figure)
        delta = after - before
        valid = np.flatnonzero(~np.isnan(delta) & (delta != 0))
        order = valid[np.lexsort((tables.statements[valid], delta[valid]))]
        rows = {"worse": order[delta[order] < 0][:n], "better": order[delta[order] > 0][::-1][:n]}
        lists[figure] = {
            direction: [
                {
                    "statement_id": int(tables.statements[i]),
                    "baseline": float(before[i]),
                    "candidate": float(after[i]),
                    "delta": float(delta[i]),
                }
                for i in chosen
            ]
            for direction, chosen in rows.items()
        }
    return lists


def _details(
    statement_ids: list[int], baseline: Side, candidate: Side, snapshot_id: int | None
) -> dict[str, dict[str, Any]]:
    """Per listed statement: where it is, a preview of its text, and what changed, items named."""
    if not statement_ids:
        return {}
    run_ids = baseline.run_ids + candidate.run_ids
    stored = {
        (run_id, statement_id): values or {}
        for run_id, statement_id, values in basis_rows(snapshot_id)
        .filter(scope=Scope.STATEMENT, run_id__in=run_ids, statement_id__in=statement_ids)
        .values_list("run_id", "statement_id", "values")
    }
    payloads = {
        (run_id, statement_id): pdp
        for run_id, statement_id, pdp in Extraction.objects.filter(
            run_id__in=run_ids, statement_id__in=statement_ids
        ).values_list("run_id", "statement_id", "pdp_deltas")
    }
    truth = ground_truth_payloads(statement_ids, snapshot_id)
    out = {}
    for statement in Statement.objects.filter(pk__in=statement_ids).only(
        "pk", "discussion_id", "order", "text"
    ):
        sides = [
            [
                (stored.get((r, statement.pk), {}), payloads.get((r, statement.pk)))
                for r in s.run_ids
            ]
            for s in (baseline, candidate)
        ]
        changes = statement_changes(*sides)
        out[str(statement.pk)] = {
            "discussion_id": statement.discussion_id,
            "order": statement.order,
            "text": statement.text[:TEXT_PREVIEW],
            "changes": _named(changes, truth.get(statement.pk)),
        }
    return out


def ground_truth_payloads(statement_ids: list[int], snapshot_id: int | None) -> dict[int, Any]:
    """The approved coding of each statement (on a snapshot: as frozen)."""
    if snapshot_id is not None:
        rows = SnapshotCoding.objects.filter(
            snapshot_id=snapshot_id, statement_id__in=statement_ids
        )
        return dict(rows.values_list("statement_id", "payload"))
    approved = Feedback.objects.approved().filter(statement_id__in=statement_ids)
    return dict(approved.values_list("statement_id", "edited_extraction"))


def _named(changes: dict[str, Any], gt: Any) -> dict[str, Any]:
    """Ground-truth ids replaced by the items' readable names."""
    labels = Labels().feed(gt if isinstance(gt, dict) else None)
    name = {"people": labels.person, "pair_bonds": labels.bond, "events": _event_name(labels)}
    out: dict[str, Any] = {}
    for kind, namer in name.items():
        part = dict(changes[kind])
        part["newly_missed"] = [namer(i) for i in part["newly_missed"]]
        part["newly_matched"] = [namer(i) for i in part["newly_matched"]]
        out[kind] = part
    out["sarf"] = [{**flip, "event": name["events"](flip["event"])} for flip in changes["sarf"]]
    return out


def _event_name(labels: Labels):
    return lambda ident: labels.events.get(ident, f"event {ident}")


# --- the comparison ---------------------------------------------------------------------------


def figure_applicable(figure: str, baseline: Side, candidate: Side) -> bool:
    """Statement figures do not exist for a discussion-unit run (not applicable, never 0)."""
    whole = RunConfiguration.Unit.DISCUSSION in (baseline.unit, candidate.unit)
    return figure in CUMULATIVE_FIGURES or not whole


def comparison_compute(
    baseline: Side,
    candidate: Side,
    snapshot: GroundTruthSnapshot | None,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    n_listed: int = N_LISTED,
) -> dict[str, Any]:
    """The stored comparison (JSON-ready)."""
    snapshot_id = snapshot.pk if snapshot else None
    run_ids = list(dict.fromkeys(baseline.run_ids + candidate.run_ids))
    tables = tables_read(run_ids, snapshot_id)
    result = compare_configurations(
        [tables.per_run[r] for r in baseline.run_ids],
        [tables.per_run[r] for r in candidate.run_ids],
        layout=tables.layout,
        n_resamples=n_resamples,
        seed=seed,
    )
    lists = _listed(tables, baseline, candidate, n_listed)
    listed = sorted({row["statement_id"] for f in lists.values() for d in f.values() for row in d})
    return {
        "baseline": baseline.to_dict(),
        "candidate": candidate.to_dict(),
        "ground_truth": {"snapshot": snapshot_id, "label": basis_label(snapshot)},
        "method": result.method,
        "n_statements": int(tables.statements.size),
        "n_discussions": int(tables.discussions.size),
        "n_updating": tables.n_updating,
        "n_resamples": n_resamples,
        "seed": seed,
        "levels": list(result.levels),
        "figures": _figures_json(result, baseline, candidate),
        "statements": lists,
        "details": _details(listed, baseline, candidate, snapshot_id),
    }


def _figures_json(
    result: ExperimentComparison, baseline: Side, candidate: Side
) -> list[dict[str, Any]]:
    out = []
    for figure in FIGURES:
        data = asdict(result.figures[figure])
        data.update(
            key=figure,
            label=LABELS[figure],
            applicable=figure_applicable(figure, baseline, candidate),
            level="statement" if figure in STATEMENT_FIGURES else "cumulative",
        )
        out.append(data)
    return out


def snapshot_results_ensure(runs: Iterable[ExtractionRun], snapshot_id: int | None) -> None:
    """Compute the runs' figures on the snapshot where they are missing or outdated (a worker
    comparing on a snapshot needs them all)."""
    if snapshot_id is None:
        return
    fresh = set(
        basis_rows(snapshot_id)
        .filter(scope=Scope.RUN, status=Status.FRESH, run_id__in=[r.pk for r in runs])
        .values_list("run_id", flat=True)
    )
    for run in runs:
        if run.pk not in fresh:
            snapshot_results_compute(run_id=run.pk, snapshot_id=snapshot_id)


def runs_of(sides: Sequence[Side]) -> list[ExtractionRun]:
    return list({run.pk: run for side in sides for run in side.runs}.values())


# --- the gate -----------------------------------------------------------------------------------


def default_gate_figures(values: dict[str, Any]) -> list[str]:
    """What a gate checks unless told: the overall F1, or the cumulative F1 when a side is a
    whole-discussion run (it has no statement figures)."""
    applicable = {f["key"] for f in values["figures"] if f["applicable"]}
    return ["aggregate"] if "aggregate" in applicable else ["cumulative"]


def figure_verdicts(values: dict[str, Any], level: float) -> dict[str, str]:
    """Each figure's verdict at ``level``: better / worse / within noise / not applicable."""
    out = {}
    for figure in values["figures"]:
        if not figure["applicable"] or figure["delta"] is None:
            out[figure["key"]] = "not applicable"
            continue
        interval = next((i for i in figure["intervals"] if abs(i["level"] - level) < 1e-9), None)
        out[figure["key"]] = interval["verdict"] if interval else "within noise"
    return out


def comparison_gate(
    values: dict[str, Any], *, level: float, figures: Sequence[str] | None = None
) -> dict[str, Any]:
    """The gate's answer on a stored comparison: each figure's verdict at ``level``, the
    figures gated (``figures``, else ``default_gate_figures``), those worse beyond noise, and
    whether the candidate passed (none is)."""
    verdicts = figure_verdicts(values, level)
    gated = list(figures) if figures else default_gate_figures(values)
    worse = [figure for figure in gated if verdicts.get(figure) == "worse"]
    return {
        "level": level,
        "figure_verdicts": verdicts,
        "gated": gated,
        "worse": worse,
        "passed": not worse,
    }


def figure_summaries(values: dict[str, Any], level: float) -> list[dict[str, Any]]:
    """Per figure at ``level``: each side's mean and replicates, the difference, its interval
    and the verdict in words (what the API and the gate print)."""
    verdicts = figure_verdicts(values, level)
    rows = []
    for figure in values["figures"]:
        interval = next(
            (i for i in figure["intervals"] if abs(i["level"] - level) < 1e-9),
            {"low": None, "high": None},
        )
        rows.append(
            {
                "key": figure["key"],
                "label": figure["label"],
                "applicable": figure["applicable"],
                "baseline": figure["baseline"]["point"],
                "baseline_replicates": figure["baseline"]["replicates"],
                "candidate": figure["candidate"]["point"],
                "candidate_replicates": figure["candidate"]["replicates"],
                "delta": figure["delta"],
                "low": interval["low"],
                "high": interval["high"],
                "verdict": verdicts[figure["key"]],
            }
        )
    return rows
