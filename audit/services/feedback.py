"""Feedback workflows: drafting, submitting, approving, rejecting, restoring.

Every change that alters ground truth announces which statements it touched
(``audit.signals.ground_truth_changed``, after the transaction commits); whoever keeps figures
computed from ground truth subscribes.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.derived.coding_times import revisions_written
from audit.derived.tallies import tallies_batched
from audit.models import (
    Comment,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Statement,
    empty_pdp,
)
from audit.selectors.history import earlier_item_ids
from audit.services.assignments import (
    assignment_release_on_submit,
    assignment_reopen_on_unsubmit,
    check_may_code,
)
from audit.services.audit_log import Action, audit_log_record
from audit.services.comments import comment_add
from audit.services.errors import (
    NotAllowed,
    NotReady,
    StaleVersion,
    UnknownItems,
    WorkflowError,
    WrongState,
)
from audit.services.guidelines import guideline_current
from audit.signals import ground_truth_changed_send
from evalsite.access import admins, is_admin
from evalsite.bulk import rows_insert
from metrics.families.json_input import text_problem
from metrics.families.payload.rules import payload_ids, pdp_problems, pdp_warnings
from metrics.families.payload.schema import PayloadIssue, validate_pdp


def feedback_problems(
    *, feedback: Feedback, payload: dict | None = None, earlier: Sequence[dict | None] = ()
) -> list[PayloadIssue]:
    """What stops this coding (or `payload`, a version of it) from being ground truth.

    `earlier`: payloads of the discussion's earlier statements the caller has read already
    (the editor's rows). Knowing more ids only ever removes problems, so when these resolve
    every reference the answer is the same as with every earlier payload's ids, which are then
    not read: far down a long discussion that read is most of the editor's time."""
    payload = feedback.edited_extraction if payload is None else payload
    if earlier:
        problems = pdp_problems(payload, known=payload_ids(earlier))
        if not problems:
            return problems
    return pdp_problems(payload, known=earlier_item_ids(statement=feedback.statement))


def feedback_warnings(*, feedback: Feedback, payload: dict | None = None) -> list[PayloadIssue]:
    """What this coding does that the spec's rules do not ask (metrics.families.payload.rules): shown
    at the field, never a reason to refuse it."""
    payload = feedback.edited_extraction if payload is None else payload
    warnings = pdp_warnings(payload, known=payload_ids([payload]))
    if not warnings:
        return warnings  # knowing more ids only ever removes warnings
    return pdp_warnings(payload, known=earlier_item_ids(statement=feedback.statement))


def _check_ready(feedback: Feedback, *, action: str) -> None:
    problems = feedback_problems(feedback=feedback)
    if problems:
        raise NotReady(problems, action=action)


class AlreadyApproved(WorkflowError):
    """Approving would replace another feedback's approved ground truth without saying so."""

    status_code = 409

    def __init__(self, current: Feedback):
        self.current = current
        by = current.approved_by.get_username() if current.approved_by else "an import"
        super().__init__(
            f"Another feedback on this statement is approved as ground truth: "
            f"{current.auditor.get_username()}'s coding (v{current.version}, approved by {by}). "
            f"Nothing was approved. Review it, then confirm that you replace it "
            f'(API: send "replace": true).'
        )


class BulkRefused(WorkflowError):
    """A bulk approval refused as a whole, naming every statement that stopped it."""

    def __init__(self, problems: list[tuple[Feedback, WorkflowError]]):
        self.problems = problems
        self.status_code = max(exc.status_code for _, exc in problems)
        lines = [f"statement #{f.statement.order} (feedback {f.pk}): {exc}" for f, exc in problems]
        super().__init__("Nothing was approved. " + " ".join(lines))


# Revisions that change a feedback's content; their authors are its co-authors.
CONTENT_ACTIONS = ("edit", "autosave", "restore", "propose")


def _ground_truth_changed(*statement_ids: int) -> None:
    ground_truth_changed_send(statement_ids=statement_ids, reason="ground truth")


def revision_record(
    feedback: Feedback,
    *,
    author,
    action: str,
    before: dict | None,
    restored_from: FeedbackRevision | None = None,
) -> FeedbackRevision:
    """Record a step of the history; an autosave folds into the author's edit revision just
    before it (see _foldable), so one coding session reads as one revision, not twenty."""
    now = timezone.now()
    folded = _foldable(feedback, author=author, now=now) if action == "edit" else None
    if folded is not None:
        folded.version, folded.status = feedback.version, feedback.status
        folded.after = copy.deepcopy(feedback.edited_extraction)
        folded.saves += 1
        folded.updated_at = now
        folded.save(update_fields=["version", "status", "after", "saves", "updated_at"])
        return folded
    return FeedbackRevision.objects.create(
        **_revision_fields(feedback, author=author, action=action, before=before, now=now),
        after=copy.deepcopy(feedback.edited_extraction),
        restored_from=restored_from,
        # A change after the first submit (the seal has lifted): marked, left out of agreement.
        after_submit=action in CONTENT_ACTIONS and feedback.submitted_extraction is not None,
    )


def revisions_record(
    *, feedbacks: Sequence[Feedback], author, action: str
) -> list[FeedbackRevision]:
    """revision_record for many feedback rows at once (an import): one new revision each,
    written in one insert. Only edits fold into an earlier revision, so never for an edit.
    The revisions are inserted here and now, so each one's payload is the feedback's own
    (not a copy): what is written is the payload as it is at this moment."""
    if action == "edit":
        raise ValueError("an edit may fold into an earlier revision: record it on its own")
    now = timezone.now()
    revisions = [
        FeedbackRevision(
            **_revision_fields(feedback, author=author, action=action, before=None, now=now),
            after=feedback.edited_extraction,
        )
        for feedback in feedbacks
    ]
    rows_insert(revisions)
    # Inserted past the model's post_save: the coders' time follows them as it would.
    revisions_written(revisions=revisions)
    return revisions


def _revision_fields(feedback: Feedback, *, author, action: str, before: dict | None, now) -> dict:
    """A new revision's fields but its payload after the step (``after``): the feedback as it
    is now, and the payload before the step."""
    return {
        "feedback": feedback,
        "author": author,
        "version": feedback.version,
        "first_version": feedback.version,
        "action": action,
        "status": feedback.status,
        "before": before,
        "updated_at": now,
    }


def _foldable(feedback: Feedback, *, author, now) -> FeedbackRevision | None:
    """The revision an edit folds into: the feedback's latest revision if it is an edit by the
    same author, with the same status, saved at most REVISION_FOLD_SECONDS ago, and nothing
    else changed the feedback since (its version is the one just before). A submit, approval,
    rejection, conflict or restore in between is the latest revision instead, so it ends the
    fold."""
    window = settings.REVISION_FOLD_SECONDS
    latest = feedback.revisions.order_by("-id").first()
    if window <= 0 or latest is None or latest.action != "edit":
        return None
    last_save = latest.updated_at or latest.created_at
    if (
        latest.author_id != author.pk
        or latest.status != feedback.status
        or latest.version != feedback.version - 1
        or now - last_save > timedelta(seconds=window)
    ):
        return None
    return latest


def _lock(feedback: Feedback, base_version: int | None) -> Feedback:
    """Reload the row under a lock and refuse a change based on an old version.

    The refusal rolls the transaction back; callers that must keep the losing edit record it
    afterwards with feedback_record_conflict.
    """
    return _check_version(_locked_row(feedback), base_version)


def _locked_row(feedback: Feedback) -> Feedback:
    return Feedback.objects.select_for_update(no_key=True).get(pk=feedback.pk)


def _check_version(locked: Feedback, base_version: int | None) -> Feedback:
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
    *, statement: Statement, auditor: User, run: ExtractionRun | None = None
) -> Feedback:
    """The auditor's feedback on a statement, created from the AI extraction if new.

    A statement marked for blind review starts from an empty extraction instead.
    """
    if not statement.is_subject:
        raise WrongState("Only subject statements carry extractions to code.")
    existing = Feedback.objects.filter(statement=statement, auditor=auditor).first()
    if existing:
        return existing
    check_may_code(statement=statement, user=auditor)
    blind = hasattr(statement, "blind_review") and not is_admin(auditor)
    source = None if blind else latest_extraction(statement, run)
    payload = copy.deepcopy(source.pdp_deltas) if source else empty_pdp()
    try:
        with transaction.atomic():
            feedback = Feedback.objects.create(
                statement=statement,
                auditor=auditor,
                edited_extraction=validate_pdp(payload),
                source_extraction=source,
                blind=blind,
            )
            revision_record(feedback, author=auditor, action="start", before=None)
    except IntegrityError:
        # A simultaneous start (double submit) created it first: theirs is this one.
        return Feedback.objects.get(statement=statement, auditor=auditor)
    feedback.just_created = True
    return feedback


