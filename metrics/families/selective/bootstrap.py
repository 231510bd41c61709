"""Participant-cluster bootstrap for selective-prediction metrics (SSOT: `bootstrap.py`).

A resample draws participants with replacement from the sorted participant ids (the draws of
`metrics.families.resampling`: `numpy.random.RandomState(seed)`, one `randint(0, P, size=P)`
per resample) and includes every item of each drawn participant. Replicates where the metric is undefined (None/NaN) are
dropped and counted in `drop_rate`; the 95% CI is the 2.5/97.5 percentile of the rest, and
fewer than two valid replicates give a degenerate CI at the point estimate.

Two paths give the same numbers:

- the generic path calls `metric_fn(items)` on each rebuilt resample (any callable);
- the vectorised path is taken when `metric_fn` is a `SelectiveMetric` (Cmax, AURC, AUGRC,
  truncated areas, risk at coverage). A resample is then a vector of participant draw counts
  applied to per-participant tables (accepted items and raw loss per confidence level), so
  all resamples are evaluated at once as the columns of a few (level x resample) arrays.

Why the two paths agree bit for bit: `randint(0, P, size=(R, P))` continues the same
Mersenne-Twister stream as R calls of size P; losses are summed as raw integer errors, exact in
any order; the vectorised columns hold every confidence level of the data, and a level absent
from a resample repeats the previous working point, contributing a zero-width trapezoid that
leaves the running sum unchanged (see `selective.sum_left_to_right`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, cast

import numpy as np

from metrics.families.resampling import (
    BootstrapDeltaResult,
    BootstrapResult,
    check_resamples,
    each_cluster_draw,
    summarise,
)
from metrics.families.resampling import draw_counts as draw_participant_counts

from .curves import (
    ItemPrediction,
    Loss,
    compute_augrc,
    compute_augrc_at_coverage,
    compute_aurc,
    compute_aurc_at_coverage,
    compute_cmax,
    compute_risk_at_coverage,
    loss_divisor,
    trapezoid_area,
    truncated_trapezoid_area,
)

MetricFn = Callable[[Sequence[Any]], float | None]
MetricKind = Literal[
    "cmax", "aurc", "augrc", "aurc_at_coverage", "augrc_at_coverage", "risk_at_coverage"
]

# Resamples evaluated per block: bounds the (levels x 2 x block) temporaries so they stay
# cache-resident, without changing any number (columns are independent resamples).
_COLUMNS_PER_BLOCK = 500


# --------------------------------------------------------------------------- built-in metrics


@dataclass(frozen=True, slots=True)
class SelectiveMetric:
    """A built-in metric: callable on items, and evaluable on all resamples at once."""

    kind: MetricKind
    loss: Loss = "abs"
    coverage: float | None = None

    def __post_init__(self) -> None:
        loss_divisor(self.loss)
        needs_coverage = self.kind.endswith("_at_coverage")
        if needs_coverage != (self.coverage is not None):
            raise ValueError(f"metric {self.kind!r}: coverage is required exactly for *_at_*")
        if self.coverage is not None and not 0.0 < self.coverage <= 1.0:
            raise ValueError(f"coverage must be in (0, 1], got {self.coverage}")

    @property
    def target(self) -> float:
        """The coverage of a *_at_coverage metric (__post_init__ checked it is set)."""
        return cast(float, self.coverage)

    @classmethod
    def cmax(cls) -> SelectiveMetric:
        return cls("cmax")

    @classmethod
    def aurc(cls, *, loss: Loss) -> SelectiveMetric:
        return cls("aurc", loss)

    @classmethod
    def augrc(cls, *, loss: Loss) -> SelectiveMetric:
        return cls("augrc", loss)

    @classmethod
    def aurc_at_coverage(cls, *, max_coverage: float, loss: Loss) -> SelectiveMetric:
        return cls("aurc_at_coverage", loss, max_coverage)

    @classmethod
    def augrc_at_coverage(cls, *, max_coverage: float, loss: Loss) -> SelectiveMetric:
        return cls("augrc_at_coverage", loss, max_coverage)

    @classmethod
    def risk_at_coverage(cls, *, target_coverage: float, loss: Loss) -> SelectiveMetric:
        return cls("risk_at_coverage", loss, target_coverage)

    def __call__(self, items: Sequence[ItemPrediction]) -> float | None:
        """The metric on one item list (the generic, per-resample form)."""
        if self.kind == "cmax":
            return compute_cmax(items)
        if self.kind == "aurc":
            return compute_aurc(items, loss=self.loss)
        if self.kind == "augrc":
            return compute_augrc(items, loss=self.loss)
        if self.kind == "aurc_at_coverage":
            return compute_aurc_at_coverage(items, max_coverage=self.target, loss=self.loss)
        if self.kind == "augrc_at_coverage":
            return compute_augrc_at_coverage(items, max_coverage=self.target, loss=self.loss)
        return compute_risk_at_coverage(items, target_coverage=self.target, loss=self.loss)

    def on_resamples(self, curves: ResampledCurves) -> np.ndarray:
        """The metric on every resample (column) at once; NaN where it is undefined."""
        if self.kind == "cmax":
            return curves.cmax
        if curves.n_levels == 0:  # no accepted item anywhere in the data
            return np.full(curves.n_resamples, np.nan if self.kind == "risk_at_coverage" else 0.0)
        if self.kind == "risk_at_coverage":
            return _risk_at_coverage_columns(curves, self.target)
        x = curves.augmented_coverage
        if self.kind.startswith("aurc"):
            y = curves.augmented_selective_risk
        else:
            y = curves.augmented_generalized_risk
        if self.kind in ("aurc", "augrc"):
            areas = trapezoid_area(x, y)
        else:
            c_prime = np.minimum(self.target, curves.cmax)
            areas = truncated_trapezoid_area(x, y, c_prime)
        # Like the item-level functions: no accepted item -> no curve -> area 0.0.
        return np.where(curves.has_predictions, areas, 0.0)


# --------------------------------------------------------------------------- per-participant tables


@dataclass(frozen=True, slots=True)
class ParticipantTables:
    """Per-participant summaries at each confidence level, highest confidence first.

    Cells are the (level, participant) pairs that occur, ordered by level. Each cell holds
    (accepted items, sum of raw absolute errors); a resample's value at a level is the sum
    over the level's cells of the participant's draw count times the cell's values.
    """

    items_per_participant: np.ndarray  # (P,)
    cell_participant: np.ndarray  # (M,) participant index of each cell
    cell_values: np.ndarray  # (M, 2, 1): accepted items, raw loss
    level_starts: np.ndarray  # (L,) first cell of each level
    first_level: np.ndarray  # (P,) each participant's highest level (L if none accepted)
    divisor: float

    @property
    def n_levels(self) -> int:
        return int(self.level_starts.size)


def build_participant_tables(
    groups: Sequence[Sequence[ItemPrediction]], *, loss: Loss
) -> ParticipantTables:
    """Tables for participants given as item groups (in the order resamples index them)."""
    owner, conf, err = _predicted_columns(groups)
    _, level_of_item = np.unique(-conf, return_inverse=True)  # level 0 = highest confidence
    cell_key = level_of_item * len(groups) + owner
    cell_keys, cell_of_item = np.unique(cell_key, return_inverse=True)
    cell_level = cell_keys // len(groups)
    accepted = np.bincount(cell_of_item, minlength=cell_keys.size).astype(float)
    raw_loss = np.bincount(cell_of_item, weights=err, minlength=cell_keys.size)
    n_levels = int(cell_level.max()) + 1 if cell_keys.size else 0
    first_level = np.full(len(groups), n_levels, dtype=np.intp)
    np.minimum.at(first_level, cell_keys % len(groups), cell_level)
    return ParticipantTables(
        items_per_participant=np.array([len(g) for g in groups], dtype=float),
        cell_participant=(cell_keys % len(groups)).astype(np.intp),
        cell_values=np.stack([accepted, raw_loss], axis=1)[:, :, None],
        level_starts=np.flatnonzero(np.diff(cell_level, prepend=-1)),
        first_level=first_level,
        divisor=loss_divisor(loss),
    )


def _predicted_columns(
    groups: Sequence[Sequence[ItemPrediction]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(participant index, confidence, raw error) of every accepted item."""
    rows = [
        (index, item.confidence, abs(item.pred - item.gt))
        for index, group in enumerate(groups)
        for item in group
        if item.pred is not None
    ]
    if not rows:
        return np.zeros(0, np.intp), np.zeros(0), np.zeros(0)
    owner, conf, err = (np.array(column) for column in zip(*rows, strict=True))
    if np.isnan(conf.astype(float)).any():
        raise ValueError("confidence must not be NaN (it cannot be ranked)")
    return owner.astype(np.intp), conf.astype(float), err.astype(float)


