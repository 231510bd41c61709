"""Vectorised discussion-cluster bootstrap of the review-savings figures (pure numpy).

``metrics.families.selective.bootstrap.bootstrap_by_participant`` with a review-savings metric rebuilds
every resample's item list and its curve in Python, too slow for 1000 resamples of four
metrics on every approval. Here a resample is a column of cluster draw
counts (``metrics.families.resampling.draw_counts``: the same draws, from the same random
stream, as the loop path), applied as weights to the items sorted once by confidence: every resample's curve is a
column of a few cumulative sums. The replicates equal the loop path's up to floating-point
summation order (checked in tests/metrics/test_own_data_selective.py).

Curve conventions follow ``metrics.families.selective``: equal confidences form one working
point; AURC integrates selective risk with risk(0) = the first working point's risk; AUGRC
integrates generalized risk from 0; confidence levels absent from a resample repeat the
previous working point (zero-width trapezoids).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics.families.resampling import draw_counts, percentile_ci

from .savings import ReviewItem

# Resamples per block: a block holds a few (items × resamples) float arrays, small enough to
# stay in cache and bound the memory. Each column is computed alone, so the replicates do
# not depend on the block size.
COLUMNS_PER_BLOCK = 8


@dataclass(frozen=True)
class ReviewTable:
    """Items sorted by decreasing confidence: their cluster's position and loss, and the last
    index of each confidence plateau."""

    cluster_index: np.ndarray
    losses: np.ndarray
    plateau_ends: np.ndarray


def review_table(items: Sequence[ReviewItem], clusters: Sequence[Hashable]) -> ReviewTable:
    position = {cluster: index for index, cluster in enumerate(clusters)}
    confidences = np.array([item.confidence for item in items], dtype=float)
    order = np.argsort(-confidences, kind="stable")
    ordered = confidences[order]
    ends = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]), len(items) - 1)
    return ReviewTable(
        cluster_index=np.array([position[items[i].cluster_id] for i in order], dtype=np.intp),
        losses=np.array([items[i].loss for i in order], dtype=float),
        plateau_ends=ends,
    )


def _areas(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Trapezoid areas along axis 0, one per column."""
    return ((x[1:] - x[:-1]) * (y[1:] + y[:-1])).sum(axis=0) / 2.0


def _first_finite(values: np.ndarray) -> np.ndarray:
    """Each column's leading NaNs (levels before the first accepted item) replaced by the
    column's first finite value."""
    finite = np.isfinite(values)
    first = np.argmax(finite, axis=0)
    head = values[first, np.arange(values.shape[1])]
    leading = np.arange(values.shape[0])[:, None] < first[None, :]
    return np.where(leading, head[None, :], values)


def block_metrics(
    table: ReviewTable, counts: np.ndarray, risk_levels: Sequence[float]
) -> dict[str, np.ndarray]:
    """AURC, AUGRC and coverage at each risk level for every column of ``counts``."""
    weights = counts[table.cluster_index]  # (items, resamples)
    accepted = np.cumsum(weights, axis=0)[table.plateau_ends]
    loss_sums = np.cumsum(weights * table.losses[:, None], axis=0)[table.plateau_ends]
    total = accepted[-1]
    coverage = accepted / total
    with np.errstate(invalid="ignore", divide="ignore"):
        selective = loss_sums / accepted
    zeros = np.zeros((1, counts.shape[1]))
    filled = _first_finite(selective)
    out = {
        "aurc": _areas(np.vstack([zeros, coverage]), np.vstack([filled[:1], filled])),
        "augrc": _areas(np.vstack([zeros, coverage]), np.vstack([zeros, loss_sums / total])),
    }
    for risk in risk_levels:
        within = np.isfinite(selective) & (selective <= risk)
        out[f"coverage_{round(risk * 100)}"] = np.where(within, coverage, 0.0).max(axis=0)
    return out


def review_replicates(
    sides: Sequence[Sequence[ReviewItem]],
    *,
    risk_levels: Sequence[float],
    n_resamples: int,
    seed: int,
) -> list[dict[str, np.ndarray]]:
    """Replicates of every metric for each side, all sides drawn with the same cluster draws
    (one side: an ordinary bootstrap; two sides over the same clusters: a paired one)."""
    clusters: list[Any] = sorted({item.cluster_id for side in sides for item in side})
    counts = draw_counts(len(clusters), n_resamples=n_resamples, seed=seed)
    tables = [review_table(side, clusters) for side in sides]
    blocks: list[dict[str, list[np.ndarray]]] = [{} for _ in sides]
    for start in range(0, n_resamples, COLUMNS_PER_BLOCK):
        block = counts[:, start : start + COLUMNS_PER_BLOCK]
        for side, table in enumerate(tables):
            for name, values in block_metrics(table, block, risk_levels).items():
                blocks[side].setdefault(name, []).append(values)
    return [{name: np.concatenate(parts) for name, parts in side.items()} for side in blocks]


def interval(point: float | None, replicates: np.ndarray) -> dict[str, Any]:
    """Point, 95% percentile CI and standard error, as stored with the review-savings result.

    Unlike ``resampling.summarise`` an infinite replicate counts as undefined too, and a
    missing point gives no interval at all.
    """
    valid = replicates[np.isfinite(replicates)]
    if point is None or valid.size < 2:
        ci = None if point is None else [point, point]
        return {"point": point, "ci95": ci, "std_error": 0.0}
    return {
        "point": point,
        "ci95": list(percentile_ci(valid)),
        "std_error": float(np.std(valid, ddof=1)),
    }


def intervals(
    points: Mapping[str, float | None], replicates: Mapping[str, np.ndarray]
) -> dict[str, dict[str, Any]]:
    return {name: interval(points[name], replicates[name]) for name in points}
