"""Verdict and evidence quality: seven separate metrics of a method's verdict run.

Final quality: ordinal AUPRC and macro-F1. Evidence quality: evidence precision, evidence
recall and snippet validity. Reasoning quality: judgement accuracy and verdict consistency.
No weighted composite is formed.

Input shapes (as in the spec's results.json):

- ``results``: ``[{business_id, verdict, risk_score?, parsed: {evidences: [{review_id, field,
  judgement, snippet}], justification: {triggered_rule}}}]``
- ``gt_data``: ``{business_id: {verdict, incidents: [{review_id, severity_field, severity_value,
  modifiers}]}}`` and ``gt_verdicts``: ``{business_id: verdict}``
- ``reviews_data``: ``{business_id: {review_id: text}}``

Scoring rules and verdict names come from a policy data file (see ``verdict_policies``).

Snippet validity rule
---------------------
Quote and review text are normalised (lowercase, whitespace collapsed). A quote is valid when

1. its normalised text is a substring of the normalised review text, or
2. it is stitched from several sentences of the review, in order: the quote is cut into
   segments at sentence ends (``.``, ``!`` or ``?`` followed by whitespace) and at ellipses
   (``...``, ``…``); trailing punctuation is dropped and segments shorter than 10 characters
   are ignored; each segment is searched in the review from the end of the previous segment
   found (so the found segments keep the review's reading order); the quote is valid when at
   least 80% of its segments are found. A quote with no segment of 10+ characters is valid
   only through rule 1.

A snippet whose review id is not among the restaurant's reviews is invalid; snippets of a
restaurant with no review texts given are not checked (and not counted).

Decisions where the spec is silent
----------------------------------
- A result with a missing or unknown predicted verdict stays in the sample: it is wrong for
  macro-F1 and ranks below every valid verdict for AUPRC (score -1).
- AUPRC ranks by ``risk_score`` only when every sample has one; otherwise all samples are ranked
  by the ordinal of their predicted verdict (mixing the two scales would scramble the ranking).
- Macro-F1 averages over the classes that occur in the ground truth or the valid predictions
  (a class absent from both would add a meaningless 0); None when there is no sample.
- Evidence metrics cover every result whose restaurant has ground truth; a result without
  ``parsed.evidences`` claims nothing, so its ground-truth evidences still count for recall.
- Judgement accuracy is over matched incidents (review id claimed and in the ground truth): the
  severity field, plus each policy modifier the method reported for that review when the ground
  truth lists ``modifiers``. A matched incident with no severity judgement counts as wrong.
- Verdict consistency skips results with no verdict and results whose rule has no arrow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from .policy import (
    Policy,
    canonical_judgement,
    fields_equivalent,
    is_modifier_detected,
    load_policy,
    normalize_label,
    normalize_verdict,
    score_evidences,
    verdict_for_score,
    verdict_ordinal,
)

Result = Mapping[str, Any]

MIN_SNIPPET_SEGMENT_CHARS = 10
SNIPPET_SEGMENT_SHARE = 0.8
INVALID_PREDICTION = -1
_RULE_ARROW = re.compile(r"→|->")
_SEGMENT_BREAK = re.compile(r"\.{3,}|…|(?<=[.!?])\s+")


# --- result access -------------------------------------------------------------------------


def _parsed(result: Result) -> Mapping[str, Any]:
    parsed = result.get("parsed")
    return parsed if isinstance(parsed, Mapping) else {}


def is_structured(result: Result) -> bool:
    """A result the method managed to structure: ``parsed.evidences`` is present."""
    return isinstance(_parsed(result).get("evidences"), list)


def result_evidences(result: Result) -> list[Mapping[str, Any]]:
    evidences = _parsed(result).get("evidences")
    if not isinstance(evidences, list):
        return []
    return [evidence for evidence in evidences if isinstance(evidence, Mapping)]


def triggered_rule(result: Result) -> str | None:
    justification = _parsed(result).get("justification")
    if not isinstance(justification, Mapping):
        return None
    rule = justification.get("triggered_rule")
    return rule if isinstance(rule, str) and rule.strip() else None


def _review_id(item: Mapping[str, Any]) -> str | None:
    review_id = item.get("review_id")
    return str(review_id) if review_id not in (None, "") else None


# --- tier 1: final quality -----------------------------------------------------------------


def _binary_average_precision(positive: np.ndarray, scores: np.ndarray) -> float | None:
    # Average precision is undefined when only one class is present at this threshold.
    if positive.all() or not positive.any():
        return None
    from sklearn.metrics import average_precision_score  # here: see compute_macro_f1

    return float(average_precision_score(positive.astype(int), scores))


def compute_ordinal_auprc(y_true_ordinal: Sequence[int], y_scores: Sequence[float]) -> dict:
    """Mean of the binary average precisions for >=High and >=Critical (ordinals 0, 1, 2).

    A threshold with one class only is left out; fewer than two samples gives None.
    """
    truth = np.asarray(y_true_ordinal, dtype=int)
    scores = np.asarray(y_scores, dtype=float)
    metrics: dict[str, Any] = {
        "auprc_ge_high": None,
        "auprc_ge_critical": None,
        "ordinal_auprc": None,
        "n_samples": len(truth),
    }
    if len(truth) < 2:
        return metrics
    metrics["auprc_ge_high"] = _binary_average_precision(truth >= 1, scores)
    metrics["auprc_ge_critical"] = _binary_average_precision(truth >= 2, scores)
    present = [
        value
        for value in (metrics["auprc_ge_high"], metrics["auprc_ge_critical"])
        if value is not None
    ]
    metrics["ordinal_auprc"] = float(np.mean(present)) if present else None
    return metrics


def compute_macro_f1(y_true: Sequence[int], y_pred: Sequence[int]) -> float | None:
    """Macro-F1 (zero_division=0) over the classes seen in truth or valid predictions."""
    if len(y_true) == 0:
        return None
    labels = sorted(set(y_true) | {label for label in y_pred if label != INVALID_PREDICTION})
    # Imported here: every process of the site would pay sklearn's import at start-up.
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0))


def _verdict_samples(
    results: Sequence[Result], gt_verdicts: Mapping[str, Any], policy: Policy
) -> list[dict[str, Any]]:
    samples = []
    for result in results:
        business_id: Any = result.get("business_id")
        if business_id not in gt_verdicts:
            continue
        truth = verdict_ordinal(gt_verdicts[business_id], policy)
        if truth is None:
            raise ValueError(
                f"ground-truth verdict {gt_verdicts[business_id]!r} of {business_id!r} is not a "
                f"verdict of policy {policy.policy_id} ({', '.join(policy.verdicts)})"
            )
        predicted = verdict_ordinal(result.get("verdict"), policy)
        risk_score = result.get("risk_score")
        samples.append(
            {
                "business_id": business_id,
                "truth": truth,
                "predicted": INVALID_PREDICTION if predicted is None else predicted,
                "risk_score": risk_score if _is_number(risk_score) else None,
            }
        )
    return samples


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ranking_scores(samples: Sequence[Mapping[str, Any]]) -> tuple[list[float], str]:
    if samples and all(sample["risk_score"] is not None for sample in samples):
        return [float(sample["risk_score"]) for sample in samples], "risk_score"
    return [float(sample["predicted"]) for sample in samples], "verdict_ordinal"


def compute_final_quality(
    results: Sequence[Result], gt_verdicts: Mapping[str, Any], policy: Policy
) -> dict[str, Any]:
    """AUPRC details and macro-F1 over the results that have a ground-truth verdict."""
    samples = _verdict_samples(results, gt_verdicts, policy)
    truth = [sample["truth"] for sample in samples]
    predicted = [sample["predicted"] for sample in samples]
    scores, score_source = _ranking_scores(samples)
    auprc_metrics = compute_ordinal_auprc(truth, scores)
    auprc_metrics["score_source"] = score_source
    auprc_metrics["n_invalid_predictions"] = predicted.count(INVALID_PREDICTION)
    return {
        "auprc_metrics": auprc_metrics,
        "macro_f1": compute_macro_f1(truth, predicted),
        "n_with_gt": len(samples),
        "verdict_confusion": verdict_confusion(samples, policy),
    }


INVALID_LABEL = "invalid"


def verdict_confusion(samples: Sequence[Mapping[str, Any]], policy: Policy) -> dict[str, Any]:
    """Counts of true verdict (rows) against predicted verdict (columns, plus "invalid" for a
    missing or unknown verdict), with every sample's pair so a cell can name its samples."""
    names = list(policy.verdicts)
    columns = [*names, INVALID_LABEL]
    matrix = [[0] * len(columns) for _ in names]
    per_sample = []
    for sample in samples:
        predicted = sample["predicted"]
        column = len(names) if predicted == INVALID_PREDICTION else predicted
        matrix[sample["truth"]][column] += 1
        per_sample.append(
            {
                "business_id": sample["business_id"],
                "truth": names[sample["truth"]],
                "predicted": columns[column],
            }
        )
    return {
        "truth_labels": names,
        "predicted_labels": columns,
        "matrix": matrix,
        "per_sample": per_sample,
    }


