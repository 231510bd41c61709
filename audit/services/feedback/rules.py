"""What a coding may be and who may do what with it: its problems and warnings, and the
checks every workflow runs first.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User

from audit.models import (
    Feedback,
)
from audit.selectors.history import earlier_item_ids
from audit.services.errors import (
    NotAllowed,
    NotReady,
)
from evalsite.access import is_admin
from metrics.families.payload.items import payload_ids
from metrics.families.payload.rules import pdp_problems, pdp_warnings
from metrics.families.payload.schema import PayloadIssue


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


def check_ready(feedback: Feedback, *, action: str) -> None:
    problems = feedback_problems(feedback=feedback)
    if problems:
        raise NotReady(problems, action=action)


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


def check_can_edit(feedback: Feedback, user) -> None:
    if feedback.is_approved and not is_admin(user):
        raise NotAllowed("Approved ground truth can only be edited by an admin.")
    if feedback.auditor_id != user.pk and not is_admin(user):
        raise NotAllowed("You can only edit your own feedback.")


def check_admin(user) -> None:
    if not is_admin(user):
        raise NotAllowed("Only admins review feedback.")
