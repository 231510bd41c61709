"""Review triage of an extraction run: the admin's settings, which statements the AI accepted
provisionally, the QA sample, and suspension.

The threshold and the monitor are computed upstairs (a stored result of metrics, recomputed
whenever approved ground truth changes); they call ``triage_statements_apply`` with the scores
and the accepted statements, or ``triage_suspend`` when the QA monitor trips. Provisional
ground truth is the AI's own extraction, marked as such: it is never a Feedback row, so it is
never mixed with human ground truth nor counted in F1 against it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from audit.derived.tallies import queue_changed
from audit.models import AuditLogEntry, ExtractionRun, Feedback, TriageSettings, TriageStatement
from audit.services.audit_log import audit_log_record
from audit.services.feedback import WorkflowError
from audit.signals import triage_changed_send
from evalsite.perf.bulk import BATCH

Action = AuditLogEntry.Action

# Each bound: (lowest, highest, whether the lowest itself is allowed).
BOUNDS = {
    "alpha": (0.0, 0.5, False),
    "delta": (0.0, 0.5, False),
    "acceptable_f1": (0.0, 1.0, False),
    "qa_rate": (0.0, 1.0, True),
}


class TriageSettingsError(WorkflowError):
    """A setting out of range; ``field`` names it."""

    status_code = 400

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class TriageChoice:
    enabled: bool
    alpha: float
    delta: float
    acceptable_f1: float
    qa_rate: float
    lowest_first: bool
    score: str = TriageSettings.Score.RAW


def triage_settings_get(*, run: ExtractionRun) -> TriageSettings:
    """The run's settings (unsaved defaults, triage off, when none were ever chosen)."""
    return TriageSettings.objects.filter(run=run).first() or TriageSettings(run=run)


def triage_settings_check(choice: TriageChoice) -> None:
    """Each number within its range, or ``TriageSettingsError`` naming the field."""
    for field, (low, high, low_ok) in BOUNDS.items():
        value = getattr(choice, field)
        above = value >= low if low_ok else value > low
        if not (above and value <= high):
            bracket = "[" if low_ok else "("
            raise TriageSettingsError(field, f"expected a number in {bracket}{low}, {high}]")


@transaction.atomic
def triage_settings_update(
    *, run: ExtractionRun, admin: User, choice: TriageChoice
) -> TriageSettings:
    """Save the settings. Turning triage on (or on again after a suspension) restarts the
    monitor; turning it off sends every provisional statement back to the queue."""
    triage_settings_check(choice)
    if choice.score not in TriageSettings.Score.values:
        expected = ", ".join(TriageSettings.Score.values)
        raise TriageSettingsError("score", f"expected one of {expected}")
    settings, _ = TriageSettings.objects.select_for_update(no_key=True).get_or_create(run=run)
    before = settings.chosen()
    restart = choice.enabled and (not settings.enabled or settings.suspended_at is not None)
    for field, value in vars(choice).items():
        setattr(settings, field, value)
    if restart:
        settings.enabled_at, settings.suspended_at, settings.suspended_reason = (
            timezone.now(),
            None,
            "",
        )
    settings.updated_by = admin
    settings.save()
    if not settings.enabled:
        _accepted_returned(run_id=run.pk)
    audit_log_record(
        actor=admin,
        action=Action.TRIAGE_SETTINGS,
        target=run,
        message=f"Review triage of {run}: {TriageSettings.State(settings.state).label}",
        details={"before": before, "after": settings.chosen()},
    )
    triage_changed_send(run_id=run.pk, reason="triage settings")
    return settings


def _accepted_returned(*, run_id: int) -> int:
    """Every statement the run's triage accepted goes back to the queue; returns how many."""
    accepted = TriageStatement.objects.filter(run_id=run_id, provisional=True)
    ids = list(accepted.values_list("statement_id", flat=True))
    accepted.update(provisional=False)
    queue_changed(statement_ids=ids)
    triage_counts_store(run_id=run_id)
    return len(ids)


def triage_counts_store(*, run_id: int) -> None:
    """Count what the run's triage has done to the queue (provisional statements, the QA
    sample, and QA statements coded and approved) onto its settings, which the pages read.
    Called wherever the marks change, and whenever triage applies its outcome: an approval
    makes the run's triage recompute and apply, so the approved QA count follows it."""
    rows = TriageStatement.objects.filter(run_id=run_id)
    qa = rows.filter(qa=True)
    approved = Feedback.objects.approved().filter(statement_id=OuterRef("statement_id"))
    TriageSettings.objects.filter(run_id=run_id).update(
        n_provisional=rows.filter(provisional=True).count(),
        n_qa=qa.count(),
        n_qa_approved=qa.filter(Exists(approved)).count(),
    )