# The one submit rule: an auditor submits their own draft, or their coding sent back to them.
SUBMITTABLE = (Feedback.Status.DRAFT, Feedback.Status.REJECTED)


def feedback_can_submit(*, feedback: Feedback, user: User) -> bool:
    return feedback.auditor_id == user.pk and feedback.status in SUBMITTABLE


def feedback_awaits_approval(*, feedback: Feedback) -> bool:
    """A submission, or a proposed change to approved ground truth, waits for an admin."""
    return feedback.has_proposal or feedback.status == Feedback.Status.SUBMITTED


REJECTABLE = (Feedback.Status.SUBMITTED, Feedback.Status.APPROVED)


def feedback_can_be_rejected(*, feedback: Feedback) -> bool:
    """A submission is sent back; approved ground truth (or its proposed change) too."""
    return feedback.status in REJECTABLE


def feedback_opens_in_editor(*, feedback: Feedback, user: User) -> bool:
    """Approved ground truth is read-only for auditors; admins edit it (as a proposal)."""
    return feedback.is_editable or is_admin(user)


def _check_can_edit(feedback: Feedback, user) -> None:
    if feedback.is_approved and not is_admin(user):
        raise NotAllowed("Approved ground truth can only be edited by an admin.")
    if feedback.auditor_id != user.pk and not is_admin(user):
        raise NotAllowed("You can only edit your own feedback.")


