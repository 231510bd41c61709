"""Selective-prediction definitions on small hand-computed vectors.

Every expected number below is worked out by hand in the comments (trapezoids over the
working points, with the coverage-0 point prepended).
"""

from __future__ import annotations

import pytest

from metrics.families.selective import (
    ItemPrediction,
    compute_augrc,
    compute_augrc_at_coverage,
    compute_augrc_optimal,
    compute_aurc,
    compute_aurc_achievable,
    compute_aurc_at_coverage,
    compute_aurc_optimal,
    compute_cmax,
    compute_eaugrc,
    compute_eaurc,
    compute_risk_at_coverage,
    compute_risk_coverage_curve,
    lower_convex_hull,
    risk_coverage_curve_from_losses,
)


def make_items(
    rows: list[tuple[float, int | None, int]], participant_id: int = 1
) -> list[ItemPrediction]:
    """Items from (confidence, pred, gt) rows."""
    return [
        ItemPrediction(participant_id, index, pred, gt, confidence)
        for index, (confidence, pred, gt) in enumerate(rows)
    ]


# Example A: errors 0, 1, 0, 2 at confidences 0.9, 0.8, 0.8, 0.5 (0.8 is a plateau of two).
# Working points: (k=1, loss 0), (k=3, loss 1), (k=4, loss 3) over N=4
#   coverage 1/4, 3/4, 1; selective 0, 1/3, 3/4; generalized 0, 1/4, 3/4.
EXAMPLE_A = [(0.9, 2, 2), (0.8, 1, 0), (0.8, 3, 3), (0.5, 0, 2)]
# Example B: example A plus two abstentions (N=6).
#   coverage 1/6, 1/2, 2/3; selective 0, 1/3, 3/4; generalized 0, 1/6, 1/2; Cmax 2/3.
EXAMPLE_B = [*EXAMPLE_A, (0.95, None, 1), (0.1, None, 0)]


def test_curve_groups_a_confidence_plateau_into_one_working_point() -> None:
    curve = compute_risk_coverage_curve(make_items(EXAMPLE_A), loss="abs")
    assert curve.coverage == pytest.approx((0.25, 0.75, 1.0))
    assert curve.selective_risk == pytest.approx((0.0, 1 / 3, 0.75))
    assert curve.generalized_risk == pytest.approx((0.0, 0.25, 0.75))
    assert curve.threshold == (0.9, 0.8, 0.5)
    assert curve.cmax == 1.0


def test_abstentions_count_in_the_coverage_denominator() -> None:
    curve = compute_risk_coverage_curve(make_items(EXAMPLE_B), loss="abs")
    assert curve.coverage == pytest.approx((1 / 6, 1 / 2, 2 / 3))
    assert curve.selective_risk == pytest.approx((0.0, 1 / 3, 0.75))
    assert curve.generalized_risk == pytest.approx((0.0, 1 / 6, 1 / 2))
    assert compute_cmax(make_items(EXAMPLE_B)) == pytest.approx(2 / 3)


def test_aurc_and_augrc_without_abstentions() -> None:
    items = make_items(EXAMPLE_A)
    # AURC: risk(0) = 0; 0.25*0 + 0.5*(0+1/3)/2 + 0.25*(1/3+3/4)/2 = 1/12 + 13/96 = 21/96
    assert compute_aurc(items, loss="abs") == pytest.approx(21 / 96)
    # AUGRC: 0 + 0.5*(0+1/4)/2 + 0.25*(1/4+3/4)/2 = 1/16 + 1/8 = 3/16
    assert compute_augrc(items, loss="abs") == pytest.approx(3 / 16)


def test_abs_norm_divides_every_risk_by_three() -> None:
    items = make_items(EXAMPLE_A)
    assert compute_aurc(items, loss="abs_norm") == pytest.approx(21 / 96 / 3)
    assert compute_augrc(items, loss="abs_norm") == pytest.approx(3 / 16 / 3)


def test_aurc_and_augrc_with_abstentions_integrate_only_up_to_cmax() -> None:
    items = make_items(EXAMPLE_B)
    # AURC: (1/3)*(0+1/3)/2 + (1/6)*(1/3+3/4)/2 = 1/18 + 13/144 = 21/144
    assert compute_aurc(items, loss="abs") == pytest.approx(21 / 144)
    # AUGRC: (1/3)*(0+1/6)/2 + (1/6)*(1/6+1/2)/2 = 1/36 + 1/18 = 1/12
    assert compute_augrc(items, loss="abs") == pytest.approx(1 / 12)