@dataclass(frozen=True)
class ResampledCurves:
    """Working points of a block of resamples: one row per confidence level of the data, one
    column per resample. A level absent from a resample repeats its previous working point.

    The `augmented_*` arrays prepend the coverage-0 point as row 0 and are what gets
    integrated. Levels before a resample's first working point have coverage 0, so their
    segments have zero width; their risk is filler, 0 except on the row just before the first
    working point, which holds the start risk (AURC: risk at the first working point). That
    reproduces the item-level integration trapezoid for trapezoid.

    The arithmetic mirrors `selective.working_point_values` operation for operation; each
    quantity is computed on first use, so a metric pays only for what it reads.
    """

    accepted: np.ndarray  # (L, B) cumulative accepted items
    raw_loss: np.ndarray  # (L, B) cumulative raw loss
    n_total: np.ndarray  # (B,) items in each resample
    first_level: np.ndarray  # (B,) level of the first working point (L if none)
    divisor: float

    @property
    def n_levels(self) -> int:
        return self.accepted.shape[0]

    @property
    def n_resamples(self) -> int:
        return self.n_total.size

    def _augmented(self) -> np.ndarray:
        """A (levels + 1) x resamples array whose row 0 (coverage 0) is zero."""
        out = np.empty((self.n_levels + 1, self.n_resamples))
        out[0] = 0.0
        return out

    @cached_property
    def augmented_coverage(self) -> np.ndarray:
        out = self._augmented()
        np.divide(self.accepted, self.n_total, out=out[1:])
        return out

    @property
    def coverage(self) -> np.ndarray:
        return self.augmented_coverage[1:]

    @cached_property
    def loss_sums(self) -> np.ndarray:
        return self.raw_loss if self.divisor == 1.0 else self.raw_loss / self.divisor

    @cached_property
    def augmented_selective_risk(self) -> np.ndarray:
        out = self._augmented()
        # max(accepted, 1) only turns 0/0 before the first working point into 0/1; wherever
        # something is accepted the division is the item-level one.
        np.divide(self.loss_sums, np.maximum(self.accepted, 1.0), out=out[1:])
        # Row first_level is the level just before the first working point (or the coverage-0
        # row); clipped for resamples without any working point, whose areas are set to 0.
        before = np.minimum(self.first_level, self.n_levels - 1)
        columns = np.arange(self.n_resamples)
        out[before, columns] = out[before + 1, columns]
        return out

    @property
    def selective_risk(self) -> np.ndarray:
        """Selective risk per level (filler before a resample's first working point)."""
        return self.augmented_selective_risk[1:]

    @cached_property
    def augmented_generalized_risk(self) -> np.ndarray:
        out = self._augmented()
        np.divide(self.loss_sums, self.n_total, out=out[1:])
        return out

    @cached_property
    def cmax(self) -> np.ndarray:
        if self.n_levels == 0:
            return np.zeros(self.n_resamples)
        return self.accepted[-1] / self.n_total

    @cached_property
    def has_predictions(self) -> np.ndarray:
        if self.n_levels == 0:
            return np.zeros(self.n_resamples, dtype=bool)
        return self.accepted[-1] > 0


