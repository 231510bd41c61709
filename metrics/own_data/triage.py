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
from collections.abc import Container, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.urls import reverse
from django.utils import timezone

from audit.models import (
    Extraction,
    ExtractionRun,
    FeedbackRevision,
    RunConfiguration,
    Speaker,
    TriageSettings,
    TriageStatement,
)
from audit.selectors.queues import triage_counts
from audit.services.triage import (
    qa_drawn,
    triage_settings_get,
    triage_statements_apply,
    triage_suspend,
)
from evalsite.match_settings import match_settings
from metrics.cards import card_state, whole_family_card_base, whole_family_row
from metrics.families.extraction import MatchSettings
from metrics.families.plots import Svg, line_plot
from metrics.families.selective.triage import (
    StatementSignals,
    calibrated_scores,
    risk_controlled_threshold,
    risk_monitor,
    statement_loss,
    statement_score,
    statement_signals,
)
from metrics.models import MetricResult
from metrics.own_data.common import (
    GroundTruth,
    Scope,
    ground_truth_load,
    result_compute,
    run_pairs_load,
)
from metrics.own_data.pieces import pieces_refresh
from metrics.own_data.review_savings import review_pieces
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
    """A subject statement the run extracted, without payloads: what tells its piece changed."""

    statement_id: int
    discussion_id: int
    stamp: tuple  # (statement id, extraction updated_at, the partner's extraction updated_at)


def _partner_run(run: ExtractionRun) -> ExtractionRun | None:
    """The newest other run that extracts statement by statement: the consistency signal
    compares this run's extraction of each statement with it (a whole-discussion run has
    none to compare)."""
    others = ExtractionRun.objects.exclude(pk=run.pk).exclude(
        configuration__unit=RunConfiguration.Unit.DISCUSSION
    )
    return others.latest_first().first()


def _subject_extractions(run_id: int) -> Any:
    return Extraction.objects.filter(run_id=run_id, statement__speaker__type=Speaker.Type.SUBJECT)


def run_statements_load(run: ExtractionRun, partner: ExtractionRun | None) -> list[RunStatement]:
    """Every subject statement the run extracted, in statement order (no payloads)."""
    others: dict[int, Any] = {}
    if partner is not None:
        rows = Extraction.objects.filter(run=partner).values_list("statement_id", "updated_at")
        others = dict(rows.iterator(chunk_size=5000))
    found = (
        _subject_extractions(run.pk)
        .order_by("statement_id")
        .values_list("statement_id", "statement__discussion_id", "updated_at")
    )
    return [
        RunStatement(sid, discussion_id, (sid, updated, others.get(sid)))
        for sid, discussion_id, updated in found.iterator(chunk_size=5000)
    ]


# --- per-statement pieces ------------------------------------------------------------------------


def signals_piece(
    discussion_id: int, ai: dict | None, other: dict | None, *, settings: MatchSettings
) -> dict[str, Any]:
    """What a statement contributes beyond its F1 (``metrics.own_data.pieces``): its
    discussion and its score's signals (item confidences, agreement with the partner run)."""
    signals = statement_signals(ai, other=other, settings=settings)
    return {"discussion_id": discussion_id, "signals": asdict(signals)}


def signals_pieces(
    run_id: int, statements: Sequence[RunStatement], partner_id: int | None, *, force: bool
) -> dict[int, dict]:
    """The run's signal pieces: stored ones whose inputs (the statement's extraction in this
    run and in the partner run) are unchanged, the others computed."""
    discussion_of = {s.statement_id: s.discussion_id for s in statements}
    settings = match_settings()

    def compute(statement_ids: list[int]) -> dict[int, dict]:
        ai = _subject_extractions(run_id).filter(statement_id__in=statement_ids)
        others: dict[int, dict] = {}
        if partner_id is not None:
            rows = Extraction.objects.filter(run_id=partner_id, statement_id__in=statement_ids)
            others = dict(rows.values_list("statement_id", "pdp_deltas"))
        return {
            sid: signals_piece(discussion_of[sid], payload, others.get(sid), settings=settings)
            for sid, payload in ai.values_list("statement_id", "pdp_deltas")
        }

    return pieces_refresh(
        family=TRIAGE,
        run_id=run_id,
        stamps={s.statement_id: (*s.stamp, partner_id) for s in statements},
        compute=compute,
        force=force,
    )


