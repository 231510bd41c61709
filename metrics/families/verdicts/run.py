"""Imported verdict runs: parse the uploaded files, compute the artifact, print the table.

File roles:

- ``results`` (required): the spec's results.json, an object with a ``results`` list (a bare
  list is accepted too). Each row: ``business_id``, ``verdict``, optional ``risk_score``,
  ``error`` and ``parsed: {evidences: [{review_id, field, judgement, snippet}],
  justification: {triggered_rule}}``. Top-level ``run_id``, ``policy_id``, ``method`` and
  ``model`` are kept.
- ``ground_truth`` (required): ``{restaurants: {id: {ground_truth: {verdict, incidents:
  [{review_id, severity_field, severity_value, modifiers}]}}}}``.
- ``reviews`` (optional): review texts for snippet validity, either
  ``{business_id: {review_id: text | {text: ...}}}`` or rows ``{business_id, review_id, text}``
  as a JSON array or JSON Lines.

Options: ``policy_id`` and ``method``; None takes the value from the results file (then the
defaults "V2" and "unknown").

The run interface (``metrics.families.runs``): ``OPTIONS``, ``Options``, ``parse``, ``compute``
and ``report`` (the spec's console table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from metrics.families.json_input import InputError, load_json, load_jsonl
from metrics.families.runs import Files, Option, check_roles, one_file_per_role

from .card import card as card  # the run.py interface: parse, compute, report, card
from .policy import (
    DEFAULT_POLICY_ID,
    Policy,
    UnknownPolicyError,
    load_policy,
    score_incidents,
    verdict_for_score,
    verdict_ordinal,
)
from .quality import compute_evaluation_metrics


@dataclass(frozen=True)
class Options:
    """Scoring policy and method label; None takes the results file's (ValueError: unknown policy)."""

    policy_id: str | None = None
    method: str | None = None

    def __post_init__(self) -> None:
        if self.policy_id:
            try:
                load_policy(self.policy_id)
            except UnknownPolicyError as exc:
                raise ValueError(f"option 'policy_id': {exc}") from exc


OPTIONS = (
    Option(
        "policy_id",
        "str",
        "Scoring policy, e.g. V2 or G1_allergy_V2; empty: the results file's policy_id.",
    ),
    Option("method", "str", "Method label; empty: the results file's method."),
)

REQUIRED_ROLES = ("results", "ground_truth")
OPTIONAL_ROLES = ("reviews",)
_RUN_FIELDS = ("run_id", "policy_id", "method", "model")


# --- small validators -----------------------------------------------------------------------