def qa_drawn(*, run_id: int, statement_id: int, rate: float) -> bool:
    """Whether an accepted statement is in the QA sample: a fixed pseudo-random draw per
    (run, statement), so recomputing the threshold never redraws the sample."""
    digest = hashlib.sha256(f"triage-qa/{run_id}/{statement_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def _coded(statement_ids: Iterable[int]) -> set[int]:
    """Statements someone has started coding: they stay with the humans."""
    return set(
        Feedback.objects.filter(statement_id__in=list(statement_ids)).values_list(
            "statement_id", flat=True
        )
    )


@transaction.atomic
def triage_statements_apply(
    *, run_id: int, scores: Mapping[int, float], accepted: Iterable[int], threshold: float | None
) -> int:
    """Record the run's scores and which uncoded statements are AI accepted (provisional) or
    drawn for QA. Only while triage is active; otherwise nothing is provisional. Returns how
    many statements are provisional now."""
    settings = TriageSettings.objects.select_for_update(no_key=True).filter(run_id=run_id).first()
    if settings is None or not settings.is_active:
        _accepted_returned(run_id=run_id)
        return 0
    # what is stored, as plain rows: an approval reads the whole run
    stored = TriageStatement.objects.filter(run_id=run_id).values_list(*_Stored._fields)
    rows = {row[1]: _Stored(*row) for row in stored.iterator(chunk_size=BATCH * 10)}
    accepted = set(accepted)
    wanted = accepted - _coded(accepted)
    before = {sid for sid, row in rows.items() if row.provisional}
    scored = _rows_scored(rows, scores=scores, wanted=wanted, settings=settings)
    TriageStatement.objects.bulk_create(scored.created, batch_size=BATCH)
    TriageStatement.objects.bulk_update(
        scored.changed, ["confidence", "qa", "provisional", "updated_at"], batch_size=BATCH
    )
    # Statements no longer scored (now approved): the QA rows stay, the monitor reads them.
    gone = [row.pk for row in rows.values() if not row.qa]
    TriageStatement.objects.filter(pk__in=gone).delete()
    left = [row.pk for row in rows.values() if row.qa and row.provisional]
    TriageStatement.objects.filter(pk__in=left).update(provisional=False)
    after = scored.provisional
    queue_changed(statement_ids=before ^ after, rescored=scored.rescored | set(rows))
    triage_counts_store(run_id=run_id)
    if after != before:
        _log_acceptance(settings, before, after, threshold)
    return len(after)


class _Stored(NamedTuple):
    """A stored triage row, as read to compare (no model instance per row)."""

    pk: int
    statement_id: int
    confidence: float
    qa: bool
    provisional: bool


@dataclass
class _Scored:
    created: list[TriageStatement] = dataclasses.field(default_factory=list)
    # only the rows that differ from what is stored
    changed: list[TriageStatement] = dataclasses.field(default_factory=list)
    # the statements AI accepted after this apply
    provisional: set[int] = dataclasses.field(default_factory=set)
    # new or moved scores: the weakest-first queue's stored order follows them
    rescored: set[int] = dataclasses.field(default_factory=set)


def _rows_scored(
    rows: dict[int, _Stored],
    *,
    scores: Mapping[int, float],
    wanted: set[int],
    settings: TriageSettings,
) -> _Scored:
    """The run's rows as these scores leave them; ``rows`` keeps those no score names. A row
    that stays as it was is not written: an approval moves a few scores, not the whole run's."""
    scored, now = _Scored(), timezone.now()
    for sid, score in scores.items():
        row = rows.pop(sid, None)
        qa = (row is not None and row.qa) or (
            sid in wanted
            and qa_drawn(run_id=settings.run_id, statement_id=sid, rate=settings.qa_rate)
        )
        provisional = sid in wanted and not qa
        if provisional:
            scored.provisional.add(sid)
        if row is not None and (row.confidence, row.qa, row.provisional) == (
            score,
            qa,
            provisional,
        ):
            continue
        if row is None or row.confidence != score:
            scored.rescored.add(sid)
        written = TriageStatement(
            pk=row.pk if row else None,
            run_id=settings.run_id,
            statement_id=sid,
            confidence=score,
            qa=qa,
            provisional=provisional,
            updated_at=now,
        )
        (scored.changed if row else scored.created).append(written)
    return scored


def _log_acceptance(settings: TriageSettings, before: set, after: set, threshold) -> None:
    audit_log_record(
        actor=None,
        action=Action.TRIAGE_ACCEPT,
        target=settings.run,
        message=(
            f"Review triage of {settings.run}: {len(after)} statements AI accepted "
            f"(provisional), {len(after - before)} new, {len(before - after)} back to the queue"
        ),
        details={
            "threshold": threshold,
            "added": sorted(after - before)[:500],
            "removed": sorted(before - after)[:500],
        },
    )


@transaction.atomic
def triage_suspend(*, run_id: int, reason: str, details: dict | None = None) -> bool:
    """The QA monitor's evidence says the risk exceeds alpha: triage stops, every provisional
    statement goes back to the queue, and the admin sees why. Returns False when triage was
    not active (nothing to suspend)."""
    settings = TriageSettings.objects.select_for_update(no_key=True).filter(run_id=run_id).first()
    if settings is None or not settings.is_active:
        return False
    settings.suspended_at, settings.suspended_reason = timezone.now(), reason
    settings.save(update_fields=["suspended_at", "suspended_reason", "updated_at"])
    returned = _accepted_returned(run_id=run_id)
    audit_log_record(
        actor=None,
        action=Action.TRIAGE_SUSPEND,
        target=settings.run,
        message=f"Review triage of {settings.run} suspended: {reason}",
        details={**(details or {}), "returned_to_queue": returned},
    )
    return True
