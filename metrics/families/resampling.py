"""The one resampling module of the library: cluster draws and percentile intervals.

Every bootstrap of the library (selective prediction, extraction F1, review savings,
inter-auditor agreement, reasoning faithfulness) draws and summarises here, so they share one
rule:

- A resample draws C clusters (participants, discussions, items, vignettes) with replacement
  from ``numpy.random.RandomState(seed)``: ``randint(0, C, size=(R, C))`` for R resamples.
  That matrix continues the Mersenne-Twister stream exactly like R successive calls of size C,
  so the one-resample-at-a-time loop (``each_cluster_draw``) and the vectorised paths
  (``cluster_draws``, ``draw_counts``) see the same draws in the same order.
- The 95% interval is the 2.5 / 97.5 percentile of the valid replicates (``percentile_ci``);
  ``summarise`` adds the standard error and the share of replicates dropped as undefined.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

CI_PERCENTILES = (2.5, 97.5)


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """Point estimate and participant-bootstrap summary of one metric."""

    point_estimate: float | None
    ci95: tuple[float, float] | None
    std_error: float
    drop_rate: float
    n_resamples: int


@dataclass(frozen=True, slots=True)
class BootstrapDeltaResult:
    """Paired bootstrap of delta = right - left over the participants both sides have."""

    point_estimate_left: float | None
    point_estimate_right: float | None
    delta_point_estimate: float | None
    ci95: tuple[float, float] | None
    std_error: float
    drop_rate: float
    n_resamples: int


def check_resamples(n_resamples: int) -> None:
    """A resample count is a non-negative integer (0: no interval)."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 0:
        raise ValueError(f"n_resamples must be a non-negative integer, got {n_resamples!r}")


def cluster_draws(n_clusters: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n_clusters) drawn cluster indices; row r is resample r."""
    rng = np.random.RandomState(seed)
    return rng.randint(0, n_clusters, size=(n_resamples, n_clusters))


def each_cluster_draw(n_clusters: int, *, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The rows of ``cluster_draws`` one at a time, without holding them all (the loop path)."""
    rng = np.random.RandomState(seed)
    for _ in range(n_resamples):
        yield rng.randint(0, n_clusters, size=n_clusters)


def draw_counts(n_clusters: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """(n_clusters, n_resamples) float counts: how often resample r drew cluster c.

    Laid out cluster-major so each resample is a column, ready to weight per-cluster rows.
    No cluster gives a (0, n_resamples) array.
    """
    if n_clusters == 0:
        return np.zeros((0, n_resamples))
    draws = cluster_draws(n_clusters, n_resamples=n_resamples, seed=seed)
    keys = draws + np.arange(n_resamples)[:, None] * n_clusters
    flat = np.bincount(keys.ravel(), minlength=n_resamples * n_clusters)
    return np.ascontiguousarray(flat.reshape(n_resamples, n_clusters).T, dtype=float)


def percentile_ci(replicates: np.ndarray) -> tuple[float, float]:
    """The 2.5 / 97.5 percentiles of some (valid) replicates."""
    low, high = np.percentile(replicates, CI_PERCENTILES)
    return float(low), float(high)


def summarise(
    point: float | None, replicates: np.ndarray, n_resamples: int
) -> tuple[tuple[float, float] | None, float, float]:
    """(ci95, std_error, drop_rate) from replicates, NaN marking undefined ones.

    Fewer than two valid replicates give a degenerate interval at the point estimate (None
    without one) and a standard error of 0.
    """
    valid = replicates[~np.isnan(replicates)]
    drop_rate = (n_resamples - valid.size) / n_resamples if n_resamples > 0 else 0.0
    if valid.size < 2:
        ci = None if point is None else (float(point), float(point))
        return ci, 0.0, drop_rate
    return percentile_ci(valid), float(np.std(valid, ddof=1)), drop_rate
