"""Two extraction configurations compared, each one run or several replicates (pure: numpy).

Every figure is a function of per-discussion tables of additive counts (``Layout``): entity
TP/FP/FN, exact matches over statements, SARF confusion cells, and the cumulative counts of
each discussion. A side is a list of such tables, one per replicate, rows in the same
discussion order on both sides (the discussions both cover).

The interval of a difference (candidate − baseline) is a two-stage paired bootstrap:

1. Discussions are drawn with replacement, the same draws for both sides (the rule of
   ``metrics.families.resampling``: ``RandomState(seed)``), and every replicate's figure is
   computed on each resample; the side's value is the mean over its replicates.
2. Run-to-run variation: on the same resample, each side also draws its replicates with
   replacement (``RandomState(seed + 1)``, baseline first) and adds the drawn replicates'
   mean deviation from the side's mean, scaled by sqrt(k / (k − 1)) so that its variance is
   the unbiased one of a mean of k replicates. Whole runs are drawn, not a replicate per
   discussion: what varies from run to run is partly common to a whole run (drawing per
   discussion would average it away). A side with one run borrows the other side's
   deviations (the same configuration of noise is assumed); with one run on each side there
   is no run-to-run variation to measure and the interval is over discussions only
   (``method`` says which).

A figure undefined on a resample (nothing to find and nothing claimed) is dropped and
counted (``drop_rate``). The interval at level L is the (1 − L)/2 and (1 + L)/2 percentiles
of the rest; the verdict is "better" when it lies above 0, "worse" below, else "within noise".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from metrics.families.replicates import Spread, spread
from metrics.families.resampling import check_resamples, draw_counts

from .results import COUNT_FIELDS, ENTITY_TYPES
from .sarf import SARF_VARIABLES

LEVELS: tuple[float, ...] = (0.8, 0.9, 0.95, 0.99)
DEFAULT_LEVEL = 0.95
BETTER, WORSE, NOISE = "better", "worse", "within noise"

# Figure -> what it is computed from. Statement figures pool statement results; cumulative
# ones pool each discussion's cumulative result.
ENTITY_FIGURES: dict[str, tuple[str, ...]] = {
    "aggregate": ENTITY_TYPES,
    **{entity: (entity,) for entity in ENTITY_TYPES},
}
STATEMENT_FIGURES: tuple[str, ...] = (*ENTITY_FIGURES, *SARF_VARIABLES, "exact_match")
CUMULATIVE_FIGURES: tuple[str, ...] = tuple(
    "cumulative" if name == "aggregate" else f"cumulative_{name}" for name in ENTITY_FIGURES
)
FIGURES: tuple[str, ...] = (*STATEMENT_FIGURES, *CUMULATIVE_FIGURES)
LABELS: dict[str, str] = {
    "aggregate": "Overall F1 (pooled over statements)",
    "people": "People F1",
    "events": "Events F1",
    "pair_bonds": "Pair bonds F1",
    **{variable: f"{variable.capitalize()} macro-F1" for variable in SARF_VARIABLES},
    "exact_match": "Exact-match rate",
    "cumulative": "Cumulative F1 (per discussion, pooled)",
    "cumulative_people": "Cumulative people F1",
    "cumulative_events": "Cumulative events F1",
    "cumulative_pair_bonds": "Cumulative pair bonds F1",
}
CUMULATIVE_PREFIX = "cumulative_"


@dataclass(frozen=True)
class Layout:
    """The columns of a per-discussion table: the statement counts (``COUNT_FIELDS``), exact
    matches and statements, one column per SARF confusion cell of the classes seen (AI value
    first), then the cumulative counts (``cumulative_`` + ``COUNT_FIELDS``)."""

    sarf_classes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @cached_property
    def columns(self) -> tuple[str, ...]:
        cells = tuple(
            sarf_column(variable, ai, gt)
            for variable in SARF_VARIABLES
            for ai in self.sarf_classes.get(variable, ())
            for gt in self.sarf_classes.get(variable, ())
        )
        cumulative = tuple(CUMULATIVE_PREFIX + name for name in COUNT_FIELDS)
        return (*COUNT_FIELDS, "exact", "statements", *cells, *cumulative)

    @cached_property
    def positions(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.columns)}

    def index(self) -> dict[str, int]:
        return self.positions


def sarf_column(variable: str, ai: str, gt: str) -> str:
    return f"sarf:{variable}:{ai}:{gt}"


def layout_for(confusions: Sequence[Mapping[str, Mapping[str, Mapping[str, int]]]]) -> Layout:
    """The layout holding every class seen in these SARF confusion tables ({variable: {ai:
    {gt: n}}}), classes sorted."""
    classes: dict[str, set[str]] = {variable: set() for variable in SARF_VARIABLES}
    for confusion in confusions:
        for variable, table in (confusion or {}).items():
            if variable not in classes:
                continue
            for ai, cells in table.items():
                classes[variable].add(ai)
                classes[variable].update(cells)
    return Layout({variable: tuple(sorted(found)) for variable, found in classes.items() if found})


# --- figures from totals --------------------------------------------------------------------


def _pooled_f1(totals: np.ndarray, index: dict[str, int], prefix: str, entities: Sequence[str]):
    tp, fp, fn = (
        sum(totals[..., index[f"{prefix}{entity}_{count}"]] for entity in entities)
        for count in ("tp", "fp", "fn")
    )
    denominator = 2 * tp + fp + fn
    safe = np.where(denominator > 0, denominator, 1)
    return np.where(denominator > 0, 2 * tp / safe, np.nan)


def _macro_f1(totals: np.ndarray, layout: Layout, index: dict[str, int], variable: str):
    """Macro-F1 over the classes seen on either side (as ``sarf.macro_f1_from_confusion``)."""
    classes = layout.sarf_classes.get(variable, ())
    if not classes:
        return np.full(totals.shape[:-1], np.nan)
    k = len(classes)
    cells = [index[sarf_column(variable, ai, gt)] for ai in classes for gt in classes]
    block = totals[..., cells].reshape(*totals.shape[:-1], k, k)  # [..., ai, gt]
    predicted, actual = block.sum(axis=-1), block.sum(axis=-2)
    correct = np.diagonal(block, axis1=-2, axis2=-1)
    denominator = predicted + actual
    present = denominator > 0
    per_class = np.where(present, 2 * correct / np.where(present, denominator, 1), 0.0)
    n_present = present.sum(axis=-1)
    return np.where(n_present > 0, per_class.sum(axis=-1) / np.maximum(n_present, 1), np.nan)


def figure_values(totals: np.ndarray, layout: Layout, figure: str) -> np.ndarray:
    """One figure of each row of totals (..., columns); NaN where it is undefined."""
    index = layout.index()
    totals = np.asarray(totals, dtype=float)
    if figure in ENTITY_FIGURES:
        return _pooled_f1(totals, index, "", ENTITY_FIGURES[figure])
    if figure in CUMULATIVE_FIGURES:
        base = "aggregate" if figure == "cumulative" else figure[len(CUMULATIVE_PREFIX) :]
        return _pooled_f1(totals, index, CUMULATIVE_PREFIX, ENTITY_FIGURES[base])
    if figure in SARF_VARIABLES:
        return _macro_f1(totals, layout, index, figure)
    if figure == "exact_match":
        statements = totals[..., index["statements"]]
        safe = np.where(statements > 0, statements, 1)
        return np.where(statements > 0, totals[..., index["exact"]] / safe, np.nan)
    raise ValueError(f"unknown figure {figure!r}")


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    level: float
    low: float | None
    high: float | None
    verdict: str  # better / worse / within noise


@dataclass(frozen=True)
class SideFigure:
    """A figure of one side: the mean over its replicates and their spread."""

    point: float | None
    replicates: list[float | None]
    spread: Spread


@dataclass(frozen=True)
class FigureComparison:
    figure: str
    baseline: SideFigure
    candidate: SideFigure
    delta: float | None
    std_error: float | None
    drop_rate: float
    intervals: list[Interval]

    def interval(self, level: float) -> Interval | None:
        return next((i for i in self.intervals if abs(i.level - level) < 1e-9), None)


DISCUSSIONS_AND_REPLICATES = "discussions and replicates"
DISCUSSIONS_ONLY = "discussions only"


@dataclass(frozen=True)
class ExperimentComparison:
    figures: dict[str, FigureComparison]
    method: str
    n_discussions: int
    n_baseline: int  # replicates
    n_candidate: int
    n_resamples: int
    seed: int
    levels: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConfigurationInterval:
    """One side alone: its figure over the replicates and an interval of that mean."""

    figure: str
    side: SideFigure
    std_error: float | None
    drop_rate: float
    intervals: list[Interval]
    method: str


# --- the bootstrap ------------------------------------------------------------------------------


def _stack(side: Sequence[np.ndarray], n_columns: int) -> np.ndarray:
    tables = [np.asarray(t, dtype=float).reshape(-1, n_columns) for t in side]
    if not tables:
        raise ValueError("each side needs at least one run")
    shapes = {t.shape for t in tables}
    if len(shapes) != 1:
        raise ValueError(f"a side's replicates must cover the same discussions, got {shapes}")
    return np.stack(tables)  # (k, D, C)


def _side_figure(per_replicate: np.ndarray) -> SideFigure:
    values = [None if np.isnan(v) else float(v) for v in per_replicate]
    present = [v for v in values if v is not None]
    point = float(np.mean(present)) if present else None
    return SideFigure(point, values, spread(values))


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    counts = (~np.isnan(values)).sum(axis=axis)
    sums = np.nansum(values, axis=axis)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _replicate_term(resampled: np.ndarray, means: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """(R,) the mean deviation of the drawn replicates from the side's mean on each resample,
    scaled to the unbiased variance of a mean of as many replicates as were drawn from."""
    k = resampled.shape[0]
    picked = np.take_along_axis(resampled.T, draws, axis=1)  # (R, n drawn)
    scale = np.sqrt(k / (k - 1))
    return scale * (_nanmean(picked, axis=1) - means)


def _intervals(
    point: float | None, replicates: np.ndarray, n_resamples: int, levels: Sequence[float]
) -> tuple[list[Interval], float | None, float]:
    valid = replicates[~np.isnan(replicates)]
    drop_rate = (n_resamples - valid.size) / n_resamples if n_resamples else 0.0
    if point is None:
        return [Interval(level, None, None, NOISE) for level in levels], None, drop_rate
    if valid.size < 2:
        intervals = [Interval(level, point, point, NOISE) for level in levels]
        return intervals, 0.0, drop_rate
    out = []
    for level in levels:
        low, high = np.percentile(valid, [50 * (1 - level), 50 * (1 + level)])
        verdict = BETTER if low > 0 else WORSE if high < 0 else NOISE
        out.append(Interval(level, float(low), float(high), verdict))
    return out, float(np.std(valid, ddof=1)), drop_rate


def _check_levels(levels: Sequence[float]) -> tuple[float, ...]:
    checked = tuple(float(level) for level in levels)
    if not checked or any(not 0 < level < 1 for level in checked):
        raise ValueError(f"levels must lie between 0 and 1, got {levels!r}")
    return checked


@dataclass(frozen=True)
class _Resampled:
    """Each replicate's figure on each resample, per figure: (k, R) arrays."""

    baseline: dict[str, np.ndarray]
    candidate: dict[str, np.ndarray]


