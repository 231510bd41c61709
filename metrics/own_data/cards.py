"""Card contexts of the own-data families, read from stored rows (never computed on request).

A card's state: ``fresh``; ``updating`` (the row is stale: last figures shown, the card polls);
``failed`` (with the error); ``empty`` (no row yet, or nothing to compute from).
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.safestring import mark_safe

from audit.models import ExtractionRun
from metrics.cards import card_base, card_state
from metrics.families.plots import line_plot
from metrics.models import MetricResult
from metrics.own_data.common import INTERAUDITOR_KEY
from metrics.registry import CALIBRATION, REVIEW_SAVINGS
from metrics.results import run_key

CURVE_COLUMNS = ("coverage", "selective_risk", "threshold")
AGGREGATOR_LABELS = {"min": "weakest item", "mean": "mean of items", "product": "product of items"}


# --- plots -------------------------------------------------------------------------------------


def _points(curve: dict) -> list[tuple[float, float]]:
    return list(zip(curve.get("coverage", []), curve.get("selective_risk", []), strict=False))


def risk_coverage_svg(values: dict[str, Any]) -> str:
    """Selective risk against coverage per confidence aggregator, the oracle, and the 5%/10%
    risk levels the readings use."""
    aggregators = values.get("aggregators") or {}
    series = [
        {"label": f"confidence: {AGGREGATOR_LABELS.get(how, how)}", "points": _points(s["curve"])}
        for how, s in aggregators.items()
        if s.get("curve")
    ]
    default = aggregators.get(values.get("default_aggregator")) or {}
    if default.get("oracle_curve"):
        series.append(
            {"label": "oracle (lowest loss first)", "points": _points(default["oracle_curve"])}
        )
    for reading in default.get("at_risk", []):
        risk = reading["max_risk"]
        series.append(
            {"label": f"{reading['percent']}% error", "points": [(0.0, risk), (1.0, risk)]}
        )
    return line_plot(
        series,
        "coverage (share of statements auto-accepted)",
        "error of accepted (1 − F1)",
        x_range=(0.0, 1.0),
        title="Risk–coverage curve",
    )


def reliability_svg(bins: list[dict], *, title: str = "Reliability diagram") -> str:
    """Accuracy against mean confidence per bin, with the diagonal of perfect calibration."""
    observed = [(b["mean_confidence"], b["accuracy"]) for b in bins]
    return line_plot(
        [
            {"label": "perfect calibration", "points": [(0.0, 0.0), (1.0, 1.0)]},
            {"label": "AI items (per confidence bin)", "points": observed},
        ],
        "confidence",
        "share matched to ground truth",
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.0),
        markers=True,
        title=title,
    )


# --- cards -------------------------------------------------------------------------------------


def _row(key: str) -> MetricResult | None:
    return MetricResult.objects.filter(key=key).first()


def review_savings_card(run: ExtractionRun) -> dict[str, Any]:
    row = _row(run_key(REVIEW_SAVINGS, run.pk))
    values = (row.values if row else None) or {}
    state = card_state(row, has_data=bool(values.get("n_statements")))
    default = (values.get("aggregators") or {}).get(values.get("default_aggregator")) or {}
    return {
        **card_base(row, state, reverse("metrics:review_savings_card", args=[run.pk])),
        "run": run,
        "values": values,
        "default": default,
        "aggregators": [
            {"name": how, "label": AGGREGATOR_LABELS.get(how, how), **summary}
            for how, summary in (values.get("aggregators") or {}).items()
            if summary.get("n")
        ],
        "curve_rows": list(
            zip(*(default.get("curve", {}).get(k, []) for k in CURVE_COLUMNS), strict=False)
        ),
        "plot": mark_safe(risk_coverage_svg(values)) if default.get("n") else "",
    }


def calibration_card(run: ExtractionRun) -> dict[str, Any]:
    row = _row(run_key(CALIBRATION, run.pk))
    values = (row.values if row else None) or {}
    state = card_state(row, has_data=bool(values.get("n_items")))
    overall = values.get("all") or {}
    return {
        **card_base(row, state, reverse("metrics:calibration_card", args=[run.pk])),
        "run": run,
        "values": values,
        "all": overall,
        "heldout": values.get("heldout") or {},
        "by_type": values.get("by_type") or {},
        "plot": mark_safe(reliability_svg(overall["reliability"])) if overall.get("n") else "",
    }


def interauditor_card() -> dict[str, Any]:
    row = _row(INTERAUDITOR_KEY)
    values = (row.values if row else None) or {}
    overall = values.get("overall") or {}
    blind = values.get("blind") or {}
    has_data = bool(
        overall.get("n_comparisons") or values.get("auditors") or blind.get("n_statements")
    )
    state = card_state(row, has_data=has_data)
    return {
        **card_base(row, state, reverse("metrics:interauditor_card")),
        "values": values,
        "overall": overall,
        "pairs": values.get("pairs") or [],
        "auditors": values.get("auditors") or [],
        "blind": blind,
        "disagreements": values.get("disagreements") or [],
    }
