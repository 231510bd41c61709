"""Review triage of one extraction run, as a stored result (family ``triage``, scope run).

Recomputed whenever approved ground truth, the run's extractions or its triage settings change:

1. every subject statement the run extracted gets a confidence score (``selective.triage``:
   weakest item confidence, times the agreement with the newest other run's extraction of the
   same statement when there is one);
2. the approved statements are the calibration set: loss 1 when the extraction's aggregate F1
   is below the acceptability level; ``risk_controlled_threshold`` (Learn then Test,
   discussions as units) gives tau, its bound and coverage;
3. the QA sample's results since triage was (re)enabled feed the monitor;
4. the outcome goes down to audit: the uncoded statements at or above tau become AI accepted
   (provisional) but for the QA sample (``audit.services.triage.triage_statements_apply``),
   or, when the monitor trips, triage suspends itself (``triage_suspend``).

The figures are computed (and stored) whether triage is on or off, so an admin sees what it
would do before turning it on.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils import timezone

from audit.models import (
    Extraction,
    ExtractionRun,
    FeedbackRevision,
    Speaker,
    TriageSettings,
    TriageStatement,
)
from audit.selectors import triage_counts
from audit.services.triage import (
    qa_drawn,
    triage_settings_get,
    triage_statements_apply,
    triage_suspend,
)
from metrics.cards import card_state, whole_family_card_base, whole_family_row
from metrics.families.plots import Svg, line_plot
from metrics.families.selective.triage import (
    calibrated_scores,
    risk_controlled_threshold,
    risk_monitor,
    statement_loss,
    statement_score,
    statement_signals,
)
from metrics.match_settings import match_settings
from metrics.models import MetricResult
from metrics.own_data.common import (
    GroundTruth,
    Scope,
    StatementPair,
    ground_truth_load,
    pair_score,
    result_compute,
)
from metrics.registry import TRIAGE
from metrics.results import run_key

# Without measured coding times: a documented estimate of an auditor's time per statement
# (reading it, checking people, events and bonds against the AI's, submitting). docs/triage.md.
ESTIMATED_SECONDS_PER_STATEMENT = 90.0
# A start-to-submit span longer than this was an interrupted session, not coding time.
MAX_MEASURED_SECONDS = 30 * 60
MIN_MEASURED = 5  # fewer measured statements than this: use the estimate


@dataclass(frozen=True)
class RunStatement:
    statement_id: int
    discussion_id: int
    ai: dict
    other: dict | None  # the partner run's extraction of the same statement
    stamp: tuple


def _partner_run(run: ExtractionRun) -> ExtractionRun | None:
    """The newest other run: the consistency signal compares this run with it."""
    return ExtractionRun.objects.exclude(pk=run.pk).latest_first().first()


def run_statements_load(run: ExtractionRun, partner: ExtractionRun | None) -> list[RunStatement]:
    """Every subject statement the run extracted, with the partner run's extraction."""
    rows = (
        Extraction.objects.filter(run=run, statement__speaker__type=Speaker.Type.SUBJECT)
        .order_by("statement_id")
        .values_list("statement_id", "statement__discussion_id", "pdp_deltas", "updated_at")
    )
    others: dict[int, tuple[dict, Any]] = {}
    if partner is not None:
        others = {
            sid: (payload, updated)
            for sid, payload, updated in Extraction.objects.filter(run=partner).values_list(
                "statement_id", "pdp_deltas", "updated_at"
            )
        }
    out = []
    for sid, discussion_id, payload, updated in rows.iterator():
        other, other_updated = others.get(sid, (None, None))
        out.append(RunStatement(sid, discussion_id, payload, other, (sid, updated, other_updated)))
    return out


def _scores(
    statements: Sequence[RunStatement], losses: dict[int, int], *, calibrated: bool
) -> dict[int, float]:
    """Every statement's confidence: the raw score, or P(acceptable) from the calibrator fitted
    on the approved statements of the other discussions (``calibrated_scores``)."""
    settings = match_settings()
    signals = [statement_signals(s.ai, other=s.other, settings=settings) for s in statements]
    if not calibrated:
        values = [statement_score(signal) for signal in signals]
    else:
        acceptable = [
            None if s.statement_id not in losses else losses[s.statement_id] == 0
            for s in statements
        ]
        values = calibrated_scores(signals, acceptable, [s.discussion_id for s in statements])
    return {s.statement_id: v for s, v in zip(statements, values, strict=True)}


def _loss(s: RunStatement, gt: GroundTruth, acceptable_f1: float) -> int:
    pair = StatementPair(s.statement_id, s.discussion_id, s.ai, gt.payload, ())
    return statement_loss(pair_score(pair).aggregate_micro_f1, acceptable_f1=acceptable_f1)