def _resampled(
    sides: Sequence[np.ndarray], layout: Layout, figures: Sequence[str], counts: np.ndarray
) -> list[dict[str, np.ndarray]]:
    out = []
    for stacked in sides:
        totals = np.matmul(counts.T[None], stacked)  # (k, R, C)
        out.append({figure: figure_values(totals, layout, figure) for figure in figures})
    return out


def compare_configurations(
    baseline: Sequence[np.ndarray],
    candidate: Sequence[np.ndarray],
    *,
    layout: Layout,
    n_resamples: int,
    seed: int,
    figures: Sequence[str] = FIGURES,
    levels: Sequence[float] = LEVELS,
) -> ExperimentComparison:
    """Candidate − baseline for each figure, with paired intervals at each level.

    ``baseline`` and ``candidate``: one (D, columns) table per replicate, rows in the same
    discussion order on both sides.
    """
    check_resamples(n_resamples)
    levels = _check_levels(levels)
    n_columns = len(layout.columns)
    base, cand = _stack(baseline, n_columns), _stack(candidate, n_columns)
    if base.shape[1] != cand.shape[1]:
        raise ValueError("both sides must cover the same discussions")
    n_discussions = base.shape[1]
    counts = draw_counts(n_discussions, n_resamples=n_resamples, seed=seed)
    resampled_base, resampled_cand = _resampled((base, cand), layout, figures, counts)
    full_base = {f: figure_values(base.sum(axis=1), layout, f) for f in figures}
    full_cand = {f: figure_values(cand.sum(axis=1), layout, f) for f in figures}
    k_base, k_cand = base.shape[0], cand.shape[0]
    with_replicates = max(k_base, k_cand) > 1
    rng = np.random.RandomState(seed + 1)
    draws_base = rng.randint(0, max(k_base, k_cand), size=(n_resamples, k_base))
    draws_cand = rng.randint(0, max(k_base, k_cand), size=(n_resamples, k_cand))
    out: dict[str, FigureComparison] = {}
    for figure in figures:
        sides = (_side_figure(full_base[figure]), _side_figure(full_cand[figure]))
        rb, rc = resampled_base[figure], resampled_cand[figure]
        mb, mc = _nanmean(rb, 0), _nanmean(rc, 0)
        replicates = mc - mb
        if with_replicates:
            replicates = replicates + _noise(rc, mc, rb, mb, draws_cand, draws_base)
        point = (
            None
            if sides[0].point is None or sides[1].point is None
            else sides[1].point - sides[0].point
        )
        intervals, std_error, drop_rate = _intervals(point, replicates, n_resamples, levels)
        out[figure] = FigureComparison(
            figure, sides[0], sides[1], point, std_error, drop_rate, intervals
        )
    return ExperimentComparison(
        figures=out,
        method=DISCUSSIONS_AND_REPLICATES if with_replicates else DISCUSSIONS_ONLY,
        n_discussions=n_discussions,
        n_baseline=k_base,
        n_candidate=k_cand,
        n_resamples=n_resamples,
        seed=seed,
        levels=levels,
    )


