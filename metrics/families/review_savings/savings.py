"""Review savings: how much of evalsite's own output could skip human review at a given risk.

Input rows are (cluster_id, item_id, confidence, loss) with loss in [0, 1] (for example 1 for
a statement a reviewer rejected, 0 for one accepted, or a graded error). Items are accepted
from the highest confidence down, equal confidences together, exactly as in the selective
prediction curve; every row counts as a prediction (there is no abstention here).

The curve, areas and oracle come from `selective` (one implementation of the curve); this
module only adapts the rows and adds `coverage_at_risk`, which reads a statement such as
"at <= 5% error, 38% of statements could skip review" off the curve.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from metrics.families.selective import (
    RiskCoverageCurve,
    area_under_curve,
    lower_convex_hull,
    oracle_curve_from_losses,
    risk_coverage_curve_from_losses,
)


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One reviewed statement: its cluster (for the cluster bootstrap), id, score and loss."""

    cluster_id: Hashable
    item_id: Hashable
    confidence: float
    loss: float

    def __post_init__(self) -> None:
        if math.isnan(self.confidence):
            raise ValueError(f"item {self.item_id!r}: confidence must not be NaN")
        if not 0.0 <= self.loss <= 1.0:
            raise ValueError(f"item {self.item_id!r}: loss must be in [0, 1], got {self.loss}")

    @property
    def participant_id(self) -> Hashable:
        """The cluster, under the name the participant-cluster bootstrap groups by."""
        return self.cluster_id


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """A working point: accept everything with confidence >= threshold."""

    coverage: float
    selective_risk: float
    threshold: float


ReviewRows = Iterable[ReviewItem | tuple[Hashable, Hashable, float, float]]


def review_items(rows: ReviewRows) -> list[ReviewItem]:
    """ReviewItems from (cluster_id, item_id, confidence, loss) tuples (or ReviewItems)."""
    return [row if isinstance(row, ReviewItem) else ReviewItem(*row) for row in rows]


def compute_review_curve(rows: ReviewRows) -> RiskCoverageCurve:
    """Risk-coverage curve of the rows (coverage = share of rows that skip review)."""
    items = review_items(rows)
    return risk_coverage_curve_from_losses(
        [item.confidence for item in items], [item.loss for item in items], n_total=len(items)
    )


def compute_review_aurc(rows: ReviewRows) -> float:
    return area_under_curve(compute_review_curve(rows), kind="aurc")


def compute_review_augrc(rows: ReviewRows) -> float:
    return area_under_curve(compute_review_curve(rows), kind="augrc")


def _review_oracle_curve(rows: ReviewRows) -> RiskCoverageCurve:
    items = review_items(rows)
    return oracle_curve_from_losses([item.loss for item in items], n_total=len(items))


def compute_review_aurc_optimal(rows: ReviewRows) -> float:
    return area_under_curve(_review_oracle_curve(rows), kind="aurc")


def compute_review_eaurc(rows: ReviewRows) -> float:
    """Excess AURC: how far the confidence ranking is from ranking by loss."""
    items = review_items(rows)
    return compute_review_aurc(items) - compute_review_aurc_optimal(items)


def compute_review_eaugrc(rows: ReviewRows) -> float:
    items = review_items(rows)
    oracle = area_under_curve(_review_oracle_curve(items), kind="augrc")
    return compute_review_augrc(items) - oracle


def compute_review_aurc_achievable(rows: ReviewRows) -> float:
    return area_under_curve(lower_convex_hull(compute_review_curve(rows)), kind="aurc")


def operating_point_at_risk(rows: ReviewRows, *, max_risk: float) -> OperatingPoint | None:
    """The working point with the largest coverage whose selective risk <= max_risk
    (None when even the most confident plateau is riskier)."""
    if not 0.0 <= max_risk <= 1.0:
        raise ValueError(f"max_risk must be in [0, 1], got {max_risk}")
    curve = compute_review_curve(rows)
    best: OperatingPoint | None = None
    points = zip(curve.coverage, curve.selective_risk, curve.threshold, strict=True)
    for coverage, risk, threshold in points:
        if risk <= max_risk:  # coverage grows along the curve, so the last match is largest
            best = OperatingPoint(coverage, risk, threshold)
    return best


def coverage_at_risk(rows: ReviewRows, *, max_risk: float) -> float:
    """Largest coverage whose selective risk <= max_risk; 0.0 when no working point qualifies
    (everything still needs review)."""
    point = operating_point_at_risk(rows, max_risk=max_risk)
    return 0.0 if point is None else point.coverage


def review_summary(rows: Sequence[ReviewItem | tuple], *, max_risk: float) -> dict[str, float]:
    """The headline figures in one JSON-ready dict."""
    items = review_items(rows)
    return {
        "items": len(items),
        "aurc": compute_review_aurc(items),
        "augrc": compute_review_augrc(items),
        "eaurc": compute_review_eaurc(items),
        "max_risk": max_risk,
        "coverage_at_risk": coverage_at_risk(items, max_risk=max_risk),
    }


# What ``metrics.families.review_savings`` exports.
__all__ = [
    "OperatingPoint",
    "ReviewItem",
    "ReviewRows",
    "RiskCoverageCurve",
    "area_under_curve",
    "compute_review_augrc",
    "compute_review_aurc",
    "compute_review_aurc_achievable",
    "compute_review_aurc_optimal",
    "compute_review_curve",
    "compute_review_eaugrc",
    "compute_review_eaurc",
    "coverage_at_risk",
    "lower_convex_hull",
    "operating_point_at_risk",
    "oracle_curve_from_losses",
    "review_items",
    "review_summary",
    "risk_coverage_curve_from_losses",
]