def resample_curves(tables: ParticipantTables, counts: np.ndarray) -> ResampledCurves:
    """Curves of the resamples whose participant draw counts are the columns of `counts`
    (shape (P, B)). All sums are of integers held exactly in float64, so their order does
    not matter; accepted items and raw loss travel together to halve the array operations."""
    n_cells, n_columns = tables.cell_participant.size, counts.shape[1]
    per_cell = np.empty((n_cells, 2, n_columns))
    np.take(counts, tables.cell_participant, axis=0, out=per_cell[:, 0])
    np.multiply(per_cell[:, 0], tables.cell_values[:, 1], out=per_cell[:, 1])
    np.multiply(per_cell[:, 0], tables.cell_values[:, 0], out=per_cell[:, 0])
    if n_cells != tables.n_levels:  # some level is shared by several participants
        per_cell = np.add.reduceat(per_cell, tables.level_starts, axis=0)
    for level in range(1, per_cell.shape[0]):  # running sum down the levels, in place;
        per_cell[level] += per_cell[level - 1]  # np.cumsum along axis 0 is slower
    # A resample's first working point is the first level at which any participant it drew
    # has an accepted item (participants not drawn are pushed past every level).
    not_drawn = (counts == 0) * (tables.n_levels + 1)
    return ResampledCurves(
        accepted=per_cell[:, 0],
        raw_loss=per_cell[:, 1],
        n_total=tables.items_per_participant @ counts,
        first_level=np.min(tables.first_level[:, None] + not_drawn, axis=0),
        divisor=tables.divisor,
    )


