"""Review triage: the statement score, the loss, the risk-controlled threshold and the monitor.

The guarantee is checked by simulation: on synthetic statements whose error rate at every
score is known, over many random calibration sets, the true risk of the statements accepted
above the returned threshold exceeds alpha in at most about delta of the draws.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.families.selective.triage import (
    StatementSignals,
    calibrated_scores,
    clopper_pearson_pvalue,
    hoeffding_bentkus_pvalue,
    risk_controlled_threshold,
    risk_monitor,
    statement_loss,
    statement_score,
    statement_signals,
    upper_bound,
)

ALPHA, DELTA = 0.1, 0.1


def _person(name: str, confidence: float | None) -> dict:
    person: dict = {"id": -1, "name": name}
    if confidence is not None:
        person["confidence"] = confidence
    return person


# --- the score and the loss ----------------------------------------------------------------------


def test_signals_summarise_the_item_confidences():
    payload = {"people": [_person("Ann", 0.9), _person("Bob", 0.5)], "events": []}
    signals = statement_signals(payload)
    assert (signals.min, signals.n_items, signals.agreement) == (0.5, 2, None)
    assert signals.mean == pytest.approx(0.7)
    assert signals.weighted == pytest.approx(0.45)  # every extra item lowers it


def test_an_empty_extraction_is_certain_and_an_unscored_one_is_not():
    assert statement_signals({"people": [], "events": []}).min == 1.0
    assert statement_signals({"people": [_person("Ann", None)]}).min == 0.0


def test_disagreeing_runs_lower_the_score():
    payload = {"people": [_person("Ann", 0.9)]}
    same = statement_signals(payload, other={"people": [_person("Ann", 0.8)]})
    other = statement_signals(payload, other={"people": [_person("Zed", 0.8)]})
    assert same.agreement == 1.0 and other.agreement == 0.0
    assert statement_score(same) == pytest.approx(0.9)
    assert statement_score(other) == 0.0
    with pytest.raises(ValueError, match="score kind"):
        statement_score(same, kind="median")


def test_calibrated_scores_never_see_their_own_discussion():
    rng = np.random.default_rng(0)
    signals, acceptable, groups = [], [], []
    for d in range(6):
        for _ in range(20):
            c = float(rng.uniform())
            signals.append(StatementSignals(c, c, c, 1))
            acceptable.append(bool(rng.uniform() < c))
            groups.append(d)
    scores = calibrated_scores(signals, acceptable, groups)
    assert all(0.0 < s < 1.0 for s in scores)
    raw = [s.min for s in signals]
    low, high = raw.index(min(raw)), raw.index(max(raw))
    assert scores[high] > scores[low]  # monotone in the raw confidence here
    # Changing one discussion's labels leaves that discussion's scores as they were.
    flipped = [not a if g == 0 else a for a, g in zip(acceptable, groups, strict=True)]
    again = calibrated_scores(signals, flipped, groups)
    assert again[:20] == scores[:20] and again[20:] != scores[20:]


def test_the_loss_is_one_below_the_acceptability_level():
    assert statement_loss(1.0) == 0 and statement_loss(0.95) == 1 and statement_loss(None) == 0
    assert statement_loss(0.95, acceptable_f1=0.9) == 0
    with pytest.raises(ValueError):
        statement_loss(1.0, acceptable_f1=0.0)


# --- p-values ------------------------------------------------------------------------------------


def test_the_clopper_pearson_tail_is_the_exact_binomial():
    n, k, a = 20, 1, 0.1
    exact = sum(math.comb(n, i) * a**i * (1 - a) ** (n - i) for i in range(k + 1))
    assert clopper_pearson_pvalue(k, n, a) == pytest.approx(exact)
    assert clopper_pearson_pvalue(0, 0, a) == 1.0


def test_hoeffding_bentkus_is_never_below_the_binomial_tail_for_zero_loss():
    assert hoeffding_bentkus_pvalue(0.0, 30, 0.1) == pytest.approx(0.9**30)
    assert hoeffding_bentkus_pvalue(0.5, 30, 0.1) == 1.0


def test_the_upper_bound_is_where_the_test_starts_rejecting():
    bound = upper_bound(0, 45, 0.1, exact=True)
    assert clopper_pearson_pvalue(0, 45, bound) == pytest.approx(0.1, abs=1e-6)
    assert upper_bound(0, 0, 0.1, exact=True) == 1.0


# --- the threshold: edge cases -------------------------------------------------------------------


def test_no_data_accepts_nothing():
    result = risk_controlled_threshold([], [], alpha=ALPHA, delta=DELTA)
    assert (result.threshold, result.coverage, result.n_accepted) == (None, 0.0, 0)


def test_all_correct_accepts_everything_once_there_is_enough_evidence():
    n = 22  # 0.9 ** 22 < 0.1: the smallest all-correct sample that proves risk <= 10%
    result = risk_controlled_threshold(np.linspace(0, 1, n), [0] * n, alpha=ALPHA, delta=DELTA)
    assert result.threshold == 0.0 and result.coverage == 1.0 and result.risk == 0.0
    assert result.bound is not None and result.bound <= ALPHA
    small = risk_controlled_threshold(np.linspace(0, 1, n - 1), [0] * (n - 1), alpha=0.1, delta=0.1)
    assert small.threshold is None  # 21 are not enough: an honest "cannot tell yet"


def test_all_wrong_accepts_nothing():
    result = risk_controlled_threshold(np.linspace(0, 1, 500), [1] * 500, alpha=ALPHA, delta=DELTA)
    assert result.threshold is None and result.bound is None and result.coverage == 0.0


def test_tied_scores_are_accepted_or_refused_together():
    scores = [0.9] * 30 + [0.5] * 30
    losses = [0] * 30 + [0] * 29 + [1]
    result = risk_controlled_threshold(scores, losses, alpha=0.2, delta=0.1)
    assert result.threshold == 0.5 and result.n_accepted == 60
    assert len(result.curve["threshold"]) == 2


def test_the_walk_stops_at_the_first_threshold_it_cannot_reject():
    # Most confident statements are bad: fixed-sequence testing must not skip past them.
    scores = list(range(100, 0, -1))
    losses = [1] * 5 + [0] * 95
    assert risk_controlled_threshold(scores, losses, alpha=ALPHA, delta=DELTA).threshold is None


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="losses"):
        risk_controlled_threshold([0.5], [2.0], alpha=ALPHA, delta=DELTA)
    with pytest.raises(ValueError, match="0 or 1"):
        risk_controlled_threshold([0.5], [0.5], alpha=ALPHA, delta=DELTA)
    with pytest.raises(ValueError, match="alpha"):
        risk_controlled_threshold([0.5], [0], alpha=0.0, delta=DELTA)
    with pytest.raises(ValueError, match="clusters"):
        risk_controlled_threshold([0.5], [0], alpha=ALPHA, delta=DELTA, clusters=[1, 2])
    with pytest.raises(ValueError, match="finite"):
        risk_controlled_threshold([math.nan], [0], alpha=ALPHA, delta=DELTA)


def test_discussions_count_as_one_unit_each():
    scores = np.linspace(0, 1, 200)
    alone = risk_controlled_threshold(scores, [0] * 200, alpha=ALPHA, delta=DELTA)
    clusters = [i // 20 for i in range(200)]  # 10 discussions: too few to prove anything
    grouped = risk_controlled_threshold(
        scores, [0] * 200, alpha=ALPHA, delta=DELTA, clusters=clusters
    )
    assert alone.threshold == 0.0 and grouped.threshold is None and grouped.n_units == 10


# --- the guarantee, by simulation ----------------------------------------------------------------


def _error_rate(score: np.ndarray) -> np.ndarray:
    """The synthetic AI's true chance of an unacceptable extraction at each score."""
    return 0.4 * (1.0 - score) ** 2