# --- the QA monitor ------------------------------------------------------------------------------


def qa_results_load(settings: TriageSettings, gt: dict[int, GroundTruth]) -> list[tuple]:
    """QA statements of the run coded and approved since triage was (re)enabled, in order of
    approval: (statement id, approved at)."""
    if settings.pk is None or settings.enabled_at is None:
        return []
    rows = TriageStatement.objects.filter(
        run_id=settings.run_id,
        qa=True,
        statement__feedback__status="approved",
        statement__feedback__approved_at__gte=settings.enabled_at,
    ).values_list("statement_id", "statement__feedback__approved_at")
    return sorted(((sid, at) for sid, at in rows if sid in gt), key=lambda r: (r[1], r[0]))


def monitor_values(
    qa: Sequence[tuple], losses: dict[int, int], settings: TriageSettings
) -> dict[str, Any]:
    state = risk_monitor([losses[sid] for sid, _ in qa], alpha=settings.alpha, delta=settings.delta)
    history = [
        {"statement_id": sid, "approved_at": at.isoformat(), "loss": losses[sid], "e_value": e}
        for (sid, at), e in zip(qa, state.e_values, strict=True)
    ]
    return {**state.to_dict(), "history": history}


def monitor_reason(monitor: dict[str, Any], alpha: float) -> str:
    return (
        f"the QA monitor found {monitor['n_unacceptable']} unacceptable statements in "
        f"{monitor['tripped_at'] + 1} QA results: evidence {monitor['e_values'][-1]:.1f} "
        f"≥ {monitor['level']:.0f} (1/δ) that the risk of what triage accepts exceeds "
        f"α = {alpha:.0%}"
    )


# --- time per statement --------------------------------------------------------------------------


def seconds_per_statement() -> tuple[float, str]:
    """Median start-to-submit time of coded statements (spans over 30 minutes left out, as
    interrupted sessions), or the documented estimate when fewer than 5 were measured."""
    starts = dict(
        FeedbackRevision.objects.filter(action="start").values_list("feedback_id", "created_at")
    )
    spans = []
    for feedback_id, submitted in FeedbackRevision.objects.filter(action="submit").values_list(
        "feedback_id", "created_at"
    ):
        if feedback_id in starts:
            span = (submitted - starts[feedback_id]).total_seconds()
            if 0 < span <= MAX_MEASURED_SECONDS:
                spans.append(span)
    if len(spans) < MIN_MEASURED:
        return ESTIMATED_SECONDS_PER_STATEMENT, "estimate"
    return float(statistics.median(spans)), f"measured on {len(spans)} statements"


# --- the result ----------------------------------------------------------------------------------


def _settings_values(settings: TriageSettings) -> dict[str, Any]:
    return {
        **settings.chosen(),
        "state": settings.state,
        "enabled_at": settings.enabled_at.isoformat() if settings.enabled_at else None,
        "suspended_reason": settings.suspended_reason,
    }


def triage_values(
    statements: Sequence[RunStatement],
    gt: dict[int, GroundTruth],
    settings: TriageSettings,
    qa: Sequence[tuple],
    timing: tuple[float, str],
) -> dict[str, Any]:
    approved = [s for s in statements if s.statement_id in gt]
    losses = {
        s.statement_id: _loss(s, gt[s.statement_id], settings.acceptable_f1) for s in approved
    }
    calibrated = settings.score == TriageSettings.Score.CALIBRATED
    scores = _scores(statements, losses, calibrated=calibrated)
    threshold = risk_controlled_threshold(
        [scores[s.statement_id] for s in approved],
        [losses[s.statement_id] for s in approved],
        alpha=settings.alpha,
        delta=settings.delta,
        clusters=[s.discussion_id for s in approved],
    )
    qa_losses = {sid: losses[sid] for sid, _ in qa if sid in losses}
    unreviewed = {
        s.statement_id: scores[s.statement_id] for s in statements if s.statement_id not in gt
    }
    tau = threshold.threshold
    above = sorted(sid for sid, score in unreviewed.items() if tau is not None and score >= tau)
    saved = [
        sid
        for sid in above
        if not qa_drawn(run_id=settings.run_id, statement_id=sid, rate=settings.qa_rate)
    ]
    seconds, timing_source = timing
    return {
        "settings": _settings_values(settings),
        "score": TriageSettings.Score(settings.score).label,
        "threshold": threshold.to_dict(),
        "n_statements": len(statements),
        "n_calibration": len(approved),
        "n_calibration_discussions": threshold.n_units,
        "n_unacceptable": sum(losses.values()),
        "n_unreviewed": len(unreviewed),
        "n_above": len(above),
        "coverage_unreviewed": len(above) / len(unreviewed) if unreviewed else 0.0,
        "n_saved": len(saved),
        "seconds_per_statement": seconds,
        "timing_source": timing_source,
        "hours_saved": len(saved) * seconds / 3600,
        "accepted_ids": above,
        "scores": {str(sid): score for sid, score in unreviewed.items()},
        "monitor": monitor_values(qa, qa_losses, settings),
    }