def _risk_at_coverage_columns(curves: ResampledCurves, target: float) -> np.ndarray:
    reached = curves.coverage >= target
    first = np.argmax(reached, axis=0)
    values = curves.selective_risk[first, np.arange(first.size)]
    return np.where(reached[-1], values, np.nan)


# --------------------------------------------------------------------------- resampling


def group_by_participant(items: Sequence[Any]) -> tuple[list[Any], list[list[Any]]]:
    """Sorted participant ids and the items of each, in input order."""
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(item.participant_id, []).append(item)
    participant_ids = sorted(groups)
    return participant_ids, [groups[pid] for pid in participant_ids]


def _loop_replicates(
    group_sets: Sequence[Sequence[Sequence[Any]]],
    metric_fn: MetricFn,
    *,
    n_resamples: int,
    seed: int,
) -> list[np.ndarray]:
    """Generic path: rebuild each resample's item list(s) and call metric_fn on each."""
    n_participants = len(group_sets[0])
    replicates = [np.full(n_resamples, np.nan) for _ in group_sets]
    draws = each_cluster_draw(n_participants, n_resamples=n_resamples, seed=seed)
    for r, drawn in enumerate(draws):
        for side, groups in enumerate(group_sets):
            resample = [item for index in drawn for item in groups[index]]
            replicates[side][r] = _as_value(metric_fn(resample))
    return replicates


