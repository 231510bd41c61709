"""Selective prediction: risk-coverage curves, AURC/AUGRC and their truncated/optimal variants.

Definitions follow the selective-prediction spec (SSOT: `selective_prediction.py`):

- the unit is one item instance (participant x PHQ-8 item); `pred=None` is an abstention;
- working points group equal confidences (plateaus enter together), highest confidence first;
- AURC integrates selective risk with risk(0) = risk at the first working point, AUGRC
  integrates generalized risk with risk(0) = 0, both by the trapezoid rule over [0, Cmax];
- truncated areas interpolate linearly to land exactly on min(c, Cmax);
- risk at coverage c is the selective risk of the first working point with coverage >= c.

One implementation of the curve serves every caller: `risk_coverage_curve_from_losses` takes
the confidences and losses of the accepted (non-abstained) items plus the total item count.
The ItemPrediction functions feed it raw absolute errors and a loss divisor, the review-savings
helpers feed it precomputed losses.

Sums of losses are taken over *raw* integer errors and divided by the loss divisor afterwards:
integer-valued float sums are exact in any order, which is what lets the vectorised bootstrap
reproduce these numbers bit for bit. The integration helpers work along axis 0 of 1-D or 2-D
arrays for the same reason (the bootstrap calls them with one column per resample) and sum the
trapezoids strictly in order of coverage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Loss = Literal["abs", "abs_norm"]

# abs_norm = |pred - gt| / 3: PHQ-8 item scores run 0-3, so this maps the error onto [0, 1].
LOSS_DIVISORS: dict[str, float] = {"abs": 1.0, "abs_norm": 3.0}

# Cross products at or below this count as collinear (or concave) when building the lower hull;
# coverage <= 1 and risk <= 3, so genuine turns are far above it while rounding noise is below.
_HULL_TOLERANCE = 1e-10


@dataclass(frozen=True, slots=True)
class ItemPrediction:
    """One PHQ-8 item of one participant; `pred=None` means the model abstained."""

    participant_id: int
    item_index: int
    pred: int | None
    gt: int
    confidence: float


@dataclass(frozen=True, slots=True)
class RiskCoverageCurve:
    """Working points of the risk-coverage curve, in order of decreasing confidence."""

    coverage: tuple[float, ...]
    selective_risk: tuple[float, ...]
    generalized_risk: tuple[float, ...]
    threshold: tuple[float, ...]
    cmax: float


# --------------------------------------------------------------------------- core curve


def loss_divisor(loss: str) -> float:
    """Divisor that turns a raw absolute error into the named loss."""
    try:
        return LOSS_DIVISORS[loss]
    except KeyError:
        raise ValueError(f"loss must be one of {sorted(LOSS_DIVISORS)}, got {loss!r}") from None


def working_point_values(
    accepted: np.ndarray, raw_loss_sums: np.ndarray, n_total: np.ndarray | float, divisor: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(coverage, selective risk, generalized risk) of working points.

    The vectorised bootstrap (`bootstrap.ResampledCurves`) performs these same floating-point
    operations in the same order, which is part of why its numbers are identical.
    """
    # x / 1.0 == x exactly, so skipping the division for "abs" only saves time.
    loss_sums = raw_loss_sums if divisor == 1.0 else raw_loss_sums / divisor
    return accepted / n_total, loss_sums / accepted, loss_sums / n_total


