"""Participant-cluster bootstrap: determinism, hand-checked replicates, degenerate cases,
paired deltas, and the vectorised path against the plain loop (bit-for-bit)."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.families.selective import ItemPrediction, compute_cmax
from metrics.families.selective.bootstrap import (
    SelectiveMetric,
    bootstrap_by_participant,
    bootstrap_metrics_by_participant,
    bootstrap_replicates,
    paired_bootstrap_delta_by_participant,
    paired_bootstrap_deltas_by_participant,
)


def participant(pid: int, predicted: int, total: int = 8, confidence: float = 0.5) -> list:
    """`total` items, the first `predicted` of them predicted (and correct)."""
    return [
        ItemPrediction(pid, i, 1 if i < predicted else None, 1, confidence) for i in range(total)
    ]


def draws(n_participants: int, n_resamples: int, seed: int) -> np.ndarray:
    """The participant indices each resample draws, as the spec defines them."""
    rng = np.random.RandomState(seed)
    return np.array(
        [rng.randint(0, n_participants, size=n_participants) for _ in range(n_resamples)]
    )


def random_items(seed: int, *, participants: int = 12, discrete: bool = False) -> list:
    """Items with abstentions, ties across participants (when discrete) and varied errors."""
    rng = np.random.RandomState(seed)
    items = []
    for pid in range(participants):
        for index in range(8):
            gt = int(rng.randint(0, 4))
            pred = None if rng.uniform() < 0.3 else int(np.clip(gt + rng.randint(-2, 3), 0, 3))
            confidence = float(rng.randint(0, 4)) if discrete else float(rng.uniform())
            items.append(ItemPrediction(100 + pid, index, pred, gt, confidence))
    return items


# --------------------------------------------------------------------------- single metric


def test_replicates_follow_the_seeded_participant_draws() -> None:
    # Participants predict 8, 0 and 4 of 8 items: a resample's Cmax is (8a + 4c) / 24 where
    # a, c count how often participants 1 and 3 were drawn.
    items = participant(1, 8) + participant(2, 0) + participant(3, 4)
    drawn = draws(3, 200, seed=7)
    expected = ((drawn == 0).sum(axis=1) * 8 + (drawn == 2).sum(axis=1) * 4) / 24
    for vectorise in (True, False):
        replicates = bootstrap_replicates(
            items, metric_fn=SelectiveMetric.cmax(), n_resamples=200, seed=7, vectorise=vectorise
        )
        np.testing.assert_allclose(replicates, expected, rtol=0, atol=1e-15)


def test_summary_is_percentile_ci_and_sample_std_of_replicates() -> None:
    items = participant(1, 8) + participant(2, 0) + participant(3, 4)
    drawn = draws(3, 500, seed=11)
    expected = ((drawn == 0).sum(axis=1) * 8 + (drawn == 2).sum(axis=1) * 4) / 24
    result = bootstrap_by_participant(
        items, metric_fn=SelectiveMetric.cmax(), n_resamples=500, seed=11
    )
    assert result.point_estimate == pytest.approx(12 / 24)
    assert result.ci95 == pytest.approx(tuple(np.percentile(expected, [2.5, 97.5])))
    assert result.std_error == pytest.approx(np.std(expected, ddof=1))
    assert result.drop_rate == 0.0
    assert result.n_resamples == 500


def test_same_seed_same_result_other_seed_other_result() -> None:
    items = random_items(1)
    metric = SelectiveMetric.aurc(loss="abs")
    first = bootstrap_by_participant(items, metric_fn=metric, n_resamples=300, seed=5)
    again = bootstrap_by_participant(items, metric_fn=metric, n_resamples=300, seed=5)
    other = bootstrap_by_participant(items, metric_fn=metric, n_resamples=300, seed=6)
    assert first == again
    assert first.ci95 != other.ci95


def test_undefined_replicates_are_dropped_and_counted() -> None:
    # Participant 1 predicts everything, participant 2 half: risk at coverage 0.9 is only
    # defined when participant 1 is drawn twice (Cmax 1); otherwise Cmax <= 3/4.
    items = participant(1, 8) + participant(2, 4)
    drawn = draws(2, 400, seed=3)
    defined = (drawn == 0).all(axis=1)
    metric = SelectiveMetric.risk_at_coverage(target_coverage=0.9, loss="abs")
    result = bootstrap_by_participant(items, metric_fn=metric, n_resamples=400, seed=3)
    assert result.point_estimate is None  # Cmax of the data is 3/4
    assert result.drop_rate == pytest.approx(1 - defined.mean())
    assert result.ci95 == (0.0, 0.0)  # every defined replicate is 0 (all correct)


def test_metric_never_defined_gives_no_interval() -> None:
    items = participant(1, 4) + participant(2, 6)
    metric = SelectiveMetric.risk_at_coverage(target_coverage=1.0, loss="abs")
    result = bootstrap_by_participant(items, metric_fn=metric, n_resamples=50, seed=1)
    assert result.point_estimate is None
    assert result.ci95 is None
    assert result.drop_rate == 1.0
    assert result.std_error == 0.0


@pytest.mark.parametrize("n_resamples", [0, 1])
def test_fewer_than_two_replicates_degenerate_to_the_point_estimate(n_resamples: int) -> None:
    items = random_items(2)
    metric = SelectiveMetric.aurc(loss="abs")
    result = bootstrap_by_participant(items, metric_fn=metric, n_resamples=n_resamples, seed=1)
    point = metric(items)
    assert result.point_estimate == point
    assert result.ci95 == (point, point)
    assert result.std_error == 0.0
    assert result.drop_rate == 0.0


def test_single_participant_has_a_zero_width_interval() -> None:
    items = [item for item in random_items(3) if item.participant_id == 100]
    result = bootstrap_by_participant(
        items, metric_fn=SelectiveMetric.aurc(loss="abs"), n_resamples=100, seed=1
    )
    assert result.ci95 == (result.point_estimate, result.point_estimate)
    assert result.std_error == 0.0


def test_no_items_gives_no_estimate() -> None:
    result = bootstrap_by_participant(
        [], metric_fn=SelectiveMetric.aurc(loss="abs"), n_resamples=20, seed=1
    )
    assert result.point_estimate is None
    assert result.ci95 is None
    assert result.drop_rate == 1.0


def test_generic_metric_function_is_bootstrapped_by_the_loop() -> None:
    # Mean ground truth: participant 1 has gt 1 everywhere, participant 2 gt 3.
    items = [ItemPrediction(1, i, 1, 1, 0.5) for i in range(4)]
    items += [ItemPrediction(2, i, 3, 3, 0.5) for i in range(4)]
    drawn = draws(2, 100, seed=9)
    expected = 1 + 2 * (drawn == 1).mean(axis=1)
    replicates = bootstrap_replicates(
        items, metric_fn=lambda xs: float(np.mean([x.gt for x in xs])), n_resamples=100, seed=9
    )
    np.testing.assert_allclose(replicates, expected)


def test_negative_or_fractional_resample_counts_are_errors() -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_by_participant(random_items(1), metric_fn=compute_cmax, n_resamples=-1, seed=1)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_by_participant(random_items(1), metric_fn=compute_cmax, n_resamples=2.5, seed=1)


# --------------------------------------------------------------------------- vectorised == loop

ALL_METRICS = [
    SelectiveMetric.cmax(),
    *(SelectiveMetric.aurc(loss=loss) for loss in ("abs", "abs_norm")),
    *(SelectiveMetric.augrc(loss=loss) for loss in ("abs", "abs_norm")),
    *(
        SelectiveMetric.aurc_at_coverage(max_coverage=c, loss=loss)
        for c in (0.05, 0.3, 0.5, 1.0)
        for loss in ("abs", "abs_norm")
    ),
    *(SelectiveMetric.augrc_at_coverage(max_coverage=c, loss="abs_norm") for c in (0.2, 0.6)),
    *(
        SelectiveMetric.risk_at_coverage(target_coverage=c, loss=loss)
        for c in (0.1, 0.5, 0.7, 0.9)
        for loss in ("abs", "abs_norm")
    ),
]


@pytest.mark.parametrize("metric", ALL_METRICS, ids=lambda m: f"{m.kind}-{m.loss}-{m.coverage}")
@pytest.mark.parametrize("discrete", [False, True], ids=["continuous", "ties"])
def test_vectorised_replicates_equal_the_loop_bit_for_bit(
    metric: SelectiveMetric, discrete: bool
) -> None:
    items = random_items(4, discrete=discrete)
    fast = bootstrap_replicates(items, metric_fn=metric, n_resamples=150, seed=13)
    slow = bootstrap_replicates(items, metric_fn=metric, n_resamples=150, seed=13, vectorise=False)
    assert np.array_equal(fast, slow, equal_nan=True)


def test_vectorised_equals_loop_with_a_participant_who_always_abstains() -> None:
    items = random_items(5, participants=4)
    items += [ItemPrediction(999, i, None, 2, 0.9) for i in range(8)]
    for metric in ALL_METRICS:
        fast = bootstrap_replicates(items, metric_fn=metric, n_resamples=200, seed=2)
        slow = bootstrap_replicates(
            items, metric_fn=metric, n_resamples=200, seed=2, vectorise=False
        )
        assert np.array_equal(fast, slow, equal_nan=True), metric


def test_vectorised_handles_data_without_any_prediction() -> None:
    items = participant(1, 0) + participant(2, 0)
    for metric in ALL_METRICS:
        fast = bootstrap_replicates(items, metric_fn=metric, n_resamples=20, seed=2)
        slow = bootstrap_replicates(
            items, metric_fn=metric, n_resamples=20, seed=2, vectorise=False
        )
        assert np.array_equal(fast, slow, equal_nan=True), metric


def test_vectorised_result_equals_loop_result() -> None:
    items = random_items(6)
    metric = SelectiveMetric.aurc(loss="abs_norm")
    fast = bootstrap_by_participant(items, metric_fn=metric, n_resamples=400, seed=42)
    slow = bootstrap_by_participant(
        items, metric_fn=metric, n_resamples=400, seed=42, vectorise=False
    )
    assert fast == slow


def test_many_metrics_share_draws_and_match_single_calls() -> None:
    items = random_items(7)
    metrics = {f"m{i}": metric for i, metric in enumerate(ALL_METRICS)}
    together = bootstrap_metrics_by_participant(items, metrics=metrics, n_resamples=120, seed=8)
    for name, metric in metrics.items():
        alone = bootstrap_by_participant(items, metric_fn=metric, n_resamples=120, seed=8)
        assert together[name] == alone


def test_selective_metric_validates_its_coverage() -> None:
    with pytest.raises(ValueError, match="coverage"):
        SelectiveMetric("aurc_at_coverage", "abs", None)
    with pytest.raises(ValueError, match="coverage"):
        SelectiveMetric.risk_at_coverage(target_coverage=0.0, loss="abs")
    with pytest.raises(ValueError, match="loss"):
        SelectiveMetric.aurc(loss="l2")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- paired deltas


def test_paired_delta_uses_only_shared_participants_and_the_same_draws() -> None:
    # Left: participants 1, 2, 3; right: 2, 3, 4. Shared: 2 and 3.
    left = participant(1, 8) + participant(2, 8) + participant(3, 2)
    right = participant(2, 4) + participant(3, 6) + participant(4, 0)
    result = paired_bootstrap_delta_by_participant(
        left, right, metric_fn=SelectiveMetric.cmax(), n_resamples=300, seed=21
    )
    # Over participants 2 and 3: left Cmax (8 + 2)/16, right (4 + 6)/16.
    assert result.point_estimate_left == pytest.approx(10 / 16)
    assert result.point_estimate_right == pytest.approx(10 / 16)
    assert result.delta_point_estimate == pytest.approx(0.0)
    # Drawing participant 2 (index 0) a times and 3 (index 1) 2 - a times:
    # delta = (4a + 6(2 - a) - 8a - 2(2 - a)) / 16 = (8 - 8a) / 16.
    a = (draws(2, 300, seed=21) == 0).sum(axis=1)
    deltas = (8 - 8 * a) / 16
    assert result.ci95 == pytest.approx(tuple(np.percentile(deltas, [2.5, 97.5])))
    assert result.std_error == pytest.approx(np.std(deltas, ddof=1))


def test_paired_delta_of_identical_sides_is_exactly_zero() -> None:
    items = random_items(8)
    result = paired_bootstrap_delta_by_participant(
        items, items, metric_fn=SelectiveMetric.aurc(loss="abs"), n_resamples=200, seed=4
    )
    assert result.delta_point_estimate == 0.0
    assert result.ci95 == (0.0, 0.0)


def test_paired_delta_is_right_minus_left() -> None:
    left = participant(1, 8) + participant(2, 8)
    right = participant(1, 4) + participant(2, 4)
    result = paired_bootstrap_delta_by_participant(
        left, right, metric_fn=SelectiveMetric.cmax(), n_resamples=50, seed=1
    )
    assert result.delta_point_estimate == pytest.approx(-0.5)
    assert result.ci95 == pytest.approx((-0.5, -0.5))


def test_paired_vectorised_equals_loop() -> None:
    left, right = random_items(9), random_items(10, discrete=True)
    right = [item for item in right if item.participant_id != 101]  # partial overlap
    for metric in ALL_METRICS:
        fast = paired_bootstrap_delta_by_participant(
            left, right, metric_fn=metric, n_resamples=120, seed=3
        )
        slow = paired_bootstrap_delta_by_participant(
            left, right, metric_fn=metric, n_resamples=120, seed=3, vectorise=False
        )
        assert fast == slow, metric


def test_paired_many_metrics_match_single_calls() -> None:
    left, right = random_items(11), random_items(12)
    metrics = {f"m{i}": metric for i, metric in enumerate(ALL_METRICS)}
    together = paired_bootstrap_deltas_by_participant(
        left, right, metrics=metrics, n_resamples=80, seed=5
    )
    for name, metric in metrics.items():
        alone = paired_bootstrap_delta_by_participant(
            left, right, metric_fn=metric, n_resamples=80, seed=5
        )
        assert together[name] == alone


def test_paired_without_shared_participants_gives_no_estimate() -> None:
    result = paired_bootstrap_delta_by_participant(
        participant(1, 8),
        participant(2, 8),
        metric_fn=SelectiveMetric.cmax(),
        n_resamples=10,
        seed=1,
    )
    assert result.delta_point_estimate is None
    assert result.ci95 is None
    assert result.drop_rate == 1.0