def _noise(
    rc: np.ndarray, mc: np.ndarray, rb: np.ndarray, mb: np.ndarray, dc: np.ndarray, db: np.ndarray
) -> np.ndarray:
    """The candidate's replicate term minus the baseline's; a side of one run borrows the
    other side's replicates (draws taken modulo their number)."""
    source_c = (rc, mc) if rc.shape[0] > 1 else (rb, mb)
    source_b = (rb, mb) if rb.shape[0] > 1 else (rc, mc)
    term_c = _replicate_term(*source_c, dc % source_c[0].shape[0])
    term_b = _replicate_term(*source_b, db % source_b[0].shape[0])
    return term_c - term_b


def configuration_intervals(
    replicates: Sequence[np.ndarray],
    *,
    layout: Layout,
    n_resamples: int,
    seed: int,
    figures: Sequence[str] = FIGURES,
    levels: Sequence[float] = LEVELS,
) -> dict[str, ConfigurationInterval]:
    """One configuration's figures (mean over replicates) with the same two-stage intervals
    (as a difference's, for one side: the verdict says whether it is above 0)."""
    check_resamples(n_resamples)
    levels = _check_levels(levels)
    stacked = _stack(replicates, len(layout.columns))
    counts = draw_counts(stacked.shape[1], n_resamples=n_resamples, seed=seed)
    (resampled,) = _resampled((stacked,), layout, figures, counts)
    k = stacked.shape[0]
    draws = np.random.RandomState(seed + 1).randint(0, k, size=(n_resamples, k))
    out = {}
    for figure in figures:
        side = _side_figure(figure_values(stacked.sum(axis=1), layout, figure))
        values = _nanmean(resampled[figure], 0)
        if k > 1:
            values = values + _replicate_term(resampled[figure], values, draws)
        intervals, std_error, drop_rate = _intervals(side.point, values, n_resamples, levels)
        method = DISCUSSIONS_AND_REPLICATES if k > 1 else DISCUSSIONS_ONLY
        out[figure] = ConfigurationInterval(figure, side, std_error, drop_rate, intervals, method)
    return out