@transaction.atomic
def feedback_save(
    *,
    feedback: Feedback,
    user: User,
    edited_extraction: dict,
    base_version: int | None,
    comment: str | None = None,
    restored_from: FeedbackRevision | None = None,
) -> Feedback:
    """Save an edit (validated), bumping the version; a stale base version is refused.

    With ``restored_from`` the save is a restore of that revision: its own revision, naming it.
    """
    _check_can_edit(feedback, user)
    payload = validate_pdp(edited_extraction)
    current = _locked_row(feedback)
    if restored_from is None and _unchanged(current, payload, comment):
        # Nothing would change, so nothing can be lost, whatever version the form was based on
        # (an autosave that leaves as a submit lands, a retried request): no new version.
        return current.as_working_copy() if current.is_approved else current
    locked = _check_version(current, base_version)
    if comment is not None:
        locked.comment = comment
    if locked.is_approved:
        return _propose(locked, user=user, payload=payload)
    before = copy.deepcopy(locked.edited_extraction)
    locked.edited_extraction = payload
    # What was submitted or sent back is no longer what the reviewer will see: submit again.
    if locked.status in (Feedback.Status.SUBMITTED, Feedback.Status.REJECTED):
        locked.status = Feedback.Status.DRAFT
    locked.version += 1
    locked.save()
    action = "edit" if restored_from is None else "restore"
    revision_record(locked, author=user, action=action, before=before, restored_from=restored_from)
    return locked


def _unchanged(feedback: Feedback, payload: dict, comment: str | None) -> bool:
    stored = feedback.working_extraction if feedback.is_approved else feedback.edited_extraction
    return payload == stored and comment in (None, feedback.comment)


def _propose(locked: Feedback, *, user, payload: dict) -> Feedback:
    """An edit of approved ground truth waits for another admin; the approved content stays."""
    before = copy.deepcopy(locked.working_extraction)
    locked.proposed_extraction = payload
    locked.proposed_by = user
    locked.version += 1
    locked.save()
    FeedbackRevision.objects.create(
        feedback=locked,
        author=user,
        version=locked.version,
        action="propose",
        status=locked.status,
        before=before,
        after=copy.deepcopy(payload),
        after_submit=locked.submitted_extraction is not None,
    )
    audit_log_record(
        actor=user,
        action=Action.PROPOSE,
        target=locked,
        message=f"Proposed v{locked.version} of approved ground truth on statement "
        f"{locked.statement_id}; it needs another admin's approval.",
        details={"statement": locked.statement_id, "version": locked.version},
    )
    return locked.as_working_copy()