def statement_f1s(
    run_id: int, gt: dict[int, GroundTruth], *, force: bool
) -> dict[int, float | None]:
    """Each approved statement's F1 against its ground truth, by statement id: the review
    savings family's pieces hold it (computed once for both families)."""
    pairs = run_pairs_load(run_id, gt, payloads=False)
    pieces = review_pieces(run_id, pairs, force=force, only="f1")
    return {sid: piece["f1"] for sid, piece in pieces.items()}


def _scores(
    pieces: dict[int, dict], losses: dict[int, int], *, calibrated: bool
) -> dict[int, float]:
    """Every statement's confidence: the raw score, or P(acceptable) from the calibrator fitted
    on the approved statements of the other discussions (``calibrated_scores``)."""
    signals = [StatementSignals(**piece["signals"]) for piece in pieces.values()]
    if not calibrated:
        values = [statement_score(signal) for signal in signals]
    else:
        acceptable = [None if sid not in losses else losses[sid] == 0 for sid in pieces]
        groups = [piece["discussion_id"] for piece in pieces.values()]
        values = calibrated_scores(signals, acceptable, groups)
    return dict(zip(pieces, values, strict=True))


# --- the QA monitor ------------------------------------------------------------------------------


def qa_results_load(settings: TriageSettings, approved: Container[int]) -> list[tuple]:
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
    return sorted(((sid, at) for sid, at in rows if sid in approved), key=lambda r: (r[1], r[0]))


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
    pieces: dict[int, dict],
    f1s: dict[int, float | None],
    settings: TriageSettings,
    qa: Sequence[tuple],
    timing: tuple[float, str],
) -> dict[str, Any]:
    """The run's figures from its statements' signal pieces (statement order) and the F1 of
    the approved ones."""
    approved = [sid for sid in pieces if sid in f1s]
    losses = {
        sid: statement_loss(f1s[sid], acceptable_f1=settings.acceptable_f1) for sid in approved
    }
    calibrated = settings.score == TriageSettings.Score.CALIBRATED
    scores = _scores(pieces, losses, calibrated=calibrated)
    threshold = risk_controlled_threshold(
        [scores[sid] for sid in approved],
        [losses[sid] for sid in approved],
        alpha=settings.alpha,
        delta=settings.delta,
        clusters=[pieces[sid]["discussion_id"] for sid in approved],
    )
    qa_losses = {sid: losses[sid] for sid, _ in qa if sid in losses}
    unreviewed = {sid: score for sid, score in scores.items() if sid not in f1s}
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
        "n_statements": len(pieces),
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
    """Compute (or confirm) the run's triage result, then apply it to the queue.

    Derived from per-statement pieces: an approval computes its statement's F1 (the review
    savings piece) and reads the other pieces back; ``force`` (the full recompute) computes
    every piece of the run again."""
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    read_at = timezone.now()
    settings = triage_settings_get(run=run)
    partner = _partner_run(run)
    partner_id = partner.pk if partner else None
    statements = run_statements_load(run, partner)
    extracted = {s.statement_id for s in statements}
    gt = {sid: g for sid, g in ground_truth_load(payloads=False).items() if sid in extracted}
    qa = qa_results_load(settings, gt)
    timing = seconds_per_statement()
    inputs = {
        "settings": _settings_values(settings),
        "partner": partner_id,
        "statements": [s.stamp for s in statements],
        "gt": [g.stamp for g in gt.values()],
        "qa": [(sid, at.isoformat()) for sid, at in qa],
        "timing": timing,
    }

    def compute() -> dict[str, Any]:
        pieces = signals_pieces(run_id, statements, partner_id, force=force)
        f1s = statement_f1s(run_id, gt, force=force)
        return triage_values(pieces, f1s, settings, qa, timing)

    row = result_compute(
        family=TRIAGE,
        key=run_key(TRIAGE, run_id),
        scope=Scope.RUN,
        run_id=run_id,
        inputs=inputs,
        compute=compute,
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
