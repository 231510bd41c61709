"""Review-savings helpers: evalsite's (cluster, item, confidence, loss) rows on the same curve."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.families.review_savings import (
    OperatingPoint,
    ReviewItem,
    compute_review_augrc,
    compute_review_aurc,
    compute_review_aurc_achievable,
    compute_review_aurc_optimal,
    compute_review_curve,
    compute_review_eaurc,
    coverage_at_risk,
    operating_point_at_risk,
    review_summary,
)
from metrics.families.selective.bootstrap import bootstrap_by_participant

# Five statements; 0.8 is a plateau. Working points (k, losses so far):
#   0.9: k=1, 0   -> coverage 0.2, risk 0
#   0.8: k=3, 1   -> coverage 0.6, risk 1/3
#   0.5: k=4, 2   -> coverage 0.8, risk 1/2
#   0.3: k=5, 2   -> coverage 1.0, risk 2/5
ROWS = [
    ("doc-1", "s1", 0.9, 0.0),
    ("doc-1", "s2", 0.8, 0.0),
    ("doc-2", "s3", 0.8, 1.0),
    ("doc-2", "s4", 0.5, 1.0),
    ("doc-3", "s5", 0.3, 0.0),
]


def test_curve_of_review_rows() -> None:
    curve = compute_review_curve(ROWS)
    assert curve.coverage == pytest.approx((0.2, 0.6, 0.8, 1.0))
    assert curve.selective_risk == pytest.approx((0.0, 1 / 3, 0.5, 0.4))
    assert curve.threshold == (0.9, 0.8, 0.5, 0.3)


def test_review_areas() -> None:
    # AURC: 0.2*0 + 0.4*(0+1/3)/2 + 0.2*(1/3+1/2)/2 + 0.2*(1/2+2/5)/2 = 1/15 + 1/12 + 0.09
    assert compute_review_aurc(ROWS) == pytest.approx(1 / 15 + 1 / 12 + 0.09)
    # Generalized risk 0, 0.2, 0.4, 0.4:
    # 0.2*0/2 + 0.4*(0+0.2)/2 + 0.2*(0.2+0.4)/2 + 0.2*0.4 = 0.04 + 0.06 + 0.08
    assert compute_review_augrc(ROWS) == pytest.approx(0.18)


def test_review_excess_over_the_oracle() -> None:
    # Oracle: losses 0, 0, 0, 1, 1 -> risk 0, 0, 0, 1/4, 2/5 at coverage 0.2 .. 1.0
    # AURC_opt = 0.2*(0+1/4)/2 + 0.2*(1/4+2/5)/2 = 0.025 + 0.065
    assert compute_review_aurc_optimal(ROWS) == pytest.approx(0.09)
    assert compute_review_eaurc(ROWS) == pytest.approx(1 / 15 + 1 / 12)


def test_review_achievable_drops_points_above_the_hull() -> None:
    # (0.6, 1/3) and (0.8, 1/2) lie above the chord from (0.2, 0) to (1.0, 0.4).
    # (0,0) -> (0.2,0) -> (1,0.4): 0.8 * 0.4 / 2
    assert compute_review_aurc_achievable(ROWS) == pytest.approx(0.16)


@pytest.mark.parametrize(
    ("max_risk", "coverage"),
    [
        (0.0, 0.2),
        (0.05, 0.2),
        (0.35, 0.6),  # 1/3 qualifies, 1/2 and 2/5 do not
        (0.4, 1.0),  # the last point's risk is exactly 2/5
        (0.5, 1.0),
    ],
)
def test_coverage_at_risk_is_the_largest_qualifying_coverage(
    max_risk: float, coverage: float
) -> None:
    assert coverage_at_risk(ROWS, max_risk=max_risk) == pytest.approx(coverage)


def test_no_qualifying_working_point_means_nothing_skips_review() -> None:
    rows = [("a", 1, 0.9, 1.0), ("a", 2, 0.1, 0.0)]  # the most confident one is wrong
    assert coverage_at_risk(rows, max_risk=0.4) == 0.0
    assert operating_point_at_risk(rows, max_risk=0.4) is None
    assert coverage_at_risk(rows, max_risk=0.5) == 1.0


def test_operating_point_gives_the_threshold_to_use() -> None:
    point = operating_point_at_risk(ROWS, max_risk=0.35)
    assert point == OperatingPoint(coverage=0.6, selective_risk=pytest.approx(1 / 3), threshold=0.8)


def test_rows_are_validated() -> None:
    with pytest.raises(ValueError, match="loss"):
        compute_review_curve([("a", 1, 0.5, 1.5)])
    with pytest.raises(ValueError, match="NaN"):
        compute_review_curve([("a", 1, float("nan"), 0.0)])
    with pytest.raises(ValueError, match="max_risk"):
        coverage_at_risk(ROWS, max_risk=1.5)


def test_empty_rows() -> None:
    assert compute_review_aurc([]) == 0.0
    assert coverage_at_risk([], max_risk=0.1) == 0.0


def test_review_items_bootstrap_over_clusters() -> None:
    items = [ReviewItem(*row) for row in ROWS]
    result = bootstrap_by_participant(items, metric_fn=compute_review_aurc, n_resamples=200, seed=1)
    assert result.point_estimate == pytest.approx(compute_review_aurc(ROWS))
    assert result.ci95 is not None and result.ci95[0] <= result.ci95[1]
    # Whole documents are resampled: a resample without doc-2 (the only one with errors) has
    # AURC 0, and those are well over 2.5% of the draws, so the lower bound is 0.
    rng = np.random.RandomState(1)
    without_doc_2 = sum(bool((rng.randint(0, 3, size=3) != 1).all()) for _ in range(200))
    assert without_doc_2 / 200 > 0.025
    assert result.ci95[0] == 0.0


def test_summary_is_json_ready() -> None:
    summary = review_summary(ROWS, max_risk=0.35)
    assert summary["items"] == 5
    assert summary["coverage_at_risk"] == pytest.approx(0.6)
    assert summary["aurc"] == pytest.approx(compute_review_aurc(ROWS))
