"""Review savings on evalsite's own data: if the AI's most confident statements were accepted
without review, how much review would be saved, at what error rate?

Items are the subject statements with approved ground truth that a run extracted:

- confidence: one score per statement from the AI's item confidences (people, events, pair
  bonds) — ``min`` (default: a statement is as trustworthy as its weakest item), ``mean`` or
  ``product``. Items without a confidence are ignored. An extraction with no items at all
  scores ``EMPTY_CONFIDENCE`` = 1.0 (the AI asserts "nothing to extract", and nothing in it is
  uncertain); one whose items all lack a confidence scores ``UNSCORED_CONFIDENCE`` = 0.0
  (nothing to go on, so it is never auto-accepted ahead of a scored statement);
- loss: 1 − the statement's aggregate (micro) extraction F1 against the ground truth.

Figures per run: the risk-coverage curve, AURC / AUGRC with discussion-cluster bootstrap CIs,
e-AURC, "coverage at risk ≤ 5% / 10%" (share of statements that could skip review while the
mean loss of the accepted ones stays within the risk), and paired deltas against other runs
over the statements both runs extracted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.utils import timezone

from audit.models import ExtractionRun
from metrics.cards import card_state, whole_family_card_base, whole_family_row
from metrics.families.payload.items import payload_items
from metrics.families.plots import Svg, line_plot
from metrics.families.review_savings import (
    ReviewItem,
    compute_review_augrc,
    compute_review_aurc,
    compute_review_aurc_optimal,
    compute_review_curve,
    compute_review_eaurc,
    coverage_at_risk,
    operating_point_at_risk,
)
from metrics.families.review_savings.resampling import interval, intervals, review_replicates
from metrics.families.selective import RiskCoverageCurve, oracle_curve_from_losses
from metrics.models import MetricResult
from metrics.own_data.common import (
    SEED,
    GroundTruth,
    Scope,
    StatementPair,
    ground_truth_load,
    n_resamples,
    pair_score,
    result_compute,
    run_pairs_load,
    run_pairs_with_payloads,
    runs_with_ground_truth,
)
from metrics.own_data.pieces import pieces_refresh
from metrics.registry import REVIEW_SAVINGS
from metrics.results import run_key

AGGREGATORS = ("min", "mean", "product")
DEFAULT_AGGREGATOR = "min"
RISK_LEVELS = (0.05, 0.10)
EMPTY_CONFIDENCE = 1.0
UNSCORED_CONFIDENCE = 0.0
MAX_CURVE_POINTS = 200
MAX_COMPARISONS = 5

MetricFn = Callable[[Sequence[ReviewItem]], float | None]


# --- statement confidence (pure) ---------------------------------------------------------------


def item_confidence(item: dict) -> float | None:
    """The item's confidence as a float, or None when missing or not a finite number."""
    value = item.get("confidence")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def is_unscored(payload: dict | None) -> bool:
    """Items present, but none with a confidence."""
    items = payload_items(payload)
    return bool(items) and all(item_confidence(item) is None for item in items)


def statement_confidence(payload: dict | None, *, how: str = DEFAULT_AGGREGATOR) -> float:
    """One confidence for a statement from its items' confidences (see the module docstring)."""
    if how not in AGGREGATORS:
        raise ValueError(f"aggregator must be one of {AGGREGATORS}, got {how!r}")
    items = payload_items(payload)
    if not items:
        return EMPTY_CONFIDENCE
    values = [c for c in (item_confidence(item) for item in items) if c is not None]
    if not values:
        return UNSCORED_CONFIDENCE
    if how == "min":
        return min(values)
    if how == "mean":
        return math.fsum(values) / len(values)
    return math.prod(values)


@dataclass(frozen=True)
class ScoredStatement:
    statement_id: int
    discussion_id: int
    ai: dict
    f1: float


def review_item(
    *, statement_id: int, discussion_id: int, confidence: float, f1: float
) -> ReviewItem:
    """One statement as a review item: cluster = discussion, loss = 1 − F1 (within [0, 1])."""
    return ReviewItem(
        cluster_id=discussion_id,
        item_id=statement_id,
        confidence=confidence,
        loss=min(1.0, max(0.0, 1.0 - f1)),
    )


