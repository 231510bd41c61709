"""Discussion-cluster bootstrap of pooled extraction F1 (pure: numpy only, no Django).

The bootstrap rules are those of `bootstrap.py` (selective-prediction-metrics.md), with
discussions as the clusters: a resample draws discussions with replacement from the sorted
discussion ids using `numpy.random.RandomState(seed)` (`randint(0, D, size=(R, D))`) and
includes every statement of each drawn discussion. Replicates where a figure is undefined are
dropped and counted (`drop_rate`); the 95% CI is the 2.5/97.5 percentile of the rest, and fewer
than two valid replicates give a degenerate CI at the point estimate. Paired deltas use the same
draws on both sides.

Vectorised: each side is a (D, 9) table of per-discussion summed TP/FP/FN counts (people,
events, pair bonds) and the resamples a (D, R) matrix of draw counts, so the resampled totals
of all resamples are one matrix product.

A pooled F1 is *undefined* when there is nothing to find and nothing claimed (2TP + FP + FN =
0), e.g. pair bonds in a resample that drew only discussions without any. The stored figures
report 1.0 for that case (the engine's convention for a single empty statement); over a pool of
statements it carries no information, so here it is dropped instead of counting as perfect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metrics.families.resampling import (
    BootstrapDeltaResult,
    BootstrapResult,
    check_resamples,
    draw_counts,
    summarise,
)

from .results import COUNT_FIELDS, ENTITY_TYPES

# Figure name -> the entity types it pools ("aggregate": the pooled micro-F1 of all three).
FIGURES: dict[str, tuple[str, ...]] = {
    "aggregate": ENTITY_TYPES,
    **{entity: (entity,) for entity in ENTITY_TYPES},
}
COLUMNS: tuple[str, ...] = COUNT_FIELDS  # people_tp, people_fp, people_fn, events_tp, ...


def _column(entity: str, count: str) -> int:
    return COLUMNS.index(f"{entity}_{count}")


def pooled_f1(totals: np.ndarray, figure: str) -> np.ndarray:
    """F1 of `figure` for each row of totals (..., 9); NaN where 2TP + FP + FN is 0."""
    entities = FIGURES[figure]
    tp, fp, fn = (
        sum(totals[..., _column(entity, count)] for entity in entities)
        for count in ("tp", "fp", "fn")
    )
    denominator = 2 * tp + fp + fn
    safe = np.where(denominator > 0, denominator, 1)
    return np.where(denominator > 0, 2 * tp / safe, np.nan)


def _point(table: np.ndarray, figure: str) -> float | None:
    if table.shape[0] == 0:
        return None
    value = float(pooled_f1(table.sum(axis=0), figure))
    return None if np.isnan(value) else value


def resampled_totals(table: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(R, 9) totals of each resample: draw counts (D, R) applied to per-discussion rows (D, 9)."""
    return counts.T @ table


def _as_table(table: np.ndarray) -> np.ndarray:
    return np.asarray(table, dtype=float).reshape(-1, len(COLUMNS))


def _replicates(table: np.ndarray, totals: np.ndarray, figure: str) -> np.ndarray:
    n_resamples = totals.shape[0]
    return pooled_f1(totals, figure) if table.shape[0] else np.full(n_resamples, np.nan)


def _result(table: np.ndarray, totals: np.ndarray, figure: str) -> BootstrapResult:
    point, n_resamples = _point(table, figure), totals.shape[0]
    ci, std_error, drop_rate = summarise(point, _replicates(table, totals, figure), n_resamples)
    return BootstrapResult(point, ci, std_error, drop_rate, n_resamples)


def bootstrap_f1(
    table: np.ndarray, *, n_resamples: int, seed: int, figures: Sequence[str] = tuple(FIGURES)
) -> dict[str, BootstrapResult]:
    """Point estimate and 95% CI of each pooled F1 figure of one run.

    `table` holds one row per discussion, in sorted discussion-id order, with the COLUMNS counts.
    """
    check_resamples(n_resamples)
    table = _as_table(table)
    totals = resampled_totals(
        table, draw_counts(table.shape[0], n_resamples=n_resamples, seed=seed)
    )
    return {figure: _result(table, totals, figure) for figure in figures}


@dataclass(frozen=True, slots=True)
class PairedF1:
    """One figure of two runs on the same discussions: each side's CI and the paired delta."""

    left: BootstrapResult
    right: BootstrapResult
    delta: BootstrapDeltaResult


def paired_bootstrap_f1(
    left: np.ndarray,
    right: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
    figures: Sequence[str] = tuple(FIGURES),
) -> dict[str, PairedF1]:
    """Both runs' CIs and the paired bootstrap of right − left, all from one set of draws
    (so each side equals its own `bootstrap_f1` with the same seed).

    Row d of `left` and of `right` must be the same discussion (sorted ids), over the same
    statements (those both runs cover).
    """
    check_resamples(n_resamples)
    left, right = _as_table(left), _as_table(right)
    if left.shape != right.shape:
        raise ValueError(f"left {left.shape} and right {right.shape} must cover the same rows")
    counts = draw_counts(left.shape[0], n_resamples=n_resamples, seed=seed)
    totals_left, totals_right = resampled_totals(left, counts), resampled_totals(right, counts)
    results = {}
    for figure in figures:
        sides = _result(left, totals_left, figure), _result(right, totals_right, figure)
        point_left, point_right = sides[0].point_estimate, sides[1].point_estimate
        delta = None if point_left is None or point_right is None else point_right - point_left
        replicates = _replicates(right, totals_right, figure) - _replicates(
            left, totals_left, figure
        )
        ci, std_error, drop_rate = summarise(delta, replicates, n_resamples)
        delta_result = BootstrapDeltaResult(
            point_left, point_right, delta, ci, std_error, drop_rate, n_resamples
        )
        results[figure] = PairedF1(*sides, delta_result)
    return results