def _require_object(value: Any, file: str, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(file, where, f"expected an object, got {type(value).__name__}")
    return value


def _require_list(value: Any, file: str, where: str) -> list:
    if not isinstance(value, list):
        raise InputError(file, where, f"expected a list, got {type(value).__name__}")
    return value


def _identifier(value: Any, file: str, where: str) -> str:
    """A non-empty id; integers are accepted and turned into text (JSON keys are text)."""
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise InputError(file, where, f"expected a non-empty string id, got {value!r}")
    return str(value)


def _optional_text(value: Any, file: str, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InputError(file, where, f"expected a string or null, got {type(value).__name__}")


def _scalar_text(value: Any, file: str, where: str) -> str | None:
    """Judgements may be written as true/false or numbers; they are compared as text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise InputError(file, where, f"expected a string, number or boolean, got {value!r}")


# --- results file ---------------------------------------------------------------------------


def _parse_evidence(evidence: Any, where: str) -> dict[str, Any]:
    evidence = _require_object(evidence, "results", where)
    review_id = evidence.get("review_id")
    return {
        "review_id": None
        if review_id is None
        else _identifier(review_id, "results", f"{where}.review_id"),
        "field": _optional_text(evidence.get("field"), "results", f"{where}.field"),
        "judgement": _scalar_text(evidence.get("judgement"), "results", f"{where}.judgement"),
        "snippet": _optional_text(evidence.get("snippet"), "results", f"{where}.snippet"),
    }


def _parse_parsed_block(parsed: Any, where: str) -> dict[str, Any] | None:
    if parsed is None:
        return None
    parsed = _require_object(parsed, "results", where)
    block: dict[str, Any] = {}
    if parsed.get("evidences") is not None:
        evidences = _require_list(parsed["evidences"], "results", f"{where}.evidences")
        block["evidences"] = [
            _parse_evidence(evidence, f"{where}.evidences[{index}]")
            for index, evidence in enumerate(evidences)
        ]
    justification = parsed.get("justification")
    if justification is not None:
        justification = _require_object(justification, "results", f"{where}.justification")
        rule_where = f"{where}.justification.triggered_rule"
        rule = _optional_text(justification.get("triggered_rule"), "results", rule_where)
        block["justification"] = {"triggered_rule": rule}
    return block


def _parse_result_row(row: Any, where: str) -> dict[str, Any]:
    row = _require_object(row, "results", where)
    business_id = _identifier(row.get("business_id"), "results", f"{where}.business_id")
    where = f"{where} (business_id {business_id!r})"
    risk_score = row.get("risk_score")
    if risk_score is not None and (
        isinstance(risk_score, bool) or not isinstance(risk_score, int | float)
    ):
        raise InputError("results", f"{where}.risk_score", f"expected a number, got {risk_score!r}")
    parsed_row = {
        "business_id": business_id,
        "verdict": _optional_text(row.get("verdict"), "results", f"{where}.verdict"),
        "risk_score": risk_score,
        "parsed": _parse_parsed_block(row.get("parsed"), f"{where}.parsed"),
    }
    if row.get("error") is not None:
        parsed_row["error"] = str(row["error"])
    return parsed_row


def _parse_results(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    document = load_json(data, file="results")
    run: dict[str, Any] = {field: None for field in _RUN_FIELDS}
    rows = document
    if isinstance(document, Mapping):
        for field in _RUN_FIELDS:
            run[field] = _optional_text(document.get(field), "results", field)
        rows = document.get("results")
    rows = _require_list(rows, "results", "results")
    parsed_rows: list[dict[str, Any]] = []
    first_row: dict[Any, int] = {}
    for index, row in enumerate(rows):
        parsed_row = _parse_result_row(row, f"results[{index}]")
        business_id = parsed_row["business_id"]
        if business_id in first_row:
            message = f"duplicate business_id {business_id!r} (first in results[{first_row[business_id]}])"
            raise InputError("results", f"results[{index}]", message)
        first_row[business_id] = index
        parsed_rows.append(parsed_row)
    return run, parsed_rows


# --- ground-truth file ----------------------------------------------------------------------


def _parse_incident(incident: Any, where: str) -> dict[str, Any]:
    incident = _require_object(incident, "ground_truth", where)
    severity_value = _scalar_text(
        incident.get("severity_value"), "ground_truth", f"{where}.severity_value"
    )
    severity_field = _optional_text(
        incident.get("severity_field"), "ground_truth", f"{where}.severity_field"
    )
    for key, value in (("severity_field", severity_field), ("severity_value", severity_value)):
        if not value:
            raise InputError("ground_truth", f"{where}.{key}", "expected a non-empty string")
    modifiers = incident.get("modifiers")
    if modifiers is not None:
        modifiers = _require_list(modifiers, "ground_truth", f"{where}.modifiers")
        for index, name in enumerate(modifiers):
            if not isinstance(name, str):
                raise InputError("ground_truth", f"{where}.modifiers[{index}]", "expected a string")
    return {
        "review_id": _identifier(incident.get("review_id"), "ground_truth", f"{where}.review_id"),
        "severity_field": severity_field,
        "severity_value": severity_value,
        "modifiers": modifiers,
    }


def _parse_restaurant(entry: Any, where: str) -> dict[str, Any]:
    entry = _require_object(entry, "ground_truth", where)
    truth = _require_object(entry.get("ground_truth"), "ground_truth", f"{where}.ground_truth")
    where = f"{where}.ground_truth"
    verdict = truth.get("verdict")
    if not isinstance(verdict, str) or not verdict.strip():
        raise InputError("ground_truth", f"{where}.verdict", "expected a non-empty verdict")
    incidents = _require_list(truth.get("incidents", []), "ground_truth", f"{where}.incidents")
    return {
        "verdict": verdict,
        "incidents": [
            _parse_incident(incident, f"{where}.incidents[{index}]")
            for index, incident in enumerate(incidents)
        ],
    }


def _parse_ground_truth(data: bytes) -> dict[str, dict[str, Any]]:
    document = _require_object(load_json(data, file="ground_truth"), "ground_truth", "")
    restaurants = _require_object(document.get("restaurants"), "ground_truth", "restaurants")
    return {
        str(business_id): _parse_restaurant(entry, f"restaurants.{business_id}")
        for business_id, entry in restaurants.items()
    }


# --- reviews file ---------------------------------------------------------------------------


def _load_json_or_jsonl(data: bytes, file: str) -> Any:
    try:
        return load_json(data, file=file)
    except InputError as json_error:
        try:
            return load_jsonl(data, file=file)
        except InputError:
            raise json_error from None


def _review_text(value: Any, where: str) -> str:
    if isinstance(value, Mapping):
        value = value.get("text")
    if not isinstance(value, str):
        raise InputError("reviews", where, "expected the review text (a string or {text: ...})")
    return value


def _reviews_from_rows(rows: list) -> dict[str, dict[str, str]]:
    reviews: dict[str, dict[str, str]] = {}
    for index, row in enumerate(rows):
        where = f"row {index + 1}"
        row = _require_object(row, "reviews", where)
        business_id = _identifier(row.get("business_id"), "reviews", f"{where}.business_id")
        review_id = _identifier(row.get("review_id"), "reviews", f"{where}.review_id")
        reviews.setdefault(business_id, {})[review_id] = _review_text(row.get("text"), where)
    return reviews


def _parse_reviews(data: bytes) -> dict[str, dict[str, str]]:
    document = _load_json_or_jsonl(data, "reviews")
    if isinstance(document, list):
        return _reviews_from_rows(document)
    document = _require_object(document, "reviews", "")
    reviews: dict[str, dict[str, str]] = {}
    for business_id, texts in document.items():
        texts = _require_object(texts, "reviews", str(business_id))
        reviews[str(business_id)] = {
            str(review_id): _review_text(text, f"{business_id}.{review_id}")
            for review_id, text in texts.items()
        }
    return reviews


def parse_verdict_inputs(files: dict[str, bytes]) -> dict:
    """Validate and normalise the uploaded files; raises InputError naming file and row/key."""
    check_roles(files, required=REQUIRED_ROLES, optional=OPTIONAL_ROLES)
    run, results = _parse_results(files["results"])
    ground_truth = _parse_ground_truth(files["ground_truth"])
    reviews = _parse_reviews(files["reviews"]) if "reviews" in files else None
    if results and not any(row["business_id"] in ground_truth for row in results):
        raise InputError(
            "ground_truth",
            "restaurants",
            f"none of the {len(results)} result business ids has a ground-truth entry",
        )
    return {"run": run, "results": results, "ground_truth": ground_truth, "reviews": reviews}


# --- artifact -------------------------------------------------------------------------------


def _resolve_policy(options: Options, run: Mapping[str, Any]) -> Policy:
    if options.policy_id:
        return load_policy(options.policy_id)  # Options checked that it exists
    try:
        return load_policy(run.get("policy_id") or DEFAULT_POLICY_ID)
    except UnknownPolicyError as error:
        raise InputError("results", "policy_id", str(error)) from error


def _check_gt_verdicts(ground_truth: Mapping[str, Mapping[str, Any]], policy: Policy) -> None:
    for business_id, truth in ground_truth.items():
        if verdict_ordinal(truth["verdict"], policy) is None:
            raise InputError(
                "ground_truth",
                f"restaurants.{business_id}.ground_truth.verdict",
                f"{truth['verdict']!r} is not a verdict of policy {policy.policy_id} "
                f"(expected one of {', '.join(policy.verdicts)})",
            )


def _ground_truth_check(
    ground_truth: Mapping[str, Mapping[str, Any]], policy: Policy
) -> dict[str, Any]:
    """Ground-truth verdicts the policy's scoring rules would not derive from the incidents."""
    mismatches = []
    for business_id, truth in ground_truth.items():
        score = score_incidents(truth["incidents"], policy)
        derived = verdict_for_score(score, policy)
        if verdict_ordinal(truth["verdict"], policy) != policy.verdicts.index(derived):
            mismatches.append(
                {
                    "business_id": business_id,
                    "verdict": truth["verdict"],
                    "derived_verdict": derived,
                    "derived_score": score,
                }
            )
    return {"checked": len(ground_truth), "mismatched": len(mismatches), "mismatches": mismatches}


def _json_ready(value: Any) -> Any:
    """Plain dict/list/str/int/float/bool/None, so json.dumps never meets numpy types."""
    if isinstance(value, Mapping):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    return value


def parse(files: Files, options: Options) -> dict:
    """The validated files (parse_verdict_inputs), after a dry run: ground-truth verdicts
    unknown to the policy are input errors too."""
    parsed = parse_verdict_inputs(one_file_per_role(files))
    compute(parsed, options)
    return parsed


def compute(parsed: dict, options: Options) -> dict:
    """The seven metrics, sample counts and details of one imported run, JSON-ready."""
    run = parsed["run"]
    policy = _resolve_policy(options, run)
    ground_truth = parsed["ground_truth"]
    _check_gt_verdicts(ground_truth, policy)
    policy_id = options.policy_id or run.get("policy_id") or policy.policy_id
    method = options.method or run.get("method") or "unknown"
    metrics = compute_evaluation_metrics(
        results=parsed["results"],
        gt_data=ground_truth,
        gt_verdicts={business_id: truth["verdict"] for business_id, truth in ground_truth.items()},
        method=method,
        reviews_data=parsed.get("reviews"),
        policy_id=policy.policy_id,
    )
    metrics["details"]["ground_truth_check"] = _ground_truth_check(ground_truth, policy)
    artifact = {"run_id": run.get("run_id"), "model": run.get("model"), "policy_id": policy_id}
    artifact.update(metrics)
    artifact["options"] = {"policy_id": options.policy_id, "method": options.method}
    return _json_ready(artifact)


# --- console table --------------------------------------------------------------------------

_TABLE_HEADER = ("Metric", "Score", "Notes")
_MIN_WIDTHS = (19, 7, 30)


def _score_text(value: float | None) -> str:
    return "N/A" if value is None else f"{value:.1%}"


def _table_rows(artifact: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    evidence = artifact["details"]["evidence_details"]
    matched = evidence["total_matched"]
    notes = {
        "auprc": ("AUPRC", "(ranking quality)"),
        "macro_f1": ("Macro F1", "(classification quality)"),
        "evidence_precision": (
            "Evidence Precision",
            f"({matched}/{evidence['total_claimed']} claimed exist in GT)",
        ),
        "evidence_recall": (
            "Evidence Recall",
            f"({matched}/{evidence['total_gt_evidence']} GT evidences found)",
        ),
        "snippet_validity": (
            "Snippet Validity",
            f"({evidence['valid_snippets']}/{evidence['total_snippets']} quotes match source)",
        ),
        "judgement_accuracy": ("Judgement Accuracy", "(field correctness)"),
        "verdict_consistency": ("Verdict Consistency", "(evidence+rule→verdict)"),
    }
    return [(label, _score_text(artifact[key]), note) for key, (label, note) in notes.items()]


def _border(left: str, middle: str, right: str, widths: list[int]) -> str:
    return left + middle.join("─" * (width + 2) for width in widths) + right


def _line(cells: tuple[str, str, str], widths: list[int]) -> str:
    return (
        "│"
        + "│".join(f" {cell.ljust(width)} " for cell, width in zip(cells, widths, strict=True))
        + "│"
    )


def report(artifact: Mapping[str, Any]) -> str:
    """The spec's console output: the seven metrics in a box-drawn table."""
    rows = _table_rows(artifact)
    widths = [
        max([minimum, len(header)] + [len(row[column]) for row in rows])
        for column, (minimum, header) in enumerate(zip(_MIN_WIDTHS, _TABLE_HEADER, strict=True))
    ]
    lines = [
        "EVALUATION METRICS (7 total)",
        _border("┌", "┬", "┐", widths),
        _line(_TABLE_HEADER, widths),
        _border("├", "┼", "┤", widths),
        *(_line(row, widths) for row in rows),
        _border("└", "┴", "┘", widths),
    ]
    return "\n".join(lines)
