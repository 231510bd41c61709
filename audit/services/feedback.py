"""Feedback workflows: drafting, submitting, approving, rejecting, restoring.

Every change that alters ground truth tells the metrics app which statements it touched,
after the transaction commits, so stored results are marked stale and recomputed.
"""

from __future__ import annotations

import copy

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.models import (
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Statement,
    empty_pdp,
)
from audit.pdp import payload_ids, pdp_problems
from audit.roles import is_admin
from audit.schemas import PayloadError, PayloadIssue, validate_pdp


class WorkflowError(Exception):
    """A request the workflow refuses, with a message meant for the user."""

    status_code = 400


class NotAllowed(WorkflowError):
    status_code = 403


class StaleVersion(WorkflowError):
    """A save based on an old version; the current one is attached so the client can merge."""

    status_code = 409

    def __init__(self, feedback: Feedback, base_version: int | None):
        self.feedback = feedback
        self.current_version = feedback.version
        super().__init__(
            f"This feedback was changed by someone else (you edited version {base_version}, "
            f"the current version is {feedback.version}). Reload to see their changes."
        )


class NotReady(PayloadError, WorkflowError):
    """Coding with problems (see audit.pdp): submit and approve refuse it, naming each one."""

    status_code = 422

    def __init__(self, issues: list[PayloadIssue], *, action: str):
        super().__init__(issues)
        self.detail = f"Fix these problems before you {action}."

    def __str__(self) -> str:
        return f"{self.detail} " + "; ".join(self.messages())


def feedback_problems(*, feedback: Feedback, payload: dict | None = None) -> list[PayloadIssue]:
    """What stops this coding (or `payload`, a version of it) from being ground truth."""
    payload = feedback.edited_extraction if payload is None else payload
    return pdp_problems(payload, known=payload_ids(_earlier_payloads(feedback.statement)))


def _earlier_payloads(statement: Statement) -> list[dict]:
    """Every payload of the discussion's earlier statements: a delta may refer to their items."""
    earlier = {"statement__discussion_id": statement.discussion_id}
    earlier["statement__order__lt"] = statement.order
    ai = Extraction.objects.filter(**earlier).values_list("pdp_deltas", flat=True)
    coded = Feedback.objects.filter(**earlier).values_list("edited_extraction", flat=True)
    return [*ai, *coded]


def _check_ready(feedback: Feedback, *, action: str) -> None:
    problems = feedback_problems(feedback=feedback)
    if problems:
        raise NotReady(problems, action=action)


def _ground_truth_changed(*statement_ids: int) -> None:
    from metrics.services import results_mark_stale

    ids = sorted(set(statement_ids))
    transaction.on_commit(lambda: results_mark_stale(statement_ids=ids, reason="ground truth"))


def _record_revision(
    feedback: Feedback, *, author, action: str, before: dict | None
) -> FeedbackRevision:
    return FeedbackRevision.objects.create(
        feedback=feedback,
        author=author,
        version=feedback.version,
        action=action,
        status=feedback.status,
        before=before,
        after=copy.deepcopy(feedback.edited_extraction),
    )


def _lock(feedback: Feedback, base_version: int | None) -> Feedback:
    """Reload the row under a lock and refuse a change based on an old version.

    The refusal rolls the transaction back; callers that must keep the losing edit record it
    afterwards with feedback_record_conflict.
    """
    locked = Feedback.objects.select_for_update().get(pk=feedback.pk)
    if base_version is not None and base_version != locked.version:
        raise StaleVersion(locked, base_version)
    return locked


def latest_extraction(statement: Statement, run: ExtractionRun | None = None) -> Extraction | None:
    extractions = statement.extractions.select_related("run")
    if run is not None:
        return extractions.filter(run=run).first()
    return extractions.order_by("-run__created_at", "-run_id").first()