@transaction.atomic
def feedback_submit(*, feedback: Feedback, user: User, base_version: int | None = None) -> Feedback:
    if feedback.auditor_id != user.pk:
        raise NotAllowed("You can only submit your own feedback.")
    locked = _locked_row(feedback)
    if _submit_repeated(locked, user=user, base_version=base_version):
        return locked
    _check_version(locked, base_version)
    if locked.status not in SUBMITTABLE:
        raise WrongState(f"Feedback is already {locked.get_status_display().lower()}.")
    _check_ready(locked, action="submit")
    locked.status = Feedback.Status.SUBMITTED
    if locked.submitted_extraction is None:  # final for the agreement figures from now on
        locked.submitted_extraction = copy.deepcopy(locked.edited_extraction)
    locked.review_opened_at = None
    locked.rejection_reason = ""
    locked.guideline_version = guideline_current()
    locked.version += 1
    locked.save()
    revision_record(locked, author=user, action="submit", before=None)
    assignment_release_on_submit(statement_id=locked.statement_id, auditor=user)
    return locked


def _submit_repeated(locked: Feedback, *, user: User, base_version: int | None) -> bool:
    """A submit repeated (a double press, a retry, autosaves that htmx sends with the submit
    button's op) gets the first one's answer: the feedback is submitted, by this user, nothing
    changed since, and the repeat was based on the submitted version or the one just before."""
    if locked.status != Feedback.Status.SUBMITTED:
        return False
    if base_version is not None and base_version not in (locked.version - 1, locked.version):
        return False
    latest = locked.revisions.order_by("-id").first()
    return latest is not None and latest.action == "submit" and latest.author_id == user.pk


def feedback_unsubmit_refusal(*, feedback: Feedback, user: User) -> str:
    """Why this user may not take this submit back ("" when they may): only its auditor, only
    a submission no reviewer has opened yet, and not where submitting showed the coder what
    an independent coding must not see (the blind sample, others' codings of the statement)."""
    if feedback.auditor_id != user.pk:
        return "Only its auditor can take a submit back."
    if feedback.status != Feedback.Status.SUBMITTED:
        return f"This coding is {feedback.get_status_display().lower()}, not waiting for review."
    if feedback.review_opened_at is not None:
        return "A reviewer has opened this submission: ask them to send it back instead."
    statement = feedback.statement
    others = Feedback.objects.filter(statement=statement).exclude(pk=feedback.pk)
    if hasattr(statement, "blind_review") or others.exclude(status=Feedback.Status.DRAFT).exists():
        return (
            "Submitting showed you the other coding of this statement, so the submit stands "
            "(an independent coding cannot be changed after seeing it)."
        )
    return ""


@transaction.atomic
def feedback_unsubmit(
    *, feedback: Feedback, user: User, base_version: int | None = None
) -> Feedback:
    """Undo submit: the auditor's submission goes back to a draft, logged as its own revision."""
    locked = _lock(feedback, base_version)
    refusal = feedback_unsubmit_refusal(feedback=locked, user=user)
    if refusal:
        raise WrongState(refusal)
    locked.status = Feedback.Status.DRAFT
    # Nothing an independent coding must not see was shown (the refusal above): the submit is
    # undone as if it never was, so the next submit is the one the agreement figures keep.
    locked.submitted_extraction = None
    locked.version += 1
    locked.save()
    revision_record(locked, author=user, action="unsubmit", before=None)
    assignment_reopen_on_unsubmit(statement_id=locked.statement_id, auditor=user)
    return locked


@transaction.atomic
def feedback_review_opened(*, statement: Statement, reviewer: User) -> None:
    """A reviewer opened the submissions on a statement: their auditors can no longer take
    them back (the reviewer's own coding excepted)."""
    Feedback.objects.filter(
        statement=statement, status=Feedback.Status.SUBMITTED, review_opened_at__isnull=True
    ).exclude(auditor=reviewer).update(review_opened_at=timezone.now())


def _check_admin(user) -> None:
    if not is_admin(user):
        raise NotAllowed("Only admins review feedback.")


