"""An admin's side of a coding: approving it as ground truth (one or many), taking an approval
back, rejecting it with a reason.

Every change that alters ground truth announces which statements it touched
(``audit.signals.ground_truth_changed``, after the transaction commits); whoever keeps figures
computed from ground truth subscribes.
"""

from __future__ import annotations

import copy

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.derived.tallies import tallies_batched
from audit.models import (
    Comment,
    Discussion,
    Feedback,
    Statement,
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
from audit.services.feedback.revisions import (
    CONTENT_ACTIONS,
    check_version,
    coding_follow,
    feedback_locked,
    locked_row,
    revision_record,
)
from audit.services.feedback.rules import REJECTABLE, check_admin, check_ready, feedback_problems
from audit.signals import ground_truth_changed_send
from evalsite.access import admins
from metrics.families.json_input import text_problem


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


def _ground_truth_changed(*statement_ids: int) -> None:
    ground_truth_changed_send(statement_ids=statement_ids, reason="ground truth")


@transaction.atomic
def feedback_review_opened(*, statement: Statement, reviewer: User) -> None:
    """A reviewer opened the submissions on a statement: their auditors can no longer take
    them back (the reviewer's own coding excepted)."""
    Feedback.objects.filter(
        statement=statement, status=Feedback.Status.SUBMITTED, review_opened_at__isnull=True
    ).exclude(auditor=reviewer).update(review_opened_at=timezone.now())


@transaction.atomic
@tallies_batched()  # the coding approved and the one it replaces: one recount
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
    check_admin(admin)
    # One approval per statement at a time: a concurrent one waits here, then sees the winner.
    Statement.objects.select_for_update(no_key=True).filter(pk=feedback.statement_id).first()
    locked = locked_row(feedback)
    if _approve_repeated(locked, admin=admin, base_version=base_version):
        return locked
    check_version(locked, base_version)
    if locked.has_proposal:
        return _approve_proposal(locked, admin=admin, reason=self_approval_reason)
    if locked.status != Feedback.Status.SUBMITTED:
        raise WrongState(_not_approvable(locked))
    kind = _approval_kind(locked, admin, self_approval_reason, authors=_authors(locked))
    check_ready(locked, action="approve")
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
    coding_follow(feedback=locked, before=Feedback.Status.SUBMITTED)
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
    coding_follow(feedback=locked, before=locked.status)  # it waits for review no more
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
    coding_follow(feedback=feedback, before=Feedback.Status.APPROVED)
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
    check_admin(admin)
    locked = feedback_locked(feedback, base_version)
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
    check_admin(admin)
    reason = (reason or "").strip()
    if not reason:
        raise WorkflowError("A rejection needs a reason for the auditor.")
    locked = feedback_locked(feedback, base_version)
    if locked.has_proposal:
        return _reject_proposal(locked, admin=admin, reason=reason)
    if locked.status not in REJECTABLE:
        raise WrongState(
            f"Only submitted or approved feedback can be rejected; this one is "
            f"{locked.get_status_display().lower()}."
        )
    was_approved, status = locked.is_approved, locked.status
    locked.status = Feedback.Status.REJECTED
    locked.rejection_reason = reason
    locked.approved_by = None
    locked.approved_at = None
    locked.approval = ""
    locked.approval_reason = ""
    locked.version += 1
    locked.save()
    coding_follow(feedback=locked, before=status)
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
    coding_follow(feedback=locked, before=locked.status)  # it waits for review no more
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
    check_admin(admin)
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