def test_aurc_starts_at_the_first_working_points_risk_augrc_at_zero() -> None:
    # Example C: distinct confidences, errors 1, 1, 0, 0 (N=4)
    #   coverage 1/4, 1/2, 3/4, 1; selective 1, 1, 2/3, 1/2; generalized 1/4, 1/2, 1/2, 1/2.
    items = make_items([(0.9, 1, 0), (0.8, 1, 0), (0.7, 0, 0), (0.6, 0, 0)])
    # AURC: risk(0) = 1 -> 0.25*1 + 0.25*1 + 0.25*(1+2/3)/2 + 0.25*(2/3+1/2)/2 = 41/48
    assert compute_aurc(items, loss="abs") == pytest.approx(41 / 48)
    # AUGRC: 0.25*(0+1/4)/2 + 0.25*(1/4+1/2)/2 + 0.25*(1/2) + 0.25*(1/2) = 12/32
    assert compute_augrc(items, loss="abs") == pytest.approx(12 / 32)


def test_single_plateau_is_one_working_point() -> None:
    # Five predictions at one confidence (errors 0,1,2,3,0: mean 6/5) and three abstentions.
    rows = [(0.7, 0, 0), (0.7, 1, 0), (0.7, 2, 0), (0.7, 3, 0), (0.7, 1, 1)]
    items = make_items([*rows, (0.9, None, 0), (0.1, None, 0), (0.7, None, 3)])
    curve = compute_risk_coverage_curve(items, loss="abs")
    assert curve.coverage == pytest.approx((5 / 8,))
    assert curve.selective_risk == pytest.approx((6 / 5,))
    # A flat segment from coverage 0: 5/8 * 6/5 = 3/4
    assert compute_aurc(items, loss="abs") == pytest.approx(0.75)
    # Generalized risk rises from 0 to 6/8: 5/8 * (3/4)/2 = 15/64
    assert compute_augrc(items, loss="abs") == pytest.approx(15 / 64)
    assert compute_risk_at_coverage(items, target_coverage=0.1, loss="abs") == pytest.approx(1.2)


def test_all_correct_has_zero_areas() -> None:
    items = make_items([(0.9, 1, 1), (0.5, 2, 2), (0.2, 0, 0), (0.3, None, 3)])
    assert compute_aurc(items, loss="abs") == 0.0
    assert compute_augrc(items, loss="abs") == 0.0
    assert compute_eaurc(items, loss="abs") == 0.0
    assert compute_risk_at_coverage(items, target_coverage=0.75, loss="abs") == 0.0


def test_all_wrong_has_maximal_risk() -> None:
    # Six predictions off by 3 at distinct confidences, two abstentions: Cmax = 3/4.
    rows = [(1.0 - i / 10, 3, 0) for i in range(6)] + [(0.5, None, 0), (0.5, None, 3)]
    items = make_items(rows)
    # Selective risk is 3 throughout: 3 * 3/4
    assert compute_aurc(items, loss="abs") == pytest.approx(2.25)
    assert compute_aurc(items, loss="abs_norm") == pytest.approx(0.75)
    # Generalized risk = 3 * coverage, a straight line: 3 * (3/4)^2 / 2
    assert compute_augrc(items, loss="abs") == pytest.approx(0.84375)
    # Every ranking is optimal when all losses are equal.
    assert compute_eaurc(items, loss="abs") == pytest.approx(0.0)


@pytest.mark.parametrize("items", [[], make_items([(0.5, None, 1), (0.4, None, 2)])])
def test_no_prediction_gives_empty_curve_and_zero_areas(items: list[ItemPrediction]) -> None:
    curve = compute_risk_coverage_curve(items, loss="abs")
    assert curve.coverage == ()
    assert curve.cmax == 0.0
    assert compute_cmax(items) == 0.0
    assert compute_aurc(items, loss="abs") == 0.0
    assert compute_augrc(items, loss="abs") == 0.0
    assert compute_aurc_at_coverage(items, max_coverage=0.5, loss="abs") == 0.0
    assert compute_aurc_optimal(items, loss="abs") == 0.0
    assert compute_aurc_achievable(items, loss="abs") == 0.0
    assert compute_risk_at_coverage(items, target_coverage=0.1, loss="abs") is None