def review_items(scored: Sequence[ScoredStatement], *, how: str) -> list[ReviewItem]:
    """One ReviewItem per statement."""
    return [
        review_item(
            statement_id=s.statement_id,
            discussion_id=s.discussion_id,
            confidence=statement_confidence(s.ai, how=how),
            f1=s.f1,
        )
        for s in scored
    ]


# --- figures (pure) ----------------------------------------------------------------------------


def _thinned(indices: int, limit: int) -> list[int]:
    if indices <= limit:
        return list(range(indices))
    step = (indices - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


def curve_points(curve: RiskCoverageCurve, *, limit: int = MAX_CURVE_POINTS) -> dict[str, list]:
    """The curve's working points (thinned to ``limit``, first and last kept) for plotting."""
    keep = _thinned(len(curve.coverage), limit)
    return {
        "coverage": [curve.coverage[i] for i in keep],
        "selective_risk": [curve.selective_risk[i] for i in keep],
        "threshold": [curve.threshold[i] for i in keep],
    }


def _coverage_fn(max_risk: float) -> MetricFn:
    return partial(coverage_at_risk, max_risk=max_risk)


METRICS: dict[str, MetricFn] = {
    "aurc": compute_review_aurc,
    "augrc": compute_review_augrc,
    **{f"coverage_{round(r * 100)}": _coverage_fn(r) for r in RISK_LEVELS},
}


def metric_intervals(items: Sequence[ReviewItem], *, resamples: int) -> dict[str, dict]:
    """AURC, AUGRC and coverage at each risk level, with discussion-cluster bootstrap CIs
    (no CI when resamples is 0)."""
    points = {name: metric_fn(items) for name, metric_fn in METRICS.items()}
    if resamples == 0:
        return {name: {"point": p, "ci95": None, "std_error": None} for name, p in points.items()}
    (replicates,) = review_replicates(
        [items], risk_levels=RISK_LEVELS, n_resamples=resamples, seed=SEED
    )
    return intervals(points, replicates)


def at_risk_summary(items: Sequence[ReviewItem], *, max_risk: float, coverage: dict) -> dict:
    """Coverage at selective risk ≤ max_risk (with its CI) and the working point giving it."""
    point = operating_point_at_risk(items, max_risk=max_risk)
    return {
        "max_risk": max_risk,
        "percent": round(max_risk * 100),
        "coverage": coverage,
        "threshold": point.threshold if point else None,
        "selective_risk": point.selective_risk if point else None,
        "n_accepted": round(point.coverage * len(items)) if point else 0,
    }


def savings_summary(items: Sequence[ReviewItem], *, resamples: int) -> dict[str, Any]:
    """Curve, areas with CIs, e-AURC and the coverage readings of one aggregator."""
    if not items:
        return {"n": 0}
    curve = compute_review_curve(items)
    oracle = oracle_curve_from_losses([i.loss for i in items], n_total=len(items))
    figures = metric_intervals(items, resamples=resamples)
    return {
        "n": len(items),
        "aurc": figures["aurc"],
        "augrc": figures["augrc"],
        "eaurc": compute_review_eaurc(items),
        "aurc_optimal": compute_review_aurc_optimal(items),
        "at_risk": [
            at_risk_summary(items, max_risk=risk, coverage=figures[f"coverage_{round(risk * 100)}"])
            for risk in RISK_LEVELS
        ],
        "curve": curve_points(curve),
        "oracle_curve": curve_points(oracle),
    }


def paired_deltas(
    left: Sequence[ReviewItem], right: Sequence[ReviewItem], *, resamples: int
) -> dict[str, Any]:
    """right − left over the statements both sides have; the same discussion draws on both
    sides (a paired bootstrap)."""
    common = {i.item_id for i in left} & {i.item_id for i in right}
    left = [i for i in left if i.item_id in common]
    right = [i for i in right if i.item_id in common]
    replicates = review_replicates(
        [left, right], risk_levels=RISK_LEVELS, n_resamples=resamples, seed=SEED
    )
    deltas = {}
    for name, metric_fn in METRICS.items():
        point_left, point_right = metric_fn(left), metric_fn(right)
        difference = None if point_left is None or point_right is None else point_right - point_left
        delta = interval(difference, replicates[1][name] - replicates[0][name])
        deltas[name] = {
            "left": point_left,
            "right": point_right,
            "delta": delta["point"],
            "ci95": delta["ci95"],
        }
    return {
        "n_statements": len(common),
        "n_discussions": len({i.cluster_id for i in right}),
        "metrics": deltas,
    }


# --- per-statement pieces ------------------------------------------------------------------------


def review_piece(pair: StatementPair) -> dict[str, Any]:
    """What a statement contributes (``metrics.own_data.pieces``): its discussion, its F1
    against the ground truth, its confidence by each aggregator, and whether its extraction
    is empty or unscored."""
    return {
        "discussion_id": pair.discussion_id,
        "f1": pair_score(pair).aggregate_micro_f1,
        "confidence": {how: statement_confidence(pair.ai, how=how) for how in AGGREGATORS},
        "empty": not payload_items(pair.ai),
        "unscored": is_unscored(pair.ai),
    }


def piece_items(pieces: dict[int, dict], *, how: str) -> list[ReviewItem]:
    """The review items of pieces (in the pieces' statement order)."""
    return [
        review_item(
            statement_id=statement_id,
            discussion_id=piece["discussion_id"],
            confidence=piece["confidence"][how],
            f1=piece["f1"],
        )
        for statement_id, piece in pieces.items()
    ]


def review_pieces(
    run_id: int, pairs: Sequence[StatementPair], *, force: bool = False, only: str | None = None
) -> dict[int, dict]:
    """The run's pieces: stored ones whose inputs are unchanged, the others computed (of each,
    only the key ``only`` when given)."""

    def compute(statement_ids: list[int]) -> dict[int, dict]:
        found = run_pairs_with_payloads(run_id, statement_ids)
        return {pair.statement_id: review_piece(pair) for pair in found}

    return pieces_refresh(
        family=REVIEW_SAVINGS,
        run_id=run_id,
        stamps={p.statement_id: p.stamp for p in pairs},
        compute=compute,
        force=force,
        only=only,
    )


# --- the run result ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _RunInputs:
    run: ExtractionRun
    pairs: list[StatementPair]


def _comparison_inputs(run: ExtractionRun, gt: dict[int, GroundTruth]) -> list[_RunInputs]:
    """Up to MAX_COMPARISONS other runs (newest first) sharing statements with this one."""
    others = (
        ExtractionRun.objects.filter(pk__in=runs_with_ground_truth())
        .exclude(pk=run.pk)
        .latest_first()[:MAX_COMPARISONS]
    )
    return [_RunInputs(other, run_pairs_load(other.pk, gt, payloads=False)) for other in others]


def review_savings_values(
    pieces: dict[int, dict],
    others: Sequence[tuple[ExtractionRun, dict[int, dict]]],
    *,
    resamples: int,
) -> dict[str, Any]:
    """The run's figures from its pieces and those of the runs it is compared with."""
    by_aggregator = {how: piece_items(pieces, how=how) for how in AGGREGATORS}
    default = by_aggregator[DEFAULT_AGGREGATOR]
    comparisons = []
    for other, other_pieces in others:
        shared = {s: piece for s, piece in other_pieces.items() if s in pieces}
        if not shared:
            continue
        left = piece_items(shared, how=DEFAULT_AGGREGATOR)
        comparisons.append(
            {
                "run_id": other.pk,
                "label": other.label,
                **paired_deltas(left, default, resamples=resamples),
            }
        )
    return {
        "n_statements": len(pieces),
        "n_discussions": len({piece["discussion_id"] for piece in pieces.values()}),
        "mean_loss": (math.fsum(i.loss for i in default) / len(default)) if default else None,
        "n_empty_extractions": sum(1 for piece in pieces.values() if piece["empty"]),
        "n_unscored_extractions": sum(1 for piece in pieces.values() if piece["unscored"]),
        "empty_confidence": EMPTY_CONFIDENCE,
        "unscored_confidence": UNSCORED_CONFIDENCE,
        "default_aggregator": DEFAULT_AGGREGATOR,
        # CIs for the default aggregator only: the others are there to compare point figures.
        "aggregators": {
            how: savings_summary(items, resamples=resamples if how == DEFAULT_AGGREGATOR else 0)
            for how, items in by_aggregator.items()
        },
        "comparisons": comparisons,
        "n_resamples": resamples,
        "seed": SEED,
    }


def review_savings_result_compute(*, run_id: int, force: bool = False) -> MetricResult | None:
    """The run's review-savings figures, stored as MetricResult(review_savings, run).

    Derived from per-statement pieces: only the statements whose inputs changed are scored
    again; ``force`` (the full recompute) scores every statement of the run again."""
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    read_at = timezone.now()
    gt = ground_truth_load(payloads=False)
    pairs = run_pairs_load(run_id, gt, payloads=False)
    others = _comparison_inputs(run, gt)
    del gt
    inputs = {
        "run": [p.stamp for p in pairs],
        "others": [[o.run.pk, o.run.label, [p.stamp for p in o.pairs]] for o in others],
    }
    resamples = n_resamples()

    def compute() -> dict[str, Any]:
        return review_savings_values(
            review_pieces(run_id, pairs, force=force),
            [(o.run, review_pieces(o.run.pk, o.pairs)) for o in others],
            resamples=resamples,
        )

    return result_compute(
        family=REVIEW_SAVINGS,
        key=run_key(REVIEW_SAVINGS, run_id),
        scope=Scope.RUN,
        run_id=run_id,
        inputs=inputs,
        compute=compute,
        read_at=read_at,
        force=force,
    )


# --- the card (stored row only) ----------------------------------------------------------------

CURVE_COLUMNS = ("coverage", "selective_risk", "threshold")
AGGREGATOR_LABELS = {"min": "weakest item", "mean": "mean of items", "product": "product of items"}


def _points(curve: dict) -> list[tuple[float, float]]:
    return list(zip(curve.get("coverage", []), curve.get("selective_risk", []), strict=False))


def risk_coverage_svg(values: dict[str, Any]) -> Svg:
    """Selective risk against coverage per confidence aggregator, the oracle, and the 5%/10%
    risk levels the readings use."""
    aggregators = values.get("aggregators") or {}
    series = [
        {"label": f"confidence: {AGGREGATOR_LABELS.get(how, how)}", "points": _points(s["curve"])}
        for how, s in aggregators.items()
        if s.get("curve")
    ]
    default = aggregators.get(values.get("default_aggregator")) or {}
    if default.get("oracle_curve"):
        series.append(
            {"label": "oracle (lowest loss first)", "points": _points(default["oracle_curve"])}
        )
    for reading in default.get("at_risk", []):
        risk = reading["max_risk"]
        series.append(
            {"label": f"{reading['percent']}% error", "points": [(0.0, risk), (1.0, risk)]}
        )
    return line_plot(
        series,
        "coverage (share of statements auto-accepted)",
        "error of accepted (1 − F1)",
        x_range=(0.0, 1.0),
        title="Risk–coverage curve",
    )


def review_savings_card(run: ExtractionRun) -> dict[str, Any]:
    """The run's review-savings card (templates/metrics/cards/_review_savings.html)."""
    row = whole_family_row(REVIEW_SAVINGS, run)
    values = (row.values if row else None) or {}
    state = card_state(row, has_data=bool(values.get("n_statements")))
    default = (values.get("aggregators") or {}).get(values.get("default_aggregator")) or {}
    return {
        **whole_family_card_base(REVIEW_SAVINGS, row, state, run),
        "has_figures": bool(default.get("n")),
        "run": run,
        "values": values,
        "default": default,
        "aggregators": [
            {"name": how, "label": AGGREGATOR_LABELS.get(how, how), **summary}
            for how, summary in (values.get("aggregators") or {}).items()
            if summary.get("n")
        ],
        "curve_rows": list(
            zip(*(default.get("curve", {}).get(k, []) for k in CURVE_COLUMNS), strict=False)
        ),
        "plot": risk_coverage_svg(values) if default.get("n") else "",
    }