@transaction.atomic
def feedback_start(
    *, statement: Statement, auditor: AbstractBaseUser, run: ExtractionRun | None = None
) -> Feedback:
    """The auditor's feedback on a statement, created from the AI extraction if new.

    A statement marked for blind review starts from an empty extraction instead.
    """
    if not statement.is_subject:
        raise WorkflowError("Only subject statements carry extractions to code.")
    existing = Feedback.objects.filter(statement=statement, auditor=auditor).first()
    if existing:
        return existing
    blind = hasattr(statement, "blind_review") and not is_admin(auditor)
    source = None if blind else latest_extraction(statement, run)
    payload = copy.deepcopy(source.pdp_deltas) if source else empty_pdp()
    feedback = Feedback.objects.create(
        statement=statement,
        auditor=auditor,
        edited_extraction=validate_pdp(payload),
        source_extraction=source,
        blind=blind,
    )
    _record_revision(feedback, author=auditor, action="start", before=None)
    return feedback


def _check_can_edit(feedback: Feedback, user) -> None:
    if feedback.is_approved and not is_admin(user):
        raise NotAllowed("Approved ground truth can only be edited by an admin.")
    if feedback.auditor_id != user.pk and not is_admin(user):
        raise NotAllowed("You can only edit your own feedback.")


@transaction.atomic
def feedback_save(
    *,
    feedback: Feedback,
    user: AbstractBaseUser,
    edited_extraction: dict,
    base_version: int | None,
    comment: str | None = None,
) -> Feedback:
    """Save an edit (validated), bumping the version; a stale base version is refused."""
    _check_can_edit(feedback, user)
    payload = validate_pdp(edited_extraction)
    locked = _lock(feedback, base_version)
    before = copy.deepcopy(locked.edited_extraction)
    locked.edited_extraction = payload
    if comment is not None:
        locked.comment = comment
    if locked.status == Feedback.Status.REJECTED:
        locked.status = Feedback.Status.DRAFT
    locked.version += 1
    locked.save()
    _record_revision(locked, author=user, action="edit", before=before)
    if locked.is_approved:
        _ground_truth_changed(locked.statement_id)
    return locked


@transaction.atomic
def feedback_submit(
    *, feedback: Feedback, user: AbstractBaseUser, base_version: int | None = None
) -> Feedback:
    if feedback.auditor_id != user.pk:
        raise NotAllowed("You can only submit your own feedback.")
    locked = _lock(feedback, base_version)
    if locked.status not in (Feedback.Status.DRAFT, Feedback.Status.REJECTED):
        raise WorkflowError(f"Feedback is already {locked.get_status_display().lower()}.")
    _check_ready(locked, action="submit")
    locked.status = Feedback.Status.SUBMITTED
    locked.rejection_reason = ""
    locked.version += 1
    locked.save()
    _record_revision(locked, author=user, action="submit", before=None)
    return locked


def _check_admin(user) -> None:
    if not is_admin(user):
        raise NotAllowed("Only admins review feedback.")


@transaction.atomic
def feedback_approve(
    *, feedback: Feedback, admin: AbstractBaseUser, base_version: int | None = None
) -> Feedback:
    """Approve one feedback as the statement's ground truth, unapproving any other."""
    _check_admin(admin)
    if feedback.auditor_id == admin.pk:
        raise NotAllowed("You cannot approve your own feedback.")
    locked = _lock(feedback, base_version)
    if locked.status == Feedback.Status.DRAFT:
        raise WorkflowError("Only submitted feedback can be approved.")
    _check_ready(locked, action="approve")
    previous = (
        Feedback.objects.select_for_update()
        .filter(statement_id=locked.statement_id, status=Feedback.Status.APPROVED)
        .exclude(pk=locked.pk)
    )
    for other in previous:
        _set_unapproved(other, admin=admin)
    locked.status = Feedback.Status.APPROVED
    locked.approved_by = admin
    locked.approved_at = timezone.now()
    locked.rejection_reason = ""
    locked.version += 1
    try:
        with transaction.atomic():
            locked.save()
    except IntegrityError as exc:
        raise StaleVersion(locked, base_version) from exc
    _record_revision(locked, author=admin, action="approve", before=None)
    _ground_truth_changed(locked.statement_id)
    return locked


