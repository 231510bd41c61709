"""Blind double review: admins mark a random sample of subject statements; auditors who then
start coding one of them begin from an empty extraction (``feedback_start``), so their coding
can be compared with pre-filled coding of the same statement (metrics.own_data.interauditor)."""

from __future__ import annotations

import random

from django.contrib.auth.models import User
from django.db import transaction

from audit.models import BlindReview, Discussion, Statement
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import NotAllowed, WorkflowError
from audit.signals import coding_changed_send
from evalsite.access import is_admin

MAX_SAMPLE = 10_000


def blind_review_candidates(*, discussion: Discussion | None = None) -> list[int]:
    """Ids of subject statements not yet marked, in id order (the sample's population)."""
    statements = Statement.objects.subjects().filter(blind_review__isnull=True)
    if discussion is not None:
        statements = statements.filter(discussion=discussion)
    return list(statements.order_by("pk").values_list("pk", flat=True))


@transaction.atomic
def blind_review_sample(
    *,
    discussion: Discussion | None = None,
    size: int,
    seed: int,
    admin: User,
) -> list[BlindReview]:
    """Mark ``size`` random unmarked subject statements (of one discussion, or all) for blind
    coding. The same seed over the same candidates picks the same statements; fewer candidates
    than ``size`` marks them all. Returns the new marks, in statement order."""
    if not is_admin(admin):
        raise NotAllowed("Only admins mark statements for blind review.")
    if not 1 <= size <= MAX_SAMPLE:
        raise WorkflowError(f"The sample size must be between 1 and {MAX_SAMPLE}.")
    candidates = blind_review_candidates(discussion=discussion)
    chosen = sorted(random.Random(seed).sample(candidates, min(size, len(candidates))))
    marks = [BlindReview(statement_id=pk, marked_by=admin) for pk in chosen]
    BlindReview.objects.bulk_create(marks, ignore_conflicts=True)
    audit_log_record(
        actor=admin,
        action=Action.BLIND_MARK,
        object_type="discussion" if discussion else "statements",
        object_id=discussion.pk if discussion else "",
        message=f"Marked {len(chosen)} statement(s) for blind review (asked {size}, seed {seed}).",
        details={"statements": chosen, "size": size, "seed": seed},
    )
    _agreement_changed()
    return list(
        BlindReview.objects.filter(statement_id__in=chosen, marked_by=admin)
        .select_related("statement")
        .order_by("statement_id")
    )


@transaction.atomic
def blind_review_unmark(*, statement: Statement, admin: User) -> None:
    """Take a statement out of blind review (coding already started keeps its blind flag)."""
    if not is_admin(admin):
        raise NotAllowed("Only admins mark statements for blind review.")
    deleted, _ = BlindReview.objects.filter(statement=statement).delete()
    if deleted:
        coding_changed_send(reason="blind review unmarked")
        audit_log_record(
            actor=admin,
            action=Action.BLIND_UNMARK,
            target=statement,
            message=f"Took statement {statement.pk} out of blind review.",
        )


def _agreement_changed() -> None:
    coding_changed_send(reason="blind sample")