def _vectorised_replicates(
    group_sets: Sequence[Sequence[Sequence[ItemPrediction]]],
    metrics: Sequence[SelectiveMetric],
    *,
    n_resamples: int,
    seed: int,
) -> list[list[np.ndarray]]:
    """Vectorised path: replicates[side][metric] for every resample, sharing one set of draws."""
    counts = draw_participant_counts(len(group_sets[0]), n_resamples=n_resamples, seed=seed)
    out = [[np.empty(n_resamples) for _ in metrics] for _ in group_sets]
    for side, groups in enumerate(group_sets):
        losses = {metric.loss for metric in metrics}
        tables = {loss: build_participant_tables(groups, loss=loss) for loss in losses}
        for start in range(0, n_resamples, _COLUMNS_PER_BLOCK):
            block = slice(start, start + _COLUMNS_PER_BLOCK)
            curves = {loss: resample_curves(t, counts[:, block]) for loss, t in tables.items()}
            for index, metric in enumerate(metrics):
                out[side][index][block] = metric.on_resamples(curves[metric.loss])
    return out


def _as_value(value: float | None) -> float:
    return np.nan if value is None else float(value)


# --------------------------------------------------------------------------- summaries


def _point(metric_fn: MetricFn, items: Sequence[Any]) -> float | None:
    value = metric_fn(items)
    return None if value is None or np.isnan(value) else float(value)


def _delta(left: float | None, right: float | None) -> float | None:
    return None if left is None or right is None else right - left


# --------------------------------------------------------------------------- public API


def bootstrap_replicates(
    items: Sequence[Any],
    *,
    metric_fn: MetricFn,
    n_resamples: int,
    seed: int,
    vectorise: bool = True,
) -> np.ndarray:
    """The raw replicate values (NaN = undefined), one per resample."""
    check_resamples(n_resamples)
    _, groups = group_by_participant(items)
    if not groups:
        return np.full(n_resamples, np.nan)
    if vectorise and isinstance(metric_fn, SelectiveMetric):
        sides = _vectorised_replicates([groups], [metric_fn], n_resamples=n_resamples, seed=seed)
        return sides[0][0]
    return _loop_replicates([groups], metric_fn, n_resamples=n_resamples, seed=seed)[0]


def bootstrap_by_participant(
    items: Sequence[Any],
    *,
    metric_fn: MetricFn,
    n_resamples: int,
    seed: int,
    vectorise: bool = True,
) -> BootstrapResult:
    """Participant-cluster bootstrap CI of `metric_fn` (vectorised for a SelectiveMetric)."""
    replicates = bootstrap_replicates(
        items, metric_fn=metric_fn, n_resamples=n_resamples, seed=seed, vectorise=vectorise
    )
    point = _point(metric_fn, items) if items else None
    ci, std_error, drop_rate = summarise(point, replicates, n_resamples)
    return BootstrapResult(point, ci, std_error, drop_rate, n_resamples)


def bootstrap_metrics_by_participant(
    items: Sequence[ItemPrediction],
    *,
    metrics: Mapping[str, SelectiveMetric],
    n_resamples: int,
    seed: int,
) -> dict[str, BootstrapResult]:
    """Several built-in metrics on one set of draws; each equals its own
    `bootstrap_by_participant` call with the same seed."""
    check_resamples(n_resamples)
    _, groups = group_by_participant(items)
    names, specs = list(metrics), list(metrics.values())
    if groups:
        columns = _vectorised_replicates([groups], specs, n_resamples=n_resamples, seed=seed)[0]
    else:
        columns = [np.full(n_resamples, np.nan) for _ in specs]
    results = {}
    for name, spec, replicates in zip(names, specs, columns, strict=True):
        point = _point(spec, items) if items else None
        ci, std_error, drop_rate = summarise(point, replicates, n_resamples)
        results[name] = BootstrapResult(point, ci, std_error, drop_rate, n_resamples)
    return results


def _common_groups(
    items_left: Sequence[Any], items_right: Sequence[Any]
) -> tuple[list[list[Any]], list[list[Any]]]:
    """Item groups of the participants both sides have, in sorted participant order."""
    left_ids, left_groups = group_by_participant(items_left)
    right_ids, right_groups = group_by_participant(items_right)
    left_by_id = dict(zip(left_ids, left_groups, strict=True))
    right_by_id = dict(zip(right_ids, right_groups, strict=True))
    common = sorted(set(left_by_id) & set(right_by_id))
    return [left_by_id[p] for p in common], [right_by_id[p] for p in common]