def _set_unapproved(feedback: Feedback, *, admin) -> None:
    feedback.status = Feedback.Status.SUBMITTED
    feedback.approved_by = None
    feedback.approved_at = None
    feedback.version += 1
    feedback.save()
    _record_revision(feedback, author=admin, action="unapprove", before=None)


@transaction.atomic
def feedback_unapprove(
    *, feedback: Feedback, admin: AbstractBaseUser, base_version: int | None = None
) -> Feedback:
    _check_admin(admin)
    locked = _lock(feedback, base_version)
    if not locked.is_approved:
        raise WorkflowError("This feedback is not approved.")
    _set_unapproved(locked, admin=admin)
    _ground_truth_changed(locked.statement_id)
    return locked


@transaction.atomic
def feedback_reject(
    *, feedback: Feedback, admin: AbstractBaseUser, reason: str, base_version: int | None = None
) -> Feedback:
    """Send feedback back to its auditor as "needs changes", with a reason."""
    _check_admin(admin)
    reason = (reason or "").strip()
    if not reason:
        raise WorkflowError("A rejection needs a reason for the auditor.")
    locked = _lock(feedback, base_version)
    was_approved = locked.is_approved
    locked.status = Feedback.Status.REJECTED
    locked.rejection_reason = reason
    locked.approved_by = None
    locked.approved_at = None
    locked.version += 1
    locked.save()
    _record_revision(locked, author=admin, action="reject", before=None)
    if was_approved:
        _ground_truth_changed(locked.statement_id)
    return locked


@transaction.atomic
def feedback_bulk_approve(
    *, discussion: Discussion, auditor: AbstractBaseUser, admin: AbstractBaseUser
) -> list[Feedback]:
    """Approve every submitted feedback of one auditor in a discussion."""
    _check_admin(admin)
    if auditor.pk == admin.pk:
        raise NotAllowed("You cannot approve your own feedback.")
    submitted = Feedback.objects.filter(
        statement__discussion=discussion, auditor=auditor, status=Feedback.Status.SUBMITTED
    ).order_by("statement__order")
    return [feedback_approve(feedback=f, admin=admin) for f in submitted]


@transaction.atomic
def feedback_restore(
    *,
    feedback: Feedback,
    revision: FeedbackRevision,
    user: AbstractBaseUser,
    base_version: int | None,
) -> Feedback:
    """Make an earlier revision's payload the current one (itself a new revision)."""
    if revision.feedback_id != feedback.pk:
        raise WorkflowError("That revision belongs to another feedback.")
    return feedback_save(
        feedback=feedback,
        user=user,
        edited_extraction=copy.deepcopy(revision.after),
        base_version=base_version,
    )


@transaction.atomic
def feedback_record_conflict(
    *, feedback: Feedback, user: AbstractBaseUser, attempted: dict
) -> FeedbackRevision:
    """Keep an edit that lost a version race as a "conflict" revision, so nothing typed is lost.

    Call it after a save raised StaleVersion: the refused save's transaction was rolled back,
    and any revision recorded inside it with it. Recording the same edit twice is a no-op.
    The payload in force is not touched, so the owner may record even on approved feedback.
    """
    if feedback.auditor_id != user.pk and not is_admin(user):
        raise NotAllowed("You can only edit your own feedback.")
    payload = validate_pdp(attempted)
    current = Feedback.objects.select_for_update().get(pk=feedback.pk)
    earlier = FeedbackRevision.objects.filter(
        feedback=current, action="conflict", author=user, version=current.version
    )
    for revision in earlier:
        if revision.after == payload:
            return revision
    return FeedbackRevision.objects.create(
        feedback=current,
        author=user,
        version=current.version,
        action="conflict",
        status=current.status,
        before=copy.deepcopy(current.edited_extraction),
        after=payload,
    )