def _true_risk(threshold: float | None) -> float:
    """Exact risk of accepting scores >= threshold, scores uniform on [0, 1]."""
    if threshold is None or threshold >= 1.0:
        return 0.0
    return 0.4 * (1.0 - threshold) ** 2 / 3.0  # mean of 0.4 (1 - s)^2 over s in [t, 1]


def _violations(n_draws: int, draw, alpha: float, delta: float) -> tuple[float, float]:
    rng = np.random.default_rng(20211)
    bad = coverage = 0.0
    for _ in range(n_draws):
        scores, losses, clusters = draw(rng)
        result = risk_controlled_threshold(
            scores, losses, alpha=alpha, delta=delta, clusters=clusters
        )
        bad += _true_risk(result.threshold) > alpha
        coverage += result.coverage
    return bad / n_draws, coverage / n_draws


def test_the_guarantee_holds_on_independent_statements():
    def draw(rng):
        scores = rng.uniform(size=400)
        return scores, (rng.uniform(size=400) < _error_rate(scores)).astype(float), None

    rate, coverage = _violations(300, draw, alpha=0.05, delta=DELTA)
    assert rate <= DELTA + 0.03  # three standard errors of 300 draws above delta
    assert coverage > 0.3  # and the threshold is not vacuous


def test_the_guarantee_holds_with_correlated_discussions():
    """Errors share a per-discussion effect; the risk is still the statement-level risk the
    score implies on average, and the discussion-level test keeps it."""

    def draw(rng):
        n_disc = 120
        sizes = rng.integers(1, 9, size=n_disc)
        clusters = np.repeat(np.arange(n_disc), sizes)
        scores = rng.uniform(size=clusters.size)
        effect = rng.choice([0.0, 2.0], size=n_disc, p=[0.5, 0.5])[clusters]  # mean 1
        losses = (rng.uniform(size=clusters.size) < _error_rate(scores) * effect).astype(float)
        return scores, losses, clusters.tolist()

    rate, coverage = _violations(200, draw, alpha=0.05, delta=DELTA)
    assert rate <= DELTA + 0.03
    assert coverage > 0.1