def _delta_result(
    metric_fn: MetricFn,
    groups: tuple[list[list[Any]], list[list[Any]]],
    replicates: tuple[np.ndarray, np.ndarray],
    n_resamples: int,
) -> BootstrapDeltaResult:
    left_items = [item for group in groups[0] for item in group]
    right_items = [item for group in groups[1] for item in group]
    left = _point(metric_fn, left_items) if left_items else None
    right = _point(metric_fn, right_items) if right_items else None
    delta = _delta(left, right)
    ci, std_error, drop_rate = summarise(delta, replicates[1] - replicates[0], n_resamples)
    return BootstrapDeltaResult(left, right, delta, ci, std_error, drop_rate, n_resamples)


def paired_bootstrap_delta_by_participant(
    items_left: Sequence[Any],
    items_right: Sequence[Any],
    *,
    metric_fn: MetricFn,
    n_resamples: int,
    seed: int,
    vectorise: bool = True,
) -> BootstrapDeltaResult:
    """Paired bootstrap of right - left with the same participant draws on both sides,
    over the participants both sides have (vectorised for a SelectiveMetric)."""
    check_resamples(n_resamples)
    groups = _common_groups(items_left, items_right)
    if not groups[0]:
        nan = np.full(n_resamples, np.nan)
        return _delta_result(metric_fn, groups, (nan, nan), n_resamples)
    if vectorise and isinstance(metric_fn, SelectiveMetric):
        sides = _vectorised_replicates(
            list(groups), [metric_fn], n_resamples=n_resamples, seed=seed
        )
        replicates = (sides[0][0], sides[1][0])
    else:
        left, right = _loop_replicates(list(groups), metric_fn, n_resamples=n_resamples, seed=seed)
        replicates = (left, right)
    return _delta_result(metric_fn, groups, replicates, n_resamples)


def paired_bootstrap_deltas_by_participant(
    items_left: Sequence[ItemPrediction],
    items_right: Sequence[ItemPrediction],
    *,
    metrics: Mapping[str, SelectiveMetric],
    n_resamples: int,
    seed: int,
) -> dict[str, BootstrapDeltaResult]:
    """Several built-in metrics' paired deltas on one set of draws; each equals its own
    `paired_bootstrap_delta_by_participant` call with the same seed."""
    check_resamples(n_resamples)
    groups = _common_groups(items_left, items_right)
    specs = list(metrics.values())
    if groups[0]:
        sides = _vectorised_replicates(list(groups), specs, n_resamples=n_resamples, seed=seed)
    else:
        sides = [[np.full(n_resamples, np.nan) for _ in specs] for _ in range(2)]
    return {
        name: _delta_result(spec, groups, (sides[0][i], sides[1][i]), n_resamples)
        for i, (name, spec) in enumerate(metrics.items())
    }


# What ``metrics.families.selective.bootstrap`` exports.
__all__ = [
    "BootstrapDeltaResult",
    "BootstrapResult",
    "ItemPrediction",
    "Loss",
    "MetricFn",
    "MetricKind",
    "ParticipantTables",
    "ResampledCurves",
    "SelectiveMetric",
    "bootstrap_by_participant",
    "bootstrap_metrics_by_participant",
    "bootstrap_replicates",
    "build_participant_tables",
    "compute_augrc",
    "compute_augrc_at_coverage",
    "compute_aurc",
    "compute_aurc_at_coverage",
    "compute_cmax",
    "compute_risk_at_coverage",
    "draw_participant_counts",
    "group_by_participant",
    "loss_divisor",
    "paired_bootstrap_delta_by_participant",
    "paired_bootstrap_deltas_by_participant",
    "resample_curves",
    "trapezoid_area",
    "truncated_trapezoid_area",
]
