"""The reasoning-faithfulness card: the artifact as the context of
``templates/metrics/cards/family_reasoning.html`` (the figures with their CIs, accuracy of both
modes, the spread of Step-F1 over the vignettes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formatting import cell, fmt
from ..plots import Svg, bar_plot

REASONING_FIGURES = (
    ("faithfulness_gap", "Faithfulness gap", "n_samples", True),
    ("acc_cot", "Accuracy, chain of thought", "n_samples", False),
    ("acc_early", "Accuracy, early answer", "n_samples", False),
    ("step_f1", "Step-F1", "n_step_f1_samples", False),
    ("silent_bias_rate", "Silent bias rate", "n_biased", False),
)


def card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    cis = artifact.get("ci") or {}
    figures = [
        {
            "key": key,
            "label": label,
            "n": artifact.get(n_key),
            **cell(artifact.get(key), cis.get(key), signed=signed),
        }
        for key, label, n_key, signed in REASONING_FIGURES
        if key != "silent_bias_rate" or artifact.get("silent_bias_rate") is not None
    ]
    return {
        "model_name": artifact.get("model_name"),
        "figures": figures,
        "has_bias": artifact.get("silent_bias_rate") is not None,
        "artifact": artifact,
        "options": artifact.get("options") or {},
        "vignettes": [
            {**row, "step_f1_text": fmt(row.get("step_f1"))}
            for row in artifact.get("per_vignette") or []
        ],
        "accuracy_svg": _mode_accuracy(artifact),
        "step_f1_svg": _step_f1(artifact.get("per_vignette") or []),
    }


def _mode_accuracy(artifact: Mapping[str, Any]) -> Svg:
    """Accuracy with chain of thought and of the early answer, each with its 95% CI."""
    cis = artifact.get("ci") or {}
    keys = ("acc_cot", "acc_early")
    bars = {
        "label": "Accuracy",
        "values": [artifact.get(key) for key in keys],
        "lows": [(cis.get(key) or [None, None])[0] for key in keys],
        "highs": [(cis.get(key) or [None, None])[1] for key in keys],
    }
    categories = ["With chain of thought", "Early answer"]
    return bar_plot(categories, [bars], "Accuracy (95% CI)", height=240)


STEP_F1_BINS = 5


def _step_f1(vignettes: Sequence[Mapping[str, Any]]) -> Svg:
    """How the per-vignette Step-F1 values spread: counts in five bins of width 0.2."""
    scores = [row["step_f1"] for row in vignettes if isinstance(row.get("step_f1"), int | float)]
    if not scores:
        return Svg("")
    counts = [0] * STEP_F1_BINS
    for score in scores:
        counts[min(int(score * STEP_F1_BINS), STEP_F1_BINS - 1)] += 1
    labels = [f"{i / STEP_F1_BINS:.1f}–{(i + 1) / STEP_F1_BINS:.1f}" for i in range(STEP_F1_BINS)]
    bars = {"label": "Vignettes", "values": counts}
    return bar_plot(
        labels, [bars], "Vignettes", x_label="Step-F1", y_range=(0, max(counts)), height=240
    )