@transaction.atomic
def feedback_approve(
    *,
    feedback: Feedback,
    admin: User,
    base_version: int | None = None,
    replace: bool = False,
    self_approval_reason: str = "",
) -> Feedback:
    """Approve exactly the reviewed version as the statement's ground truth.

    Replacing another approved feedback needs ``replace``; a pending change to approved ground
    truth is approved in place. Four eyes: its authors cannot approve it, except the only
    admin of a deployment, with a written reason (``self_approval_reason``).
    """
    _check_admin(admin)
    # One approval per statement at a time: a concurrent one waits here, then sees the winner.
    Statement.objects.select_for_update(no_key=True).filter(pk=feedback.statement_id).first()
    locked = _locked_row(feedback)
    if _approve_repeated(locked, admin=admin, base_version=base_version):
        return locked
    _check_version(locked, base_version)
    if locked.has_proposal:
        return _approve_proposal(locked, admin=admin, reason=self_approval_reason)
    if locked.status != Feedback.Status.SUBMITTED:
        raise WrongState(_not_approvable(locked))
    kind = _approval_kind(locked, admin, self_approval_reason, authors=_authors(locked))
    _check_ready(locked, action="approve")
    previous = (
        Feedback.objects.select_for_update(of=("self",), no_key=True)
        .filter(statement_id=locked.statement_id, status=Feedback.Status.APPROVED)
        .exclude(pk=locked.pk)
        .select_related("auditor", "approved_by")
    )
    for other in previous:
        if not replace:
            raise AlreadyApproved(other)
        _set_unapproved(other, admin=admin, replaced_by=locked)
    _set_approved(locked, admin=admin, kind=kind, reason=self_approval_reason)
    try:
        with transaction.atomic():
            locked.save()
    except IntegrityError as exc:
        winner = Feedback.objects.approved().filter(statement_id=locked.statement_id).first()
        raise AlreadyApproved(winner) if winner else StaleVersion(locked, base_version) from exc
    revision_record(locked, author=admin, action=_approve_action(kind), before=None)
    _log_approval(locked, admin=admin, kind=kind)
    _ground_truth_changed(locked.statement_id)
    return locked


def _approve_repeated(locked: Feedback, *, admin: User, base_version: int | None) -> bool:
    """An approval repeated (a retry after an answer that never arrived, a double press) gets
    the first one's answer: the feedback is approved, nothing changed since, this admin's
    approval is its latest step, and the repeat named the version approved or the one before."""
    if locked.status != Feedback.Status.APPROVED or locked.has_proposal:
        return False
    if base_version is not None and base_version not in (locked.version - 1, locked.version):
        return False
    latest = locked.revisions.order_by("-id").first()
    return (
        latest is not None
        and latest.action in ("approve", "self-approve")
        and latest.author_id == admin.pk
    )


def _not_approvable(feedback: Feedback) -> str:
    if feedback.status == Feedback.Status.REJECTED:
        return "Rejected feedback cannot be approved until its auditor resubmits it."
    if feedback.status == Feedback.Status.APPROVED:
        return "This feedback is already approved."
    return "Only submitted feedback can be approved."


def feedback_authors(*, feedback: Feedback) -> set[int]:
    """User ids who may not approve the version in force (or the pending change) alone."""
    if feedback.has_proposal:
        authors = _authors(feedback, since=feedback.approved_at)
        if feedback.proposed_by_id is not None:
            authors.add(feedback.proposed_by_id)
        return authors - {feedback.auditor_id}
    return _authors(feedback)


def _authors(feedback: Feedback, *, since=None) -> set[int]:
    """The auditor and everyone who changed the content (admins who edited become co-authors)."""
    revisions = feedback.revisions.filter(action__in=CONTENT_ACTIONS)
    if since is not None:
        revisions = revisions.filter(created_at__gt=since)
    return {feedback.auditor_id, *revisions.values_list("author_id", flat=True)}


def _approval_kind(feedback: Feedback, admin, reason: str, *, authors: set[int]) -> str:
    """'reviewed' when the approver is not an author; 'self' only as the one admin, with a reason."""
    if admin.pk not in authors:
        return "reviewed"
    what = "your own feedback" if admin.pk == feedback.auditor_id else "a feedback you edited"
    others = admins().filter(is_active=True).exclude(pk=admin.pk).count()
    if others:
        raise NotAllowed(f"Four eyes: you cannot approve {what}; another admin must approve it.")
    if not (reason or "").strip():
        raise NotAllowed(
            f"You cannot approve {what} without a written reason: as the only admin you may "
            "approve your own change, and the reason is logged."
        )
    problem = text_problem(reason)
    if problem:  # a NUL cannot be stored in PostgreSQL text
        raise WorkflowError(f"self_approval_reason: the reason for approving it: {problem}.")
    return "self"


