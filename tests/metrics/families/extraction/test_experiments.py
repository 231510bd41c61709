"""Comparing configurations with replicates: simulations with known truth, figures against the
library's definitions, and the bootstrap's own rules. No database."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.families.extraction import calculate_statement_f1, macro_f1_from_confusion
from metrics.families.extraction.aggregate import statement_contribution
from metrics.families.extraction.experiments import (
    BETTER,
    DISCUSSIONS_AND_REPLICATES,
    DISCUSSIONS_ONLY,
    NOISE,
    WORSE,
    Layout,
    compare_configurations,
    configuration_intervals,
    figure_values,
    layout_for,
    sarf_column,
)
from metrics.families.extraction.results import COUNT_FIELDS

PLAIN = Layout()
FIGURES = ("aggregate", "people", "pair_bonds")
RECALL = np.array([1.5, 0.5, 0.8])  # logit of each type's recall: people, events, pair bonds
FALSE_CLAIMS = np.array([0.6, 1.2, 0.4])  # spurious items per discussion


def world(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Ground-truth items per discussion and type, and how hard each discussion is."""
    truth = np.stack([rng.integers(2, 9, n), rng.integers(1, 10, n), rng.integers(0, 5, n)], 1)
    return truth, rng.normal(0, 0.7, n)


def run(
    rng: np.random.Generator,
    truth: np.ndarray,
    hardness: np.ndarray,
    *,
    run_effect: float,
    drop_bonds: bool = False,
) -> np.ndarray:
    """One replicate's (D, columns) table. A run has its own shift on every type (what makes
    runs of one configuration differ as a whole), then every item is found or not by chance."""
    shift = rng.normal(0, run_effect, 3)
    found = 1 / (1 + np.exp(-(RECALL + hardness[:, None] + shift)))
    tp = rng.binomial(truth, found)
    fp = rng.poisson(FALSE_CLAIMS * np.exp(-0.5 * hardness[:, None] - shift))
    if drop_bonds:  # the candidate leaves out half the pair bonds it would have given
        tp[:, 2], fp[:, 2] = rng.binomial(tp[:, 2], 0.5), rng.binomial(fp[:, 2], 0.5)
    counts = np.stack([tp, fp, truth - tp], 2).reshape(len(truth), 9)
    table = np.zeros((len(truth), len(PLAIN.columns)))
    table[:, :9] = counts
    return table


def simulate(seed: int, *, run_effect: float = 0.15, drop_bonds: bool = False, pooled=False):
    """Baseline and candidate, three replicates each, of one configuration (or the candidate
    with half its bonds dropped). ``pooled``: each side's replicates summed into one run, as a
    comparison that ignores replicate variation sees them."""
    rng = np.random.default_rng(seed)
    truth, hardness = world(rng, 40)
    base = [run(rng, truth, hardness, run_effect=run_effect) for _ in range(3)]
    cand = [
        run(rng, truth, hardness, run_effect=run_effect, drop_bonds=drop_bonds) for _ in range(3)
    ]
    if pooled:
        base, cand = [sum(base)], [sum(cand)]
    return compare_configurations(
        base, cand, layout=PLAIN, n_resamples=300, seed=seed, figures=FIGURES, levels=(0.95,)
    )


def verdicts(results, figure: str) -> list[str]:
    return [r.figures[figure].intervals[0].verdict for r in results]


PAIRS = 500


def test_replicates_of_one_configuration_are_rarely_called_worse() -> None:
    results = [simulate(seed) for seed in range(PAIRS)]
    for figure in FIGURES:
        assert verdicts(results, figure).count(WORSE) <= 0.05 * PAIRS, figure
    assert results[0].method == DISCUSSIONS_AND_REPLICATES


def test_ignoring_replicate_variation_would_call_them_worse_too_often() -> None:
    """The simulated runs do vary as a whole: the same pairs compared as two single runs
    (replicates pooled, run-to-run variation ignored) are called worse far too often, so the
    test above can fail."""
    results = [simulate(seed, pooled=True) for seed in range(PAIRS)]
    assert results[0].method == DISCUSSIONS_ONLY
    assert verdicts(results, "aggregate").count(WORSE) > 0.05 * PAIRS


def test_half_the_bonds_dropped_is_worse_on_bonds_and_not_on_people() -> None:
    results = [simulate(seed, drop_bonds=True) for seed in range(PAIRS)]
    assert verdicts(results, "pair_bonds").count(WORSE) >= 0.9 * PAIRS
    assert verdicts(results, "people").count(NOISE) >= 0.9 * PAIRS