# --- tier 2: evidence quality --------------------------------------------------------------


def _normalize_for_snippet(text: str) -> str:
    return " ".join(text.lower().split())


def _snippet_segments(quote: str) -> list[str]:
    segments = []
    for part in _SEGMENT_BREAK.split(quote):
        segment = _normalize_for_snippet(part).strip(" .,;:!?\"'\u201c\u201d\u2018\u2019")
        if len(segment) >= MIN_SNIPPET_SEGMENT_CHARS:
            segments.append(segment)
    return segments


def is_snippet_valid(snippet: str, source_text: str) -> bool:
    """Substring of the source, or stitched in order from its sentences (module docstring)."""
    quote = _normalize_for_snippet(snippet or "")
    source = _normalize_for_snippet(source_text or "")
    if not quote or not source:
        return False
    if quote in source:
        return True
    segments = _snippet_segments(snippet)
    if not segments:
        return False
    found, cursor = 0, 0
    for segment in segments:
        position = source.find(segment, cursor)
        if position >= 0:
            found += 1
            cursor = position + len(segment)
    return found / len(segments) >= SNIPPET_SEGMENT_SHARE


def _count_valid_snippets(
    evidences: Sequence[Mapping[str, Any]], reviews: Mapping[str, str] | None
) -> tuple[int, int]:
    """(valid, checked) snippets of one restaurant; nothing is checked without review texts."""
    if reviews is None:
        return 0, 0
    valid = checked = 0
    for evidence in evidences:
        snippet, review_id = evidence.get("snippet"), _review_id(evidence)
        if not isinstance(snippet, str) or not snippet.strip() or review_id is None:
            continue
        checked += 1
        valid += is_snippet_valid(snippet, reviews.get(review_id, ""))
    return valid, checked


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _evidence_sample(
    result: Result, gt: Mapping[str, Any], reviews: Mapping[str, str] | None
) -> dict[str, Any]:
    gt_ids = {_review_id(incident) for incident in gt.get("incidents") or []} - {None}
    evidences = result_evidences(result)
    claimed = {_review_id(evidence) for evidence in evidences} - {None}
    matched = claimed & gt_ids
    valid, checked = _count_valid_snippets(evidences, reviews)
    return {
        "business_id": result.get("business_id"),
        "claimed": len(claimed),
        "gt_evidence": len(gt_ids),
        "matched": len(matched),
        "evidence_precision": _ratio(len(matched), len(claimed)),
        "evidence_recall": _ratio(len(matched), len(gt_ids)),
        "valid_snippets": valid,
        "total_snippets": checked,
        "snippet_validity": _ratio(valid, checked),
    }


