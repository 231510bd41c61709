"""An auditor's side of a coding: starting it from the AI extraction, saving, submitting,
taking back a submission, restoring an earlier revision.
"""

from __future__ import annotations

import copy

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from audit.derived.tallies import tallies_batched
from audit.models import (
    BlindReview,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Statement,
    empty_pdp,
)
from audit.services.assignments import (
    assignment_next,
    assignment_release_on_submit,
    assignment_reopen_on_unsubmit,
    check_may_code,
)
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import (
    NotAllowed,
    WorkflowError,
    WrongState,
)
from audit.services.feedback.revisions import (
    check_version,
    coding_follow,
    feedback_locked,
    locked_row,
    revision_record,
    revision_written,
)
from audit.services.feedback.rules import SUBMITTABLE, check_can_edit, check_ready
from audit.services.guidelines import guideline_current
from evalsite.access import is_admin
from metrics.families.payload.schema import validate_pdp


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
            coding_follow(feedback=feedback, before=None)
    except IntegrityError:
        # A simultaneous start (double submit) created it first: theirs is this one.
        return Feedback.objects.get(statement=statement, auditor=auditor)
    feedback.just_created = True
    return feedback


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
    check_can_edit(feedback, user)
    payload = validate_pdp(edited_extraction)
    current = locked_row(feedback)
    if restored_from is None and _unchanged(current, payload, comment):
        # Nothing would change, so nothing can be lost, whatever version the form was based on
        # (an autosave that leaves as a submit lands, a retried request): no new version.
        return current.as_working_copy() if current.is_approved else current
    locked = check_version(current, base_version)
    if comment is not None:
        locked.comment = comment
    if locked.is_approved:
        return _propose(locked, user=user, payload=payload)
    before, status = copy.deepcopy(locked.edited_extraction), locked.status
    locked.edited_extraction = payload
    # What was submitted or sent back is no longer what the reviewer will see: submit again.
    if locked.status in (Feedback.Status.SUBMITTED, Feedback.Status.REJECTED):
        locked.status = Feedback.Status.DRAFT
    locked.version += 1
    locked.save()
    action = "edit" if restored_from is None else "restore"
    revision_record(locked, author=user, action=action, before=before, restored_from=restored_from)
    if locked.status != status:  # an autosave of a draft changes nothing counted
        coding_follow(feedback=locked, before=status)
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
    coding_follow(feedback=locked, before=locked.status)  # it waits for review now
    revision = FeedbackRevision.objects.create(
        feedback=locked,
        author=user,
        version=locked.version,
        action="propose",
        status=locked.status,
        before=before,
        after=copy.deepcopy(payload),
        after_submit=locked.submitted_extraction is not None,
    )
    revision_written(revision)
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
@tallies_batched()  # the coding and the assignment it releases: one recount
def feedback_submit(*, feedback: Feedback, user: User, base_version: int | None = None) -> Feedback:
    if feedback.auditor_id != user.pk:
        raise NotAllowed("You can only submit your own feedback.")
    locked = locked_row(feedback)
    if _submit_repeated(locked, user=user, base_version=base_version):
        return locked
    check_version(locked, base_version)
    if locked.status not in SUBMITTABLE:
        raise WrongState(f"Feedback is already {locked.get_status_display().lower()}.")
    check_ready(locked, action="submit")
    status, locked.status = locked.status, Feedback.Status.SUBMITTED
    if locked.submitted_extraction is None:  # final for the agreement figures from now on
        locked.submitted_extraction = copy.deepcopy(locked.edited_extraction)
    locked.review_opened_at = None
    locked.rejection_reason = ""
    locked.guideline_version = guideline_current()
    locked.version += 1
    locked.save()
    coding_follow(feedback=locked, before=status)
    revision_record(locked, author=user, action="submit", before=None)
    assignment_release_on_submit(statement_id=locked.statement_id, auditor=user)
    return locked