# --- figures -------------------------------------------------------------------------------------


def test_figures_agree_with_the_statement_definitions() -> None:
    ai = {
        "people": [{"id": -1, "name": "Ann"}, {"id": -2, "name": "Bob"}],
        "events": [
            {"id": -3, "kind": "shift", "person": -1, "description": "drank", "anxiety": "up"}
        ],
        "pair_bonds": [{"id": -4, "person_a": -1, "person_b": -2}],
    }
    gt = {
        "people": [{"id": 1, "name": "Ann"}, {"id": 2, "name": "Carl"}],
        "events": [
            {"id": 3, "kind": "shift", "person": 1, "description": "drank", "anxiety": "same"}
        ],
    }
    metrics = calculate_statement_f1(ai, gt)
    contribution = statement_contribution(metrics)
    layout = layout_for([contribution["sarf"]])
    row = np.zeros(len(layout.columns))
    index = layout.index()
    for name in COUNT_FIELDS:
        row[index[name]] = contribution[name]
    row[index["exact"]], row[index["statements"]] = contribution["exact"], 1
    for variable, table in contribution["sarf"].items():
        for a, cells in table.items():
            for g, n in cells.items():
                row[index[sarf_column(variable, a, g)]] = n
    assert figure_values(row, layout, "aggregate") == pytest.approx(metrics.aggregate_micro_f1)
    assert figure_values(row, layout, "people") == pytest.approx(metrics.people_f1)
    anxiety = macro_f1_from_confusion(contribution["sarf"]["anxiety"])
    assert figure_values(row, layout, "anxiety") == pytest.approx(anxiety)
    assert np.isnan(figure_values(row, layout, "cumulative"))  # no cumulative counts given
    assert figure_values(row, layout, "exact_match") == 0.0


def test_identical_sides_are_within_noise_with_a_zero_interval() -> None:
    rng = np.random.default_rng(1)
    truth, hardness = world(rng, 12)
    tables = [run(rng, truth, hardness, run_effect=0.2) for _ in range(3)]
    result = compare_configurations(tables, tables, layout=PLAIN, n_resamples=200, seed=5)
    aggregate = result.figures["aggregate"]
    assert aggregate.delta == 0.0
    assert all(i.verdict == NOISE for i in aggregate.intervals)
    assert aggregate.baseline.spread.n == 3 and aggregate.baseline.spread.sd is not None
    assert result.figures["symptom"].delta is None  # no SARF codes anywhere


def test_a_clear_improvement_is_better_and_intervals_nest() -> None:
    rng = np.random.default_rng(2)
    truth, hardness = world(rng, 40)
    base = [run(rng, truth, hardness, run_effect=0.05) for _ in range(3)]
    perfect = np.zeros_like(base[0])
    perfect[:, [0, 3, 6]] = truth  # everything found, nothing invented
    result = compare_configurations(base, [perfect], layout=PLAIN, n_resamples=400, seed=3)
    aggregate = result.figures["aggregate"]
    assert aggregate.interval(0.95).verdict == BETTER
    widths = [i.high - i.low for i in aggregate.intervals]  # 80, 90, 95, 99 %
    assert widths == sorted(widths)


def test_the_one_side_interval_covers_the_mean() -> None:
    rng = np.random.default_rng(3)
    truth, hardness = world(rng, 20)
    tables = [run(rng, truth, hardness, run_effect=0.2) for _ in range(3)]
    result = configuration_intervals(tables, layout=PLAIN, n_resamples=300, seed=1)["aggregate"]
    interval = result.intervals[-1]
    assert interval.low < result.side.point < interval.high
    assert result.method == DISCUSSIONS_AND_REPLICATES


def test_bad_input_is_refused() -> None:
    table = np.zeros((3, len(PLAIN.columns)))
    with pytest.raises(ValueError, match="same discussions"):
        compare_configurations([table], [table[:2]], layout=PLAIN, n_resamples=5, seed=1)
    with pytest.raises(ValueError, match="levels"):
        compare_configurations([table], [table], layout=PLAIN, n_resamples=5, seed=1, levels=(95,))
    with pytest.raises(ValueError, match="at least one run"):
        compare_configurations([], [table], layout=PLAIN, n_resamples=5, seed=1)