def _set_approved(feedback: Feedback, *, admin, kind: str, reason: str) -> None:
    feedback.status = Feedback.Status.APPROVED
    feedback.approved_by = admin
    feedback.approved_at = timezone.now()
    feedback.approval = kind
    feedback.approval_reason = (reason or "").strip() if kind == "self" else ""
    feedback.rejection_reason = ""
    feedback.version += 1


def _approve_proposal(locked: Feedback, *, admin, reason: str) -> Feedback:
    """The pending change becomes the ground truth, approved by someone who did not write it."""
    kind = _approval_kind(locked, admin, reason, authors=feedback_authors(feedback=locked))
    problems = feedback_problems(feedback=locked, payload=locked.proposed_extraction)
    if problems:
        raise NotReady(problems, action="approve")
    before = copy.deepcopy(locked.edited_extraction)
    locked.edited_extraction = locked.proposed_extraction
    locked.proposed_extraction = None
    locked.proposed_by = None
    _set_approved(locked, admin=admin, kind=kind, reason=reason)
    locked.save()
    revision_record(locked, author=admin, action=_approve_action(kind), before=before)
    _log_approval(locked, admin=admin, kind=kind)
    _ground_truth_changed(locked.statement_id)
    return locked


def _approve_action(kind: str) -> str:
    """Self-approvals stand out in the history."""
    return "self-approve" if kind == "self" else "approve"


def _log_approval(feedback: Feedback, *, admin, kind: str) -> None:
    who = feedback.auditor.get_username()
    message = f"Approved v{feedback.version} of {who}'s coding of statement {feedback.statement_id}"
    if kind == "self":
        message += f", approving their own change: {feedback.approval_reason}"
    audit_log_record(
        actor=admin,
        action=Action.SELF_APPROVE if kind == "self" else Action.APPROVE,
        target=feedback,
        message=message + ".",
        details={
            "statement": feedback.statement_id,
            "version": feedback.version,
            "approval": kind,
            "reason": feedback.approval_reason,
        },
    )


def _set_unapproved(feedback: Feedback, *, admin, replaced_by: Feedback | None = None) -> None:
    """Back to submitted; a pending change is dropped (its "propose" revision keeps it)."""
    feedback.status = Feedback.Status.SUBMITTED
    feedback.approved_by = None
    feedback.approved_at = None
    feedback.approval = ""
    feedback.approval_reason = ""
    feedback.proposed_extraction = None
    feedback.proposed_by = None
    feedback.version += 1
    feedback.save()
    revision_record(feedback, author=admin, action="unapprove", before=None)
    why = f", replaced by feedback {replaced_by.pk}" if replaced_by else ""
    audit_log_record(
        actor=admin,
        action=Action.UNAPPROVE,
        target=feedback,
        message=f"Unapproved {feedback.auditor.get_username()}'s coding of statement "
        f"{feedback.statement_id}{why}.",
        details={"statement": feedback.statement_id, "version": feedback.version},
    )


@transaction.atomic
def feedback_unapprove(
    *, feedback: Feedback, admin: User, base_version: int | None = None
) -> Feedback:
    _check_admin(admin)
    locked = _lock(feedback, base_version)
    if not locked.is_approved:
        raise WrongState("This feedback is not approved.")
    _set_unapproved(locked, admin=admin)
    _ground_truth_changed(locked.statement_id)
    return locked


@transaction.atomic
def feedback_reject(
    *, feedback: Feedback, admin: User, reason: str, base_version: int | None = None
) -> Feedback:
    """Send feedback back to its auditor as "needs changes", with a reason."""
    _check_admin(admin)
    reason = (reason or "").strip()
    if not reason:
        raise WorkflowError("A rejection needs a reason for the auditor.")
    locked = _lock(feedback, base_version)
    if locked.has_proposal:
        return _reject_proposal(locked, admin=admin, reason=reason)
    if locked.status not in REJECTABLE:
        raise WrongState(
            f"Only submitted or approved feedback can be rejected; this one is "
            f"{locked.get_status_display().lower()}."
        )
    was_approved = locked.is_approved
    locked.status = Feedback.Status.REJECTED
    locked.rejection_reason = reason
    locked.approved_by = None
    locked.approved_at = None
    locked.approval = ""
    locked.approval_reason = ""
    locked.version += 1
    locked.save()
    revision_record(locked, author=admin, action="reject", before=None)
    _log_rejection(locked, admin=admin, reason=reason, what="coding")
    _reason_in_thread(locked, admin=admin, reason=reason)
    if was_approved:
        _ground_truth_changed(locked.statement_id)
    return locked