def triage_result_compute(*, run_id: int, force: bool = False) -> MetricResult | None:
    """Compute (or confirm) the run's triage result, then apply it to the queue."""
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    read_at = timezone.now()
    settings = triage_settings_get(run=run)
    gt = ground_truth_load()
    partner = _partner_run(run)
    statements = run_statements_load(run, partner)
    gt = {sid: g for sid, g in gt.items() if sid in {s.statement_id for s in statements}}
    qa = qa_results_load(settings, gt)
    timing = seconds_per_statement()
    inputs = {
        "settings": _settings_values(settings),
        "partner": partner.pk if partner else None,
        "statements": [s.stamp for s in statements],
        "gt": [g.stamp for g in gt.values()],
        "qa": [(sid, at.isoformat()) for sid, at in qa],
        "timing": timing,
    }
    row = result_compute(
        family=TRIAGE,
        key=run_key(TRIAGE, run_id),
        scope=Scope.RUN,
        run_id=run_id,
        inputs=inputs,
        compute=lambda: triage_values(statements, gt, settings, qa, timing),
        read_at=read_at,
        force=force,
    )
    triage_apply(run_id=run_id, values=row.values or {})
    return row


def triage_apply(*, run_id: int, values: dict[str, Any]) -> None:
    """Hand the outcome down to audit: suspend when the monitor tripped, else (re)mark the
    provisional statements. audit does nothing unless triage is active."""
    monitor = values.get("monitor") or {}
    alpha = (values.get("settings") or {}).get("alpha", 0.0)
    if monitor.get("tripped"):
        triage_suspend(
            run_id=run_id,
            reason=monitor_reason(monitor, alpha),
            details={"e_value": monitor["e_values"][-1], "n_qa": monitor["n"]},
        )
        return
    scores = {int(sid): score for sid, score in (values.get("scores") or {}).items()}
    triage_statements_apply(
        run_id=run_id,
        scores=scores,
        accepted=values.get("accepted_ids") or [],
        threshold=(values.get("threshold") or {}).get("threshold"),
    )


# --- the card ------------------------------------------------------------------------------------


def triage_svg(values: dict[str, Any]) -> Svg:
    """Observed risk against coverage over the candidate thresholds, the risk level alpha, and
    the chosen point (tau) with its guaranteed bound."""
    threshold = values.get("threshold") or {}
    curve = threshold.get("curve") or {}
    alpha = threshold.get("alpha", 0.0)
    series: list[dict[str, Any]] = [
        {
            "label": "observed risk (by discussion) when accepting down to each score",
            "points": list(zip(curve.get("coverage", []), curve.get("risk", []), strict=False)),
        },
        {"label": f"α = {alpha:.0%}", "points": [(0.0, alpha), (1.0, alpha)]},
    ]
    if threshold.get("threshold") is not None:
        coverage = threshold["coverage"]
        series.append(
            {
                "label": f"chosen τ = {threshold['threshold']:.3f}: observed risk … bound",
                "points": [(coverage, threshold["risk"]), (coverage, threshold["bound"])],
            }
        )
    return line_plot(
        series,
        "coverage (share of approved statements at or above the threshold)",
        "share unacceptable",
        x_range=(0.0, 1.0),
        markers=True,
        title="Review triage: risk against coverage",
    )


def triage_card(run: ExtractionRun) -> dict[str, Any]:
    """The run's review-triage card (templates/metrics/cards/_triage.html)."""
    row = whole_family_row(TRIAGE, run)
    values = (row.values if row else None) or {}
    state = card_state(row, has_data=bool(values.get("n_statements")))
    settings = triage_settings_get(run=run)
    monitor = values.get("monitor") or {}
    return {
        **whole_family_card_base(TRIAGE, row, state, run),
        "has_figures": bool(values.get("n_statements")),
        "run": run,
        "values": values,
        "threshold": values.get("threshold") or {},
        "monitor": monitor,
        "history": list(reversed(monitor.get("history") or []))[:20],
        "confidence_pct": round(100 * (1 - (values.get("threshold") or {}).get("delta", 0.1))),
        "settings": settings,
        "live": triage_counts(run_id=run.pk),
        "settings_url": reverse("metrics:triage_settings", args=[run.pk]),
        "plot": triage_svg(values) if values.get("threshold") else "",
    }