def risk_coverage_curve_from_losses(
    confidences: Sequence[float] | np.ndarray,
    losses: Sequence[float] | np.ndarray,
    *,
    n_total: int,
    divisor: float = 1.0,
) -> RiskCoverageCurve:
    """Risk-coverage curve of the accepted items.

    `confidences` and `losses` describe the accepted (non-abstained) items only; `n_total`
    also counts the abstentions. Losses are divided by `divisor` (after summing).
    """
    conf = np.asarray(confidences, dtype=float)
    raw = np.asarray(losses, dtype=float)
    _check_curve_inputs(conf, raw, n_total)
    n_accepted = conf.size
    if n_accepted == 0:
        return RiskCoverageCurve((), (), (), (), 0.0)
    order = np.argsort(-conf, kind="stable")
    sorted_conf = conf[order]
    # Last index of each confidence plateau: the whole plateau enters at once.
    plateau_ends = np.append(np.flatnonzero(sorted_conf[1:] != sorted_conf[:-1]), n_accepted - 1)
    raw_sums = np.cumsum(raw[order])[plateau_ends]
    accepted = (plateau_ends + 1).astype(float)
    coverage, selective, generalized = working_point_values(
        accepted, raw_sums, float(n_total), divisor
    )
    return RiskCoverageCurve(
        coverage=_as_floats(coverage),
        selective_risk=_as_floats(selective),
        generalized_risk=_as_floats(generalized),
        threshold=_as_floats(sorted_conf[plateau_ends]),
        cmax=n_accepted / n_total,
    )


def _check_curve_inputs(conf: np.ndarray, raw: np.ndarray, n_total: int) -> None:
    if conf.ndim != 1 or conf.shape != raw.shape:
        raise ValueError("confidences and losses must be 1-D sequences of the same length")
    if n_total < conf.size:
        raise ValueError(f"n_total ({n_total}) is smaller than the accepted items ({conf.size})")
    if np.isnan(conf).any():
        raise ValueError("confidence must not be NaN (it cannot be ranked)")
    if not np.isfinite(raw).all() or (raw < 0).any():
        raise ValueError("losses must be finite and non-negative")


def _as_floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


# --------------------------------------------------------------------------- integration


