"""The figures of one confidence variant over a run (point metrics, the MAE grid, bootstrap
intervals), and the paired deltas between two variants.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .bootstrap import (
    BootstrapDeltaResult,
    BootstrapResult,
    SelectiveMetric,
    bootstrap_metrics_by_participant,
    paired_bootstrap_deltas_by_participant,
)
from .curves import (
    ItemPrediction,
    compute_augrc,
    compute_augrc_at_coverage,
    compute_augrc_optimal,
    compute_aurc,
    compute_aurc_achievable,
    compute_aurc_at_coverage,
    compute_aurc_optimal,
    compute_cmax,
    compute_risk_coverage_curve,
    selective_risk_at_coverage,
)
from .run_options import SelectiveSettings


def _grid_key(coverage: float) -> str:
    return f"{coverage:.2f}"


def _area_metrics(settings: SelectiveSettings) -> dict[str, SelectiveMetric]:
    loss, area = settings.loss, settings.area_coverage
    return {
        "aurc_full": SelectiveMetric.aurc(loss=loss),
        "augrc_full": SelectiveMetric.augrc(loss=loss),
        "aurc_at_c": SelectiveMetric.aurc_at_coverage(max_coverage=area, loss=loss),
        "augrc_at_c": SelectiveMetric.augrc_at_coverage(max_coverage=area, loss=loss),
        "cmax": SelectiveMetric.cmax(),
    }


def _mae_metrics(settings: SelectiveSettings) -> dict[str, SelectiveMetric]:
    return {
        _grid_key(c): SelectiveMetric.risk_at_coverage(target_coverage=c, loss=settings.loss)
        for c in settings.coverage_grid
    }


def _point_metrics(items: Sequence[ItemPrediction], settings: SelectiveSettings) -> dict[str, Any]:
    loss, area = settings.loss, settings.area_coverage
    cmax = compute_cmax(items)
    aurc, augrc = compute_aurc(items, loss=loss), compute_augrc(items, loss=loss)
    aurc_optimal = compute_aurc_optimal(items, loss=loss)
    augrc_optimal = compute_augrc_optimal(items, loss=loss)
    achievable = compute_aurc_achievable(items, loss=loss)
    truncated = {"requested": area, "used": min(area, cmax)}
    return {
        "cmax": cmax,
        "aurc_full": aurc,
        "augrc_full": augrc,
        "aurc_optimal": aurc_optimal,
        "augrc_optimal": augrc_optimal,
        "eaurc": aurc - aurc_optimal,
        "eaugrc": augrc - augrc_optimal,
        "aurc_achievable": achievable,
        "interpretation": {
            "aurc_gap_pct": _percent(aurc - aurc_optimal, aurc_optimal),
            "augrc_gap_pct": _percent(augrc - augrc_optimal, augrc_optimal),
            "achievable_gain_pct": _percent(aurc - achievable, aurc),
        },
        "aurc_at_c": {
            **truncated,
            "value": compute_aurc_at_coverage(items, max_coverage=area, loss=loss),
        },
        "augrc_at_c": {
            **truncated,
            "value": compute_augrc_at_coverage(items, max_coverage=area, loss=loss),
        },
    }


def _percent(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def _mae_grid(items: Sequence[ItemPrediction], settings: SelectiveSettings) -> dict[str, Any]:
    curve = compute_risk_coverage_curve(items, loss=settings.loss)
    grid: dict[str, Any] = {}
    for c in settings.coverage_grid:
        value = selective_risk_at_coverage(curve, target_coverage=c)
        achieved = next((cov for cov in curve.coverage if cov >= c), None)
        grid[_grid_key(c)] = (
            None if value is None else {"requested": c, "achieved": achieved, "value": value}
        )
    return grid


def _ci(result: BootstrapResult | BootstrapDeltaResult) -> list[float] | None:
    return None if result.ci95 is None else list(result.ci95)


def _bootstrap_block(
    items: Sequence[ItemPrediction], settings: SelectiveSettings
) -> dict[str, Any]:
    if settings.n_resamples == 0:
        return {}
    results = bootstrap_metrics_by_participant(
        items, metrics=_all_metrics(settings), n_resamples=settings.n_resamples, seed=settings.seed
    )
    mae = {key: results[f"mae:{key}"] for key in _mae_metrics(settings)}
    return {
        "seed": settings.seed,
        "n_resamples": settings.n_resamples,
        "ci95": {
            **{name: _ci(results[name]) for name in _area_metrics(settings)},
            "mae_at_coverage": {
                key: None if r.point_estimate is None else _ci(r) for key, r in mae.items()
            },
        },
        "drop_rate": {
            "mae_at_coverage": {
                key: 1.0 if r.point_estimate is None else r.drop_rate for key, r in mae.items()
            }
        },
    }


def variant_metrics(items: Sequence[ItemPrediction], settings: SelectiveSettings) -> dict[str, Any]:
    """The per-variant block of the artifact for one input."""
    curve = compute_risk_coverage_curve(items, loss=settings.loss)
    return {
        **_point_metrics(items, settings),
        "mae_at_coverage": _mae_grid(items, settings),
        "bootstrap": _bootstrap_block(items, settings),
        "curve": {
            "coverage": list(curve.coverage),
            "selective_risk": list(curve.selective_risk),
            "generalized_risk": list(curve.generalized_risk),
            "threshold": list(curve.threshold),
        },
    }


def _all_metrics(settings: SelectiveSettings) -> dict[str, SelectiveMetric]:
    """Area metrics under their artifact names, MAE@c under 'mae:<c>'."""
    mae = {f"mae:{key}": metric for key, metric in _mae_metrics(settings).items()}
    return {**_area_metrics(settings), **mae}


def _mae_delta(result: BootstrapDeltaResult) -> dict[str, Any]:
    # As for a single run: no interval around an undefined point estimate.
    undefined = result.delta_point_estimate is None
    return {
        "delta": result.delta_point_estimate,
        "ci95": None if undefined else _ci(result),
        "drop_rate": result.drop_rate,
    }


def variant_deltas(
    left: Sequence[ItemPrediction], right: Sequence[ItemPrediction], settings: SelectiveSettings
) -> dict[str, Any]:
    """Paired deltas (right - left) with bootstrap CIs for one variant."""
    results = paired_bootstrap_deltas_by_participant(
        left,
        right,
        metrics=_all_metrics(settings),
        n_resamples=settings.n_resamples,
        seed=settings.seed,
    )
    deltas: dict[str, Any] = {
        name: {"delta": results[name].delta_point_estimate, "ci95": _ci(results[name])}
        for name in _area_metrics(settings)
    }
    deltas["mae_at_coverage"] = {
        key: _mae_delta(results[f"mae:{key}"]) for key in _mae_metrics(settings)
    }
    return deltas