# --------------------------------------------------------------------------- truncation


def test_truncation_exactly_at_a_working_point() -> None:
    items = make_items(EXAMPLE_A)
    # Up to 3/4: 0.25*0 + 0.5*(0+1/3)/2 = 1/12
    assert compute_aurc_at_coverage(items, max_coverage=0.75, loss="abs") == pytest.approx(1 / 12)
    # Up to 3/4: 0.5*(0+1/4)/2 = 1/16
    assert compute_augrc_at_coverage(items, max_coverage=0.75, loss="abs") == pytest.approx(1 / 16)


def test_truncation_between_working_points_interpolates_linearly() -> None:
    items = make_items(EXAMPLE_A)
    # Selective risk at 1/2 lies halfway from 0 (at 1/4) to 1/3 (at 3/4): 1/6.
    # Area: 0.25*0 + 0.25*(0+1/6)/2 = 1/48
    assert compute_aurc_at_coverage(items, max_coverage=0.5, loss="abs") == pytest.approx(1 / 48)
    # Generalized risk at 1/2: 1/8. Area: 0.25*(0+1/8)/2 = 1/64
    assert compute_augrc_at_coverage(items, max_coverage=0.5, loss="abs") == pytest.approx(1 / 64)


def test_truncation_before_the_first_working_point() -> None:
    # Example C: first working point at 1/4 with selective risk 1 and generalized risk 1/4.
    items = make_items([(0.9, 1, 0), (0.8, 1, 0), (0.7, 0, 0), (0.6, 0, 0)])
    # AURC is flat at risk(0) = 1: 0.1 * 1
    assert compute_aurc_at_coverage(items, max_coverage=0.1, loss="abs") == pytest.approx(0.1)
    # AUGRC rises from 0 to 1/4 over [0, 1/4]: at 0.1 it is 0.1, area 0.1*0.1/2
    assert compute_augrc_at_coverage(items, max_coverage=0.1, loss="abs") == pytest.approx(0.005)


def test_truncation_beyond_cmax_stops_at_cmax() -> None:
    items = make_items(EXAMPLE_B)  # Cmax = 2/3
    full_aurc = compute_aurc(items, loss="abs")
    assert compute_aurc_at_coverage(items, max_coverage=0.9, loss="abs") == pytest.approx(full_aurc)
    assert compute_aurc_at_coverage(items, max_coverage=1.0, loss="abs") == pytest.approx(21 / 144)
    assert compute_augrc_at_coverage(items, max_coverage=0.9, loss="abs") == pytest.approx(1 / 12)


@pytest.mark.parametrize("coverage", [0.0, -0.1, 1.01])
def test_truncation_coverage_outside_zero_one_is_an_error(coverage: float) -> None:
    with pytest.raises(ValueError, match="max_coverage"):
        compute_aurc_at_coverage(make_items(EXAMPLE_A), max_coverage=coverage, loss="abs")


# --------------------------------------------------------------------------- risk at coverage


@pytest.mark.parametrize(
    ("target", "expected"),
    [(0.25, 0.0), (0.26, 1 / 3), (0.5, 1 / 3), (0.75, 1 / 3), (0.76, 0.75), (1.0, 0.75)],
)
def test_risk_at_coverage_is_first_working_point_reaching_it(
    target: float, expected: float
) -> None:
    value = compute_risk_at_coverage(make_items(EXAMPLE_A), target_coverage=target, loss="abs")
    assert value == pytest.approx(expected)


def test_risk_at_coverage_above_cmax_is_none() -> None:
    items = make_items(EXAMPLE_B)  # Cmax = 2/3
    assert compute_risk_at_coverage(items, target_coverage=2 / 3, loss="abs") == pytest.approx(0.75)
    assert compute_risk_at_coverage(items, target_coverage=0.7, loss="abs") is None
    assert compute_risk_at_coverage(items, target_coverage=1.0, loss="abs") is None