def trapezoid_area(x: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """Trapezoid-rule area under the points (x, y), along axis 0 (one area per column)."""
    # Twice each trapezoid, summed, then halved: halving is exact in binary floating point,
    # so this equals summing the halves, one array pass cheaper.
    doubled = x[1:] - x[:-1]
    doubled *= y[1:] + y[:-1]
    return sum_left_to_right(doubled) / 2.0


def truncated_trapezoid_area(
    x: np.ndarray, y: np.ndarray, c_prime: float | np.ndarray
) -> np.ndarray | float:
    """Trapezoid area up to c' (a scalar, or one value per column of 2-D x).

    Segments wholly left of c' count fully; the segment that contains c' is cut there, its
    right end interpolated linearly; segments right of c' count zero.
    """
    x0, x1, y0, y1 = x[:-1], x[1:], y[:-1], y[1:]
    width = x1 - x0
    # Zero-width segments (repeated points) are never cut; dividing them by 1 instead of 0
    # keeps every term finite, so the 0/1 selection below can be done by multiplication,
    # which is exact (t * 1 + 0 == t) and far faster than np.where on large arrays.
    y_cut = y0 + (c_prime - x0) * (y1 - y0) / (width + (width == 0))
    doubled_full = width * (y0 + y1)
    doubled_cut = (c_prime - x0) * (y0 + y_cut)
    is_full = x1 <= c_prime
    is_cut = (x0 < c_prime) & (c_prime < x1)
    return sum_left_to_right(doubled_full * is_full + doubled_cut * is_cut) / 2.0


def sum_left_to_right(terms: np.ndarray) -> np.ndarray | float:
    """Sum along axis 0 strictly in order (first term first).

    np.sum would pair terms up differently depending on the array length; a running sum does
    not, so zero-width padding segments (as in the vectorised bootstrap) change nothing.
    Columns of a 2-D array are summed as one running sum per column.
    """
    if terms.ndim == 1:
        # np.cumsum accumulates one term at a time: out[i] = out[i - 1] + terms[i].
        return float(np.cumsum(terms)[-1]) if terms.size else 0.0
    total = np.zeros(terms.shape[1:])
    for row in terms:  # one vector add per term: much faster than cumsum along axis 0
        total += row
    return total


def _augmented(curve: RiskCoverageCurve, kind: Literal["aurc", "augrc"]) -> tuple[np.ndarray, ...]:
    """Curve points with the coverage-0 point prepended, per the AURC/AUGRC convention."""
    x = np.array([0.0, *curve.coverage])
    if kind == "aurc":
        y = np.array([curve.selective_risk[0], *curve.selective_risk])
    else:
        y = np.array([0.0, *curve.generalized_risk])
    return x, y


def area_under_curve(curve: RiskCoverageCurve, *, kind: Literal["aurc", "augrc"]) -> float:
    """AURC (selective risk) or AUGRC (generalized risk) over [0, Cmax]; 0.0 without points."""
    if not curve.coverage:
        return 0.0
    x, y = _augmented(curve, kind)
    return float(trapezoid_area(x, y))


def truncated_area_under_curve(
    curve: RiskCoverageCurve, *, max_coverage: float, kind: Literal["aurc", "augrc"]
) -> float:
    """Area over [0, min(max_coverage, Cmax)]; 0.0 without points."""
    _check_coverage(max_coverage, "max_coverage")
    if not curve.coverage:
        return 0.0
    x, y = _augmented(curve, kind)
    c_prime = min(max_coverage, curve.coverage[-1])
    return float(truncated_trapezoid_area(x, y, c_prime))


def selective_risk_at_coverage(curve: RiskCoverageCurve, *, target_coverage: float) -> float | None:
    """Selective risk of the first working point with coverage >= target (None if none)."""
    _check_coverage(target_coverage, "target_coverage")
    for coverage, risk in zip(curve.coverage, curve.selective_risk, strict=True):
        if coverage >= target_coverage:
            return risk
    return None


def _check_coverage(value: float, name: str) -> None:
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")


# --------------------------------------------------------------------------- oracle and hull


def oracle_curve_from_losses(
    losses: Sequence[float] | np.ndarray, *, n_total: int, divisor: float = 1.0
) -> RiskCoverageCurve:
    """Curve of an oracle that accepts the lowest losses first (ties kept in input order)."""
    raw = np.asarray(losses, dtype=float)
    order = np.argsort(raw, kind="stable")
    # Distinct, decreasing confidences: every item is its own working point, as in the SSOT.
    ranks = -np.arange(raw.size, dtype=float)
    return risk_coverage_curve_from_losses(ranks, raw[order], n_total=n_total, divisor=divisor)


def lower_convex_hull(curve: RiskCoverageCurve) -> RiskCoverageCurve:
    """Working points on the lower convex hull of (coverage, selective risk).

    Monotone chain over points already sorted by coverage; a point is dropped when it makes a
    clockwise turn or lies on the line through its neighbours (collinear points dropped).
    """
    kept: list[int] = []
    points = list(zip(curve.coverage, curve.selective_risk, strict=True))
    for index, point in enumerate(points):
        while len(kept) >= 2 and not _turns_left(points[kept[-2]], points[kept[-1]], point):
            kept.pop()
        kept.append(index)
    return RiskCoverageCurve(
        coverage=tuple(curve.coverage[i] for i in kept),
        selective_risk=tuple(curve.selective_risk[i] for i in kept),
        generalized_risk=tuple(curve.generalized_risk[i] for i in kept),
        threshold=tuple(curve.threshold[i] for i in kept),
        cmax=curve.cmax,
    )


def _turns_left(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether o -> a -> b turns counter-clockwise (z of (a - o) x (b - o) above tolerance)."""
    cross = (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    return cross > _HULL_TOLERANCE


# --------------------------------------------------------------------------- item predictions


def predicted_confidences_and_errors(
    items: Sequence[ItemPrediction],
) -> tuple[np.ndarray, np.ndarray]:
    """Confidences and raw absolute errors |pred - gt| of the non-abstained items."""
    predicted = [item for item in items if item.pred is not None]
    confidences = np.array([item.confidence for item in predicted], dtype=float)
    errors = np.array(
        [abs(pred - item.gt) for item in predicted if (pred := item.pred) is not None], dtype=float
    )
    return confidences, errors


def compute_cmax(items: Sequence[ItemPrediction]) -> float:
    """Maximum achievable coverage: share of items with a prediction (0.0 for no items)."""
    if not items:
        return 0.0
    return sum(1 for item in items if item.pred is not None) / len(items)


def compute_risk_coverage_curve(
    items: Sequence[ItemPrediction], *, loss: Loss
) -> RiskCoverageCurve:
    """Risk-coverage curve over all items (abstentions count in the coverage denominator)."""
    divisor = loss_divisor(loss)
    confidences, errors = predicted_confidences_and_errors(items)
    return risk_coverage_curve_from_losses(confidences, errors, n_total=len(items), divisor=divisor)


def compute_aurc(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """Area under the (selective) risk-coverage curve over [0, Cmax]."""
    return area_under_curve(compute_risk_coverage_curve(items, loss=loss), kind="aurc")


def compute_augrc(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """Area under the generalized risk-coverage curve over [0, Cmax]."""
    return area_under_curve(compute_risk_coverage_curve(items, loss=loss), kind="augrc")


def compute_aurc_at_coverage(
    items: Sequence[ItemPrediction], *, max_coverage: float, loss: Loss
) -> float:
    """AURC truncated at min(max_coverage, Cmax)."""
    curve = compute_risk_coverage_curve(items, loss=loss)
    return truncated_area_under_curve(curve, max_coverage=max_coverage, kind="aurc")


def compute_augrc_at_coverage(
    items: Sequence[ItemPrediction], *, max_coverage: float, loss: Loss
) -> float:
    """AUGRC truncated at min(max_coverage, Cmax)."""
    curve = compute_risk_coverage_curve(items, loss=loss)
    return truncated_area_under_curve(curve, max_coverage=max_coverage, kind="augrc")


def compute_risk_at_coverage(
    items: Sequence[ItemPrediction], *, target_coverage: float, loss: Loss
) -> float | None:
    """MAE@coverage: selective risk of the first working point reaching the target."""
    _check_coverage(target_coverage, "target_coverage")
    curve = compute_risk_coverage_curve(items, loss=loss)
    return selective_risk_at_coverage(curve, target_coverage=target_coverage)


def _oracle_curve(items: Sequence[ItemPrediction], loss: Loss) -> RiskCoverageCurve:
    divisor = loss_divisor(loss)
    _, errors = predicted_confidences_and_errors(items)
    return oracle_curve_from_losses(errors, n_total=len(items), divisor=divisor)


def compute_aurc_optimal(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """AURC of the oracle ranking (lowest loss first; abstentions stay abstained)."""
    return area_under_curve(_oracle_curve(items, loss), kind="aurc")


def compute_augrc_optimal(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """AUGRC of the oracle ranking (lowest loss first; abstentions stay abstained)."""
    return area_under_curve(_oracle_curve(items, loss), kind="augrc")


def compute_eaurc(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """Excess AURC: AURC - AURC_optimal."""
    return compute_aurc(items, loss=loss) - compute_aurc_optimal(items, loss=loss)


def compute_eaugrc(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """Excess AUGRC: AUGRC - AUGRC_optimal."""
    return compute_augrc(items, loss=loss) - compute_augrc_optimal(items, loss=loss)


def compute_aurc_achievable(items: Sequence[ItemPrediction], *, loss: Loss) -> float:
    """AURC of the lower convex hull of the working points (the achievable frontier)."""
    hull = lower_convex_hull(compute_risk_coverage_curve(items, loss=loss))
    return area_under_curve(hull, kind="aurc")


# What ``metrics.families.selective`` exports.
__all__ = [
    "LOSS_DIVISORS",
    "ItemPrediction",
    "Loss",
    "RiskCoverageCurve",
    "area_under_curve",
    "compute_augrc",
    "compute_augrc_at_coverage",
    "compute_augrc_optimal",
    "compute_aurc",
    "compute_aurc_achievable",
    "compute_aurc_at_coverage",
    "compute_aurc_optimal",
    "compute_cmax",
    "compute_eaugrc",
    "compute_eaurc",
    "compute_risk_at_coverage",
    "compute_risk_coverage_curve",
    "loss_divisor",
    "lower_convex_hull",
    "oracle_curve_from_losses",
    "predicted_confidences_and_errors",
    "risk_coverage_curve_from_losses",
    "selective_risk_at_coverage",
    "sum_left_to_right",
    "trapezoid_area",
    "truncated_area_under_curve",
    "truncated_trapezoid_area",
    "working_point_values",
]