@transaction.atomic
@tallies_batched()  # what the submit and the next start change: one recount
def feedback_submit_next(
    *, feedback: Feedback, user: User, base_version: int | None = None
) -> tuple[Feedback, Feedback | None]:
    """Submit, then start (or reopen) the next statement that needs this auditor: the coding
    submitted and the next one (None: nothing left). One step: if the next cannot be started,
    nothing is submitted."""
    submitted = feedback_submit(feedback=feedback, user=user, base_version=base_version)
    statement = assignment_next(user=user, after=submitted.statement)
    if statement is None:
        return submitted, None
    return submitted, feedback_start(statement=statement, auditor=user)


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


def feedback_unsubmit_refusal(
    *, feedback: Feedback, user: User, others_seen: bool | None = None
) -> str:
    """Why this user may not take this submit back ("" when they may): only its auditor, only
    a submission no reviewer has opened yet, and not where submitting showed the coder what
    an independent coding must not see (the blind sample, others' codings of the statement).
    ``others_seen``: that last fact, when the caller has it (``feedback_unsubmit_refusals``)."""
    if feedback.auditor_id != user.pk:
        return "Only its auditor can take a submit back."
    if feedback.status != Feedback.Status.SUBMITTED:
        return f"This coding is {feedback.get_status_display().lower()}, not waiting for review."
    if feedback.review_opened_at is not None:
        return "A reviewer has opened this submission: ask them to send it back instead."
    if others_seen is None:
        others_seen = feedback.statement_id in _others_seen([feedback])
    if others_seen:
        return (
            "Submitting showed you the other coding of this statement, so the submit stands "
            "(an independent coding cannot be changed after seeing it)."
        )
    return ""


def feedback_unsubmit_refusals(*, feedbacks: list[Feedback], user: User) -> dict[int, str]:
    """``feedback_unsubmit_refusal`` of each coding (by its id), in one query for all (a
    page's cards)."""
    open_ = [
        f
        for f in feedbacks
        if f.auditor_id == user.pk
        and f.status == Feedback.Status.SUBMITTED
        and f.review_opened_at is None
    ]
    seen = _others_seen(open_) if open_ else set()
    return {
        f.pk: feedback_unsubmit_refusal(feedback=f, user=user, others_seen=f.statement_id in seen)
        for f in feedbacks
    }


def _others_seen(feedbacks: list[Feedback]) -> set[int]:
    """The statements of these codings (one per statement) that are in the blind sample or
    have another coding past draft."""
    ids = [f.statement_id for f in feedbacks]
    others = (
        Feedback.objects.filter(statement_id__in=ids)
        .exclude(pk__in=[f.pk for f in feedbacks])
        .exclude(status=Feedback.Status.DRAFT)
        .order_by()
        .values_list("statement_id", flat=True)
    )
    blind = BlindReview.objects.filter(statement_id__in=ids).order_by().values_list("statement_id")
    return set(others.union(blind))


@transaction.atomic
@tallies_batched()  # the coding and the assignment it reopens: one recount
def feedback_unsubmit(
    *, feedback: Feedback, user: User, base_version: int | None = None
) -> Feedback:
    """Undo submit: the auditor's submission goes back to a draft, logged as its own revision."""
    locked = feedback_locked(feedback, base_version)
    refusal = feedback_unsubmit_refusal(feedback=locked, user=user)
    if refusal:
        raise WrongState(refusal)
    locked.status = Feedback.Status.DRAFT
    # Nothing an independent coding must not see was shown (the refusal above): the submit is
    # undone as if it never was, so the next submit is the one the agreement figures keep.
    locked.submitted_extraction = None
    locked.version += 1
    locked.save()
    coding_follow(feedback=locked, before=Feedback.Status.SUBMITTED)
    revision_record(locked, author=user, action="unsubmit", before=None)
    assignment_reopen_on_unsubmit(statement_id=locked.statement_id, auditor=user)
    return locked


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
