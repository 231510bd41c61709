"""Review savings: how much of evalsite's own output could skip human review at a given risk.

Everything is in ``savings``; the package exports its public names.
"""

# Imported by the module above from elsewhere in the library; exported here as before.
from metrics.families.selective.curves import (
    RiskCoverageCurve,
    area_under_curve,
    lower_convex_hull,
    oracle_curve_from_losses,
    risk_coverage_curve_from_losses,
)

from .savings import (
    OperatingPoint,
    ReviewItem,
    ReviewRows,
    compute_review_augrc,
    compute_review_aurc,
    compute_review_aurc_achievable,
    compute_review_aurc_optimal,
    compute_review_curve,
    compute_review_eaugrc,
    compute_review_eaurc,
    coverage_at_risk,
    operating_point_at_risk,
    review_items,
    review_summary,
)

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
