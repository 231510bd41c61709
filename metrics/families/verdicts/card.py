"""The verdicts card: the artifact as the context of ``templates/metrics/cards/family_verdicts.html``
(the seven metrics with what each counted, judgement accuracy per field, the verdict confusion)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formatting import fmt_pct
from ..plots import Svg, bar_plot, heatmap


def _verdict_notes(artifact: Mapping[str, Any]) -> dict[str, str]:
    evidence = artifact["details"]["evidence_details"]
    judgement = artifact["details"].get("judgement_details") or {}
    consistency = artifact["details"].get("consistency_details") or {}
    matched = evidence["total_matched"]
    return {
        "auprc": "ranking quality (ordinal)",
        "macro_f1": "classification quality",
        "evidence_precision": f"{matched}/{evidence['total_claimed']} claimed exist in GT",
        "evidence_recall": f"{matched}/{evidence['total_gt_evidence']} GT evidences found",
        "snippet_validity": (
            f"{evidence['valid_snippets']}/{evidence['total_snippets']} quotes match source"
        ),
        "judgement_accuracy": (
            f"{judgement.get('correct', 0)}/{judgement.get('total', 0)} fields correct"
        ),
        "verdict_consistency": (
            f"{consistency.get('consistent', 0)}/{consistency.get('total', 0)} "
            "evidence+rule→verdict"
        ),
    }


VERDICT_METRICS = (
    ("auprc", "AUPRC", "Final quality"),
    ("macro_f1", "Macro F1", "Final quality"),
    ("evidence_precision", "Evidence precision", "Evidence quality"),
    ("evidence_recall", "Evidence recall", "Evidence quality"),
    ("snippet_validity", "Snippet validity", "Evidence quality"),
    ("judgement_accuracy", "Judgement accuracy", "Reasoning quality"),
    ("verdict_consistency", "Verdict consistency", "Reasoning quality"),
)


def card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    notes = _verdict_notes(artifact)
    judgement = artifact["details"].get("judgement_details") or {}
    check = artifact["details"].get("ground_truth_check") or {}
    return {
        "metrics": [
            {
                "key": key,
                "label": label,
                "tier": tier,
                "value": fmt_pct(artifact.get(key)),
                "note": notes[key],
            }
            for key, label, tier in VERDICT_METRICS
        ],
        "run_id": artifact.get("run_id"),
        "model": artifact.get("model"),
        "policy_id": artifact.get("policy_id"),
        "method": artifact.get("method"),
        "n_samples": artifact.get("n_samples"),
        "n_structured": artifact.get("n_structured"),
        "n_with_gt": artifact.get("n_with_gt"),
        "fields": [
            {**row, "field": name, "accuracy": fmt_pct(row.get("accuracy"))}
            for name, row in (judgement.get("per_field") or {}).items()
        ],
        "gt_check": check,
        "fields_svg": _field_accuracy(judgement.get("per_field") or {}),
        "confusion": _verdict_confusion(artifact["details"].get("verdict_confusion")),
    }


def _verdict_confusion(confusion: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """True against predicted verdict as a heatmap and a table whose cells name their samples;
    None for an artifact stored before the samples' verdicts were kept."""
    if not confusion or not confusion.get("per_sample"):
        return None
    truth, predicted = confusion["truth_labels"], confusion["predicted_labels"]
    samples: dict[tuple[str, str], list[str]] = {}
    for sample in confusion["per_sample"]:
        samples.setdefault((sample["truth"], sample["predicted"]), []).append(sample["business_id"])
    rows = [
        {
            "label": name,
            "cells": [
                {"count": count, "samples": samples.get((name, column), []), "hit": name == column}
                for column, count in zip(predicted, counts, strict=True)
            ],
        }
        for name, counts in zip(truth, confusion["matrix"], strict=True)
    ]
    svg = heatmap(
        truth,
        predicted,
        confusion["matrix"],
        x_label="predicted verdict",
        y_label="true verdict",
        title="Verdicts: true against predicted",
    )
    return {"columns": predicted, "rows": rows, "svg": svg}


def _field_accuracy(per_field: Mapping[str, Any]) -> Svg:
    """Judgement accuracy per field as bars (the table beside it has the counts)."""
    if not per_field:
        return Svg("")
    names = list(per_field)
    values = [per_field[name].get("accuracy") for name in names]
    bars = {"label": "Judgement accuracy", "values": values}
    return bar_plot(names, [bars], "Accuracy", x_label="Field", height=240)