@pytest.mark.parametrize("target", [0.0, -0.5, 1.5])
def test_risk_at_coverage_outside_zero_one_is_an_error(target: float) -> None:
    with pytest.raises(ValueError, match="target_coverage"):
        compute_risk_at_coverage(make_items(EXAMPLE_A), target_coverage=target, loss="abs")


def test_unknown_loss_is_an_error() -> None:
    with pytest.raises(ValueError, match="loss"):
        compute_aurc(make_items(EXAMPLE_A), loss="squared")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- oracle and hull


def test_oracle_ranks_by_loss_and_each_item_is_its_own_working_point() -> None:
    items = make_items(EXAMPLE_A)
    # Oracle order: errors 0, 0, 1, 2 -> coverage 1/4..1, selective 0, 0, 1/3, 3/4.
    # AURC_opt: 0 + 0 + 0.25*(0+1/3)/2 + 0.25*(1/3+3/4)/2 = 1/24 + 13/96 = 17/96
    assert compute_aurc_optimal(items, loss="abs") == pytest.approx(17 / 96)
    assert compute_eaurc(items, loss="abs") == pytest.approx(21 / 96 - 17 / 96)
    # Generalized: 0, 0, 1/4, 3/4 -> 0.25*(1/4)/2 + 0.25*(1/4+3/4)/2 = 5/32
    assert compute_augrc_optimal(items, loss="abs") == pytest.approx(5 / 32)
    assert compute_eaugrc(items, loss="abs") == pytest.approx(3 / 16 - 5 / 32)


def test_oracle_keeps_abstentions_abstained() -> None:
    items = make_items(EXAMPLE_B)
    # Oracle over N=6: coverage 1/6..2/3, selective 0, 0, 1/3, 3/4.
    # (1/6)*0 + (1/6)*0 + (1/6)*(1/3)/2 + (1/6)*(1/3+3/4)/2 = 1/36 + 13/144 = 17/144
    assert compute_aurc_optimal(items, loss="abs") == pytest.approx(17 / 144)


def test_perfect_confidence_ranking_has_zero_excess() -> None:
    items = make_items([(0.9, 1, 1), (0.8, 2, 1), (0.7, 3, 1), (0.6, None, 1)])
    assert compute_eaurc(items, loss="abs") == pytest.approx(0.0)
    assert compute_eaugrc(items, loss="abs") == pytest.approx(0.0)


def test_convex_hull_drops_concave_and_collinear_points() -> None:
    # Example C: points (1/4, 1), (1/2, 1), (3/4, 2/3), (1, 1/2). (1/2, 1) lies above the
    # chord, (3/4, 2/3) exactly on the line from (1/4, 1) to (1, 1/2).
    items = make_items([(0.9, 1, 0), (0.8, 1, 0), (0.7, 0, 0), (0.6, 0, 0)])
    hull = lower_convex_hull(compute_risk_coverage_curve(items, loss="abs"))
    assert hull.coverage == pytest.approx((0.25, 1.0))
    assert hull.selective_risk == pytest.approx((1.0, 0.5))
    # (0,1) -> (1/4,1) -> (1,1/2): 0.25*1 + 0.75*(1+1/2)/2 = 13/16
    assert compute_aurc_achievable(items, loss="abs") == pytest.approx(13 / 16)


def test_convex_curve_is_its_own_hull() -> None:
    items = make_items(EXAMPLE_A)
    assert compute_aurc_achievable(items, loss="abs") == pytest.approx(21 / 96)


# --------------------------------------------------------------------------- core on losses


def test_curve_from_precomputed_losses_matches_item_form() -> None:
    curve = risk_coverage_curve_from_losses([0.9, 0.8, 0.8, 0.5], [0, 1, 0, 2], n_total=6)
    assert curve == compute_risk_coverage_curve(make_items(EXAMPLE_B), loss="abs")


def test_curve_rejects_nan_confidence_and_negative_loss() -> None:
    with pytest.raises(ValueError, match="NaN"):
        risk_coverage_curve_from_losses([float("nan")], [0.0], n_total=1)
    with pytest.raises(ValueError, match="non-negative"):
        risk_coverage_curve_from_losses([0.5], [-1.0], n_total=1)
    with pytest.raises(ValueError, match="n_total"):
        risk_coverage_curve_from_losses([0.5, 0.4], [0.0, 1.0], n_total=1)