def _reject_proposal(locked: Feedback, *, admin, reason: str) -> Feedback:
    """Drop a pending change to approved ground truth; the approved content stays in force."""
    before = copy.deepcopy(locked.proposed_extraction)
    locked.proposed_extraction = None
    locked.proposed_by = None
    locked.version += 1
    locked.save()
    revision_record(locked, author=admin, action="reject", before=before)
    _log_rejection(locked, admin=admin, reason=reason, what="proposed change to")
    _reason_in_thread(locked, admin=admin, reason=reason)
    return locked


def _reason_in_thread(feedback: Feedback, *, admin, reason: str) -> None:
    """The reason is also a comment about this coding in the statement's thread, where its
    auditor can reply (``rejection_reason`` keeps it for older clients)."""
    comment_add(
        statement=feedback.statement,
        author=admin,
        body=reason,
        feedback=feedback,
        kind=Comment.Kind.REJECTION,
    )


def _log_rejection(feedback: Feedback, *, admin, reason: str, what: str) -> None:
    audit_log_record(
        actor=admin,
        action=Action.REJECT,
        target=feedback,
        message=f"Rejected {what} {feedback.auditor.get_username()}'s coding of statement "
        f"{feedback.statement_id}: {reason}",
        details={"statement": feedback.statement_id, "version": feedback.version, "reason": reason},
    )


@transaction.atomic
def feedback_bulk_approve(
    *,
    discussion: Discussion,
    auditor: User,
    admin: User,
    versions: dict[int, int],
    replace: bool = False,
) -> list[Feedback]:
    """Approve the named versions ({feedback id: version}) of one auditor's submitted feedback
    in a discussion: all or nothing, naming every statement that stops it."""
    _check_admin(admin)
    if not versions:
        raise WorkflowError("Name the feedback and the versions you reviewed.")
    named = sorted(
        Feedback.objects.filter(
            pk__in=versions, statement__discussion=discussion, auditor=auditor
        ).select_related("statement", "auditor"),
        key=lambda f: f.statement.order,
    )
    unknown = set(versions) - {f.pk for f in named}
    if unknown:
        raise UnknownItems(
            f"Not {auditor.get_username()}'s feedback in discussion {discussion.pk}: "
            + ", ".join(map(str, sorted(unknown)))
        )
    approved, problems = [], []
    with tallies_batched():
        for feedback in named:
            try:
                approved.append(
                    feedback_approve(
                        feedback=feedback,
                        admin=admin,
                        base_version=versions[feedback.pk],
                        replace=replace,
                    )
                )
            except WorkflowError as exc:
                problems.append((feedback, exc))
    if problems:
        raise BulkRefused(problems)
    return approved


@transaction.atomic
def feedback_restore(
    *,
    feedback: Feedback,
    revision: FeedbackRevision,
    user: User,
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
        restored_from=revision,
    )


@transaction.atomic
def feedback_record_conflict(
    *, feedback: Feedback, user: User, attempted: dict
) -> FeedbackRevision:
    """Keep an edit that lost a version race as a "conflict" revision, so nothing typed is lost.

    Call it after a save raised StaleVersion: the refused save's transaction was rolled back,
    and any revision recorded inside it with it. Recording the same edit twice is a no-op.
    The payload in force is not touched, so the owner may record even on approved feedback.
    """
    if feedback.auditor_id != user.pk and not is_admin(user):
        raise NotAllowed("You can only edit your own feedback.")
    payload = validate_pdp(attempted)
    current = Feedback.objects.select_for_update(no_key=True).get(pk=feedback.pk)
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
        first_version=current.version,
        updated_at=timezone.now(),
        action="conflict",
        status=current.status,
        before=copy.deepcopy(current.edited_extraction),
        after=payload,
    )