def _pooled_evidence(per_sample: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    def total(key: str) -> int:
        return sum(sample[key] for sample in per_sample)

    return {
        "evidence_precision": _ratio(total("matched"), total("claimed")),
        "evidence_recall": _ratio(total("matched"), total("gt_evidence")),
        "snippet_validity": _ratio(total("valid_snippets"), total("total_snippets")),
        "total_claimed": total("claimed"),
        "total_matched": total("matched"),
        "total_gt_evidence": total("gt_evidence"),
        "total_snippets": total("total_snippets"),
        "valid_snippets": total("valid_snippets"),
        "samples_with_no_claims": sum(1 for sample in per_sample if sample["claimed"] == 0),
        "samples_with_no_gt": sum(1 for sample in per_sample if sample["gt_evidence"] == 0),
    }


def compute_evidence_validity(
    results: Sequence[Result],
    gt_data: Mapping[str, Mapping[str, Any]],
    reviews_data: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """Evidence precision/recall by review id and snippet validity, pooled over samples."""
    reviews_data = reviews_data or {}
    per_sample = [
        _evidence_sample(
            result,
            gt_data[result["business_id"]],
            reviews_data.get(result["business_id"]),
        )
        for result in results
        if result.get("business_id") in gt_data
    ]
    return {
        **_pooled_evidence(per_sample),
        "samples_without_gt_entry": len(results) - len(per_sample),
        "per_sample": per_sample,
    }


# --- tier 3: reasoning quality -------------------------------------------------------------


def _field_key(field: Any) -> str:
    return normalize_label(field).upper().replace(" ", "_")


def _first_evidence_for(
    evidences: Sequence[Mapping[str, Any]], field_names: Sequence[str]
) -> Mapping[str, Any] | None:
    for evidence in evidences:
        if any(fields_equivalent(evidence.get("field"), name) for name in field_names):
            return evidence
    return None


def _severity_check(
    incident: Mapping[str, Any], evidences: Sequence[Mapping[str, Any]], policy: Policy
) -> tuple[str, bool]:
    """(field, correct) for the incident's severity judgement."""
    gt_field = incident.get("severity_field") or policy.severity_field
    gt_value = normalize_label(incident.get("severity_value"))
    evidence = _first_evidence_for(evidences, [gt_field])
    if evidence is None:
        return _field_key(gt_field), False
    known = [gt_value]
    if fields_equivalent(gt_field, policy.severity_field):
        known.extend(policy.severity_points)
    return _field_key(gt_field), canonical_judgement(evidence.get("judgement"), known) == gt_value


def _modifier_checks(
    incident: Mapping[str, Any], evidences: Sequence[Mapping[str, Any]], policy: Policy
) -> list[tuple[str, bool]]:
    """(field, correct) for each policy modifier the method reported on this review."""
    if not isinstance(incident.get("modifiers"), list):
        return []  # the ground truth did not annotate modifiers for this incident
    gt_modifiers = {normalize_label(name) for name in incident["modifiers"]}
    checks = []
    for rule in policy.modifiers:
        evidence = _first_evidence_for(evidences, rule.fields)
        if evidence is not None:
            detected = is_modifier_detected(evidence.get("judgement"), rule)
            expected = normalize_label(rule.name) in gt_modifiers
            checks.append((_field_key(rule.fields[0]), detected == expected))
    return checks


def _evidences_by_review(result: Result) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for evidence in result_evidences(result):
        review_id = _review_id(evidence)
        if review_id is not None:
            grouped.setdefault(review_id, []).append(evidence)
    return grouped


def _judgement_checks(result: Result, gt: Mapping[str, Any], policy: Policy) -> list:
    by_review = _evidences_by_review(result)
    checks = []
    for incident in gt.get("incidents") or []:
        evidences = by_review.get(_review_id(incident) or "")
        if evidences:  # only matched incidents are judged; misses belong to recall
            checks.append(_severity_check(incident, evidences, policy))
            checks.extend(_modifier_checks(incident, evidences, policy))
    return checks


def compute_judgement_accuracy(
    results: Sequence[Result],
    gt_data: Mapping[str, Mapping[str, Any]],
    policy_id: str | None = None,
) -> tuple[float | None, dict[str, Any]]:
    """Share of correct field values (severity, modifiers) over matched incidents."""
    policy = load_policy(policy_id)
    per_field: dict[str, dict[str, Any]] = {}
    for result in results:
        business_id: Any = result.get("business_id")
        gt = gt_data.get(business_id)
        checks = _judgement_checks(result, gt, policy) if gt is not None else []
        for field, correct in checks:
            stats = per_field.setdefault(field, {"correct": 0, "total": 0})
            stats["total"] += 1
            stats["correct"] += int(correct)
    for stats in per_field.values():
        stats["accuracy"] = stats["correct"] / stats["total"]
    correct = sum(stats["correct"] for stats in per_field.values())
    total = sum(stats["total"] for stats in per_field.values())
    return _ratio(correct, total), {"correct": correct, "total": total, "per_field": per_field}


def extract_verdict_from_rule(rule: str | None) -> str | None:
    """The verdict after the last "→" or "->": "SCORE >= 5 → Critical Risk" -> "Critical Risk"."""
    if not isinstance(rule, str):
        return None
    parts = _RULE_ARROW.split(rule)
    if len(parts) < 2:
        return None
    return parts[-1].strip() or None


def _consistency_sample(result: Result, rule: str, policy: Policy) -> dict[str, Any]:
    claimed = normalize_verdict(result.get("verdict"), policy)
    rule_verdict = normalize_verdict(extract_verdict_from_rule(rule), policy)
    evidences = result_evidences(result)
    # The verdict the policy's scoring rules give the method's own evidences: shown, not scored.
    evidence_score = score_evidences(evidences, policy) if evidences else None
    return {
        "business_id": result.get("business_id"),
        "method_verdict": claimed,
        "triggered_rule": rule,
        "rule_verdict": rule_verdict,
        "consistent": claimed == rule_verdict,
        "evidence_score": evidence_score,
        "evidence_verdict": (
            None if evidence_score is None else verdict_for_score(evidence_score, policy)
        ),
    }


def compute_verdict_consistency_enhanced(
    results: Sequence[Result], policy_id: str | None = None
) -> tuple[float | None, dict[str, Any]]:
    """Share of results whose triggered rule leads to the verdict they claim."""
    policy = load_policy(policy_id)
    per_sample, skipped_no_verdict, skipped_no_rule = [], 0, 0
    for result in results:
        rule = triggered_rule(result)
        if normalize_verdict(result.get("verdict"), policy) is None:
            skipped_no_verdict += 1
        elif extract_verdict_from_rule(rule) is None:
            skipped_no_rule += 1
        else:
            # A rule naming a verdict is not None.
            per_sample.append(_consistency_sample(result, cast(str, rule), policy))
    consistent = sum(1 for sample in per_sample if sample["consistent"])
    return _ratio(consistent, len(per_sample)), {
        "consistent": consistent,
        "total": len(per_sample),
        "skipped_no_rule": skipped_no_rule,
        "skipped_no_verdict": skipped_no_verdict,
        "per_sample": per_sample,
    }


# --- all seven ------------------------------------------------------------------------------


def compute_evaluation_metrics(
    results: Sequence[Result],
    gt_data: Mapping[str, Mapping[str, Any]],
    gt_verdicts: Mapping[str, Any],
    method: str,
    reviews_data: Mapping[str, Mapping[str, str]] | None = None,
    policy_id: str | None = None,
) -> dict[str, Any]:
    """The spec's ``evaluation_metrics`` block: seven metrics, sample counts and details."""
    policy = load_policy(policy_id)
    final = compute_final_quality(results, gt_verdicts, policy)
    evidence = compute_evidence_validity(results, gt_data, reviews_data)
    judgement_accuracy, judgement_details = compute_judgement_accuracy(results, gt_data, policy_id)
    consistency, consistency_details = compute_verdict_consistency_enhanced(results, policy_id)
    return {
        "auprc": final["auprc_metrics"]["ordinal_auprc"],
        "macro_f1": final["macro_f1"],
        "evidence_precision": evidence["evidence_precision"],
        "evidence_recall": evidence["evidence_recall"],
        "snippet_validity": evidence["snippet_validity"],
        "judgement_accuracy": judgement_accuracy,
        "verdict_consistency": consistency,
        "n_samples": len(results),
        "n_structured": sum(1 for result in results if is_structured(result)),
        "n_with_gt": final["n_with_gt"],
        "method": method,
        "policy_rules": policy.policy_id,
        "details": {
            "auprc_metrics": final["auprc_metrics"],
            "evidence_details": evidence,
            "judgement_details": judgement_details,
            "consistency_details": consistency_details,
            "verdict_confusion": final["verdict_confusion"],
        },
    }


# What ``metrics.families.verdicts`` exports.
__all__ = [
    "INVALID_PREDICTION",
    "MIN_SNIPPET_SEGMENT_CHARS",
    "SNIPPET_SEGMENT_SHARE",
    "Policy",
    "Result",
    "canonical_judgement",
    "compute_evaluation_metrics",
    "compute_evidence_validity",
    "compute_final_quality",
    "compute_judgement_accuracy",
    "compute_macro_f1",
    "compute_ordinal_auprc",
    "compute_verdict_consistency_enhanced",
    "extract_verdict_from_rule",
    "fields_equivalent",
    "is_modifier_detected",
    "is_snippet_valid",
    "is_structured",
    "load_policy",
    "normalize_label",
    "normalize_verdict",
    "result_evidences",
    "score_evidences",
    "triggered_rule",
    "verdict_confusion",
    "verdict_for_score",
    "verdict_ordinal",
]
