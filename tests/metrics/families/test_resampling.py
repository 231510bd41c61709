"""The one resampling module: the same draws for every path, one percentile rule."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.families.interauditor import cluster_bootstrap_mean_diff
from metrics.families.reasoning import bootstrap_ci, mean_statistic
from metrics.families.resampling import (
    check_resamples,
    cluster_draws,
    draw_counts,
    each_cluster_draw,
    percentile_ci,
    summarise,
)


def test_the_loop_path_sees_the_vectorised_draws_in_the_same_order():
    matrix = cluster_draws(7, n_resamples=50, seed=3)
    rows = list(each_cluster_draw(7, n_resamples=50, seed=3))
    assert matrix.shape == (50, 7)
    assert np.array_equal(np.vstack(rows), matrix)
    # The stream is numpy's RandomState: a changed seed changes the draws.
    assert not np.array_equal(cluster_draws(7, n_resamples=50, seed=4), matrix)
    assert np.array_equal(matrix, np.random.RandomState(3).randint(0, 7, size=(50, 7)))


def test_counts_are_the_draws_tallied_one_column_per_resample():
    counts = draw_counts(5, n_resamples=40, seed=11)
    draws = cluster_draws(5, n_resamples=40, seed=11)
    assert counts.shape == (5, 40)
    for resample in range(40):
        assert np.array_equal(counts[:, resample], np.bincount(draws[resample], minlength=5))
    assert draw_counts(0, n_resamples=40, seed=11).shape == (0, 40)


def test_percentile_interval_and_summary():
    values = np.arange(101, dtype=float)
    assert percentile_ci(values) == (2.5, 97.5)
    with_undefined = np.array([1.0, np.nan, 3.0, np.nan])
    ci, std_error, drop_rate = summarise(2.0, with_undefined, 4)
    assert ci == percentile_ci(np.array([1.0, 3.0]))
    assert std_error == pytest.approx(np.std([1.0, 3.0], ddof=1))
    assert drop_rate == 0.5
    assert summarise(2.0, np.array([np.nan, 5.0]), 2) == ((2.0, 2.0), 0.0, 0.5)
    assert summarise(None, np.array([]), 0) == (None, 0.0, 0.0)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_a_resample_count_is_a_non_negative_integer(bad):
    with pytest.raises(ValueError, match="n_resamples"):
        check_resamples(bad)


def test_the_reasoning_and_interauditor_bootstraps_use_these_draws():
    values = [0.0, 1.0, 1.0, 0.5, 0.25]
    expected = percentile_ci(
        np.mean(np.array(values)[cluster_draws(5, n_resamples=200, seed=9)], axis=1)
    )
    assert bootstrap_ci(mean_statistic(values), 5, resamples=200, seed=9) == list(expected)
    pairs = {"a": [(1.0, 0.0)], "b": [(0.0, 0.0)], "c": [(1.0, 1.0), (0.5, 0.0)]}
    result = cluster_bootstrap_mean_diff(pairs, n_resamples=300, seed=2)
    draws = cluster_draws(3, n_resamples=300, seed=2)
    sums, counts = np.array([1.0, 0.0, 0.5]), np.array([1.0, 1.0, 2.0])
    replicates = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    assert result["ci95"] == list(percentile_ci(replicates))
