"""Run comparison: the discussion-cluster bootstrap of pooled F1 on a hand-computed example,
against a plain loop, and end to end from stored statement rows to the page and its CSV."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from metrics.engine.comparison import comparison_compute, side_get, side_of_run
from metrics.families.extraction.bootstrap import (
    COLUMNS,
    bootstrap_f1,
    paired_bootstrap_f1,
    pooled_f1,
)
from metrics.models import MetricResult
from tests.factories import ExtractionRunFactory
from tests.metrics.dashboard_rows import discussion_with_statements, statement_row

# Two discussions, A and B (sorted ids), as per-discussion summed counts.
#   left:  A people 2/0/0, pair bonds 1/0/1;  B people 0/1/1 (tp/fp/fn)
#   right: A people 2/0/0, pair bonds 2/0/0;  B people 1/0/0
# No events anywhere. Seed 3, 6 resamples draw (A,A) (B,B) (A,A) (A,B) (B,B) (A,B), i.e.
# discussion counts (2,0) (0,2) (2,0) (1,1) (0,2) (1,1).
SEED, R = 3, 6


def table(rows: list[dict[str, int]]) -> np.ndarray:
    return np.array([[row.get(c, 0) for c in COLUMNS] for row in rows], dtype=float)


LEFT = table(
    [{"people_tp": 2, "pair_bonds_tp": 1, "pair_bonds_fn": 1}, {"people_fp": 1, "people_fn": 1}]
)
RIGHT = table([{"people_tp": 2, "pair_bonds_tp": 2}, {"people_tp": 1}])

# Replicates by hand (F1 = 2TP / (2TP + FP + FN) of each resample's summed counts):
# left people:  (2,0) 8/8=1   (0,2) 0/4=0   (1,1) 4/6
LEFT_PEOPLE = [1, 0, 1, 2 / 3, 0, 2 / 3]
# left overall: (2,0) tp 6 fn 2 -> 12/14   (0,2) tp 0 fp 2 fn 2 -> 0   (1,1) tp 3 fp 1 fn 2 -> 6/9
LEFT_OVERALL = [6 / 7, 0, 6 / 7, 2 / 3, 0, 2 / 3]
# right: every resample is perfect; pair bonds undefined (nothing either side) when only B drawn.
DELTA_PEOPLE = [0, 1, 0, 1 / 3, 1, 1 / 3]


def test_draws_are_the_spec_draws() -> None:
    rng = np.random.RandomState(SEED)
    assert rng.randint(0, 2, size=(R, 2)).tolist() == [
        [0, 0],
        [1, 1],
        [0, 0],
        [0, 1],
        [1, 1],
        [0, 1],
    ]


def test_single_run_hand_computed() -> None:
    result = bootstrap_f1(LEFT, n_resamples=R, seed=SEED)
    people, overall = result["people"], result["aggregate"]
    assert people.point_estimate == pytest.approx(2 / 3)
    # sorted replicates 0 0 2/3 2/3 1 1: 2.5th and 97.5th percentiles (linear) are 0 and 1
    assert people.ci95 == pytest.approx((0.0, 1.0))
    assert people.std_error == pytest.approx(np.std(LEFT_PEOPLE, ddof=1))
    assert people.drop_rate == 0.0
    assert overall.point_estimate == pytest.approx(2 / 3)  # tp 3 fp 1 fn 2
    assert overall.ci95 == pytest.approx((0.0, 6 / 7))
    assert overall.std_error == pytest.approx(np.std(LEFT_OVERALL, ddof=1))


def test_undefined_replicates_are_dropped_and_counted() -> None:
    result = bootstrap_f1(LEFT, n_resamples=R, seed=SEED)
    # Pair bonds exist only in A: the two (B,B) resamples have nothing to find, nothing claimed.
    bonds = result["pair_bonds"]
    assert bonds.point_estimate == pytest.approx(2 / 3)  # tp 1 fn 1
    assert bonds.drop_rate == pytest.approx(2 / 6)
    assert bonds.ci95 == pytest.approx((2 / 3, 2 / 3))
    # No events at all: no point estimate, no interval, every replicate dropped.
    events = result["events"]
    assert (events.point_estimate, events.ci95, events.drop_rate) == (None, None, 1.0)


def test_paired_delta_hand_computed() -> None:
    result = paired_bootstrap_f1(LEFT, RIGHT, n_resamples=R, seed=SEED)["people"]
    assert result.left.point_estimate == pytest.approx(2 / 3)
    assert result.right.point_estimate == 1.0
    assert result.right.ci95 == (1.0, 1.0)
    assert result.delta.delta_point_estimate == pytest.approx(1 / 3)
    # sorted deltas 0 0 1/3 1/3 1 1
    assert result.delta.ci95 == pytest.approx((0.0, 1.0))
    assert result.delta.std_error == pytest.approx(np.std(DELTA_PEOPLE, ddof=1))
    bonds = paired_bootstrap_f1(LEFT, RIGHT, n_resamples=R, seed=SEED)["pair_bonds"].delta
    assert bonds.delta_point_estimate == pytest.approx(1 / 3)
    assert bonds.drop_rate == pytest.approx(2 / 6)


def test_paired_sides_equal_their_own_bootstrap() -> None:
    paired = paired_bootstrap_f1(LEFT, RIGHT, n_resamples=50, seed=9)
    alone = bootstrap_f1(LEFT, n_resamples=50, seed=9)
    for figure, result in paired.items():
        assert result.left == alone[figure]


def test_fewer_than_two_valid_replicates_give_a_degenerate_ci() -> None:
    result = bootstrap_f1(LEFT, n_resamples=1, seed=SEED)["people"]
    assert result.ci95 == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert result.std_error == 0.0
    empty = paired_bootstrap_f1(np.empty((0, 9)), np.empty((0, 9)), n_resamples=5, seed=1)
    assert empty["aggregate"].delta.ci95 is None


def test_vectorised_equals_a_plain_loop() -> None:
    rng = np.random.RandomState(0)
    left = rng.randint(0, 4, size=(23, 9)).astype(float)
    right = rng.randint(0, 4, size=(23, 9)).astype(float)
    left[::5, 6:] = 0  # some discussions without pair bonds
    result = paired_bootstrap_f1(left, right, n_resamples=200, seed=11)
    draws = np.random.RandomState(11)
    deltas = []
    for _ in range(200):
        drawn = draws.randint(0, 23, size=23)
        one = pooled_f1(right[drawn].sum(axis=0), "aggregate")
        other = pooled_f1(left[drawn].sum(axis=0), "aggregate")
        deltas.append(float(one - other))
    assert result["aggregate"].delta.ci95 == pytest.approx(
        tuple(np.percentile(deltas, [2.5, 97.5]))
    )
    assert result["aggregate"].delta.std_error == pytest.approx(np.std(deltas, ddof=1))


def test_mismatched_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="same rows"):
        paired_bootstrap_f1(LEFT, RIGHT[:1], n_resamples=5, seed=1)


# --- from stored rows ----------------------------------------------------------------------------


@pytest.fixture
def two_runs(db):
    """The hand example as stored statement rows, split over statements, plus rows that must
    not count: a statement only the left run covers and a result not computed yet."""
    left, right = (
        ExtractionRunFactory(prompt_version="v1"),
        ExtractionRunFactory(prompt_version="v2"),
    )
    _a, (a1, a2, a3) = discussion_with_statements(3)
    b, (b1, b2) = discussion_with_statements(2)
    statement_row(left, a1, people_tp=2)
    statement_row(left, a2, pair_bonds_tp=1, pair_bonds_fn=1, status=MetricResult.Status.STALE)
    statement_row(left, b1, people_fp=1, people_fn=1)
    statement_row(right, a1, people_tp=1)
    statement_row(right, a2, people_tp=1, pair_bonds_tp=2)
    statement_row(right, b1, people_tp=1)
    statement_row(left, a3, people_fn=9)  # right did not extract a3: not compared
    statement_row(left, b2, people_fn=9)
    MetricResult.objects.create(  # right's b2 result not computed yet (placeholder)
        key=f"extraction:statement:r{right.pk}:d{b.pk}:s{b2.pk}",
        family="extraction",
        scope="statement",
        run=right,
        discussion=b,
        statement=b2,
    )
    return left, right


def _figures(values):
    return {f["key"]: f for f in values["figures"]}


def _interval(figure, level=0.95):
    return next(i for i in figure["intervals"] if i["level"] == level)


def test_comparison_from_stored_rows_matches_the_hand_example(two_runs) -> None:
    left, right = two_runs
    values = comparison_compute(
        side_of_run(left), side_of_run(right), None, n_resamples=R, seed=SEED
    )
    assert (values["n_statements"], values["n_discussions"]) == (3, 2)
    assert values["n_updating"] == 1  # left's a2 is stale: its last figures are used
    assert values["method"] == "discussions only"  # one run a side: no run-to-run variation
    figures = _figures(values)
    people = figures["people"]
    assert people["baseline"]["point"] == pytest.approx(2 / 3)
    assert people["delta"] == pytest.approx(1 / 3)
    # the same draws as the single-run bootstrap above: sorted deltas 0 0 1/3 1/3 1 1
    assert (_interval(people)["low"], _interval(people)["high"]) == pytest.approx((0.0, 1.0))
    assert _interval(people)["verdict"] == "within noise"
    assert figures["events"]["baseline"]["point"] is None
    assert figures["exact_match"]["baseline"]["point"] == pytest.approx(1 / 3)


def test_a_configuration_side_takes_every_replicate(two_runs) -> None:
    left, _ = two_runs
    side = side_get(f"c{left.configuration_id}")
    assert side.run_ids == [left.pk]
    with pytest.raises(Exception, match="no configuration"):
        side_get("c999999")
    with pytest.raises(Exception, match="expected a run id"):
        side_get("x1")


def test_compare_page_shows_figures_with_intervals(admin_client, two_runs) -> None:
    left, right = two_runs
    url = reverse("metrics:run_compare")
    response = admin_client.get(url, {"baseline": f"r{left.pk}", "candidate": f"r{right.pk}"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "On <strong>3</strong> statements" in html
    assert "+0.333" in html  # people delta
    assert "[0.000, 1.000]" in html
    assert "<svg" in html and 'data-testid="no-replicates"' in html
    assert "1 statement result being recomputed" in html
    bad = admin_client.get(url, {"baseline": "c0x", "candidate": f"r{right.pk}"})
    assert bad.status_code == 400 and "baseline: expected" in bad.content.decode()