def test_realised_risk_on_held_out_discussions_rarely_exceeds_alpha():
    """The issue's statement of the guarantee: split a pool of discussions at random into a
    calibration part and a large test part; the test part's realised risk above the threshold
    exceeds alpha in about delta of the splits at most."""
    rng = np.random.default_rng(7)
    n_disc = 3000
    sizes = rng.integers(1, 6, size=n_disc)
    clusters = np.repeat(np.arange(n_disc), sizes)
    scores = rng.uniform(size=clusters.size)
    losses = (rng.uniform(size=clusters.size) < _error_rate(scores)).astype(float)
    exceeded = 0
    splits = 200
    for _ in range(splits):
        calibration = np.isin(clusters, rng.choice(n_disc, size=150, replace=False))
        result = risk_controlled_threshold(
            scores[calibration],
            losses[calibration],
            alpha=0.05,
            delta=DELTA,
            clusters=clusters[calibration].tolist(),
        )
        if result.threshold is None:
            continue
        accepted = ~calibration & (scores >= result.threshold)
        exceeded += losses[accepted].mean() > 0.05
    assert exceeded / splits <= DELTA + 0.03


# --- the monitor ---------------------------------------------------------------------------------


def test_the_monitor_stays_quiet_on_a_good_run():
    state = risk_monitor([0] * 50, alpha=0.05, delta=0.1)
    assert not state.tripped and state.e_values[-1] < 1.0 and state.n == 50


def test_the_monitor_trips_on_repeated_errors_and_says_when():
    state = risk_monitor([0, 1, 1, 0], alpha=0.05, delta=0.1)
    assert state.tripped_at == 2 and state.n_unacceptable == 2
    assert state.to_dict()["tripped"] and state.e_values[2] >= state.level


def test_the_monitor_false_alarm_rate_is_at_most_delta():
    rng = np.random.default_rng(3)
    runs = rng.uniform(size=(2000, 100)) < 0.05  # risk exactly alpha: the worst null case
    trips = sum(risk_monitor(run, alpha=0.05, delta=0.1).tripped for run in runs.astype(float))
    assert trips / 2000 <= 0.1 + 0.02


def test_the_monitor_catches_a_bad_run_quickly():
    rng = np.random.default_rng(4)
    runs = (rng.uniform(size=(200, 60)) < 0.3).astype(float)  # risk 30% against alpha 5%
    assert sum(risk_monitor(run, alpha=0.05, delta=0.1).tripped for run in runs) >= 190


def test_the_simulation_catches_a_threshold_without_a_guarantee():
    """A control: reading the threshold off the calibration curve (observed risk <= alpha, no
    bound) breaks the guarantee in about half the draws, so the simulation above can fail."""
    rng = np.random.default_rng(5)
    bad = 0
    for _ in range(100):
        scores = rng.uniform(size=400)
        losses = rng.uniform(size=400) < _error_rate(scores)
        order = np.argsort(-scores)
        running = np.cumsum(losses[order]) / np.arange(1, 401)
        ok = np.flatnonzero(running <= 0.05)
        bad += _true_risk(float(scores[order][ok[-1]]) if ok.size else None) > 0.05
    assert bad / 100 > 0.3
