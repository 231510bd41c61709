"""Reads of the review stream (submitted coding waiting for an admin, in discussion order) and
of an auditor's own queues (their assignments, their coding sent back as "needs changes").
The review home, approve-and-next, the auditor's queue and the API share them."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet

from audit.models import Assignment, Feedback, Statement

S = Feedback.Status


def _waiting() -> QuerySet[Feedback]:
    """What an admin reviews: submissions on statements without approved ground truth, and
    proposed changes to approved ground truth. Once a statement of an overlap sample has its
    ground truth approved, the other codings serve agreement and wait no more (the bulk review
    queue still lists them, marked "has approved GT")."""
    approved = Feedback.objects.filter(statement_id=OuterRef("statement_id"), status=S.APPROVED)
    return Feedback.objects.filter(
        Q(status=S.SUBMITTED, statement__speaker__type="subject") & ~Exists(approved)
        | Q(status=S.APPROVED, proposed_extraction__isnull=False)
    )


def review_stream_next(*, after: Statement | None = None) -> Statement | None:
    """The next statement with coding waiting for review, by discussion then statement order
    (after ``after``; from the start when nothing is after it)."""
    waiting = _waiting()
    ordered = ("statement__discussion_id", "statement__order")
    if after is not None:
        later = Q(statement__discussion_id__gt=after.discussion_id) | Q(
            statement__discussion_id=after.discussion_id, statement__order__gt=after.order
        )
        found = waiting.filter(later).order_by(*ordered).values_list("statement_id", flat=True)
        pk = found.first()
        if pk is None:  # wrap around: earlier statements may still wait
            pk = (
                waiting.exclude(statement=after)
                .order_by(*ordered)
                .values_list("statement_id", flat=True)
                .first()
            )
    else:
        pk = waiting.order_by(*ordered).values_list("statement_id", flat=True).first()
    if pk is None:
        return None
    return Statement.objects.select_related("discussion", "speaker").get(pk=pk)


@dataclass(frozen=True)
class Waiting:
    """Counts waiting for review in one discussion or from one auditor, and where to start."""

    id: int
    label: str
    waiting: int
    first_statement: int


def review_waiting_by_discussion(*, limit: int | None = None) -> list[Waiting]:
    """Discussions with work waiting, in order; the first `limit` of them when given."""
    rows = (
        _waiting()
        .values("statement__discussion_id", "statement__discussion__summary")
        .annotate(n=Count("id"), first=Min("statement__order"))
        .order_by("statement__discussion_id")
    )
    listed = list(rows if limit is None else rows[:limit])
    firsts = _first_statements([r["statement__discussion_id"] for r in listed])
    return [
        Waiting(
            r["statement__discussion_id"],
            r["statement__discussion__summary"][:90],
            r["n"],
            firsts[(r["statement__discussion_id"], r["first"])],
        )
        for r in listed
    ]


def review_waiting_discussions() -> int:
    """How many discussions have work waiting for review."""
    return _waiting().values("statement__discussion_id").distinct().count()


def _first_statements(discussion_ids: list[int]) -> dict[tuple[int, int], int]:
    """(discussion id, order) -> statement id of every statement waiting in these discussions."""
    pairs = (
        _waiting()
        .filter(statement__discussion_id__in=discussion_ids)
        .values_list("statement__discussion_id", "statement__order", "statement_id")
    )
    return {(d, o): pk for d, o, pk in pairs}


def review_waiting_by_auditor() -> list[Waiting]:
    """Per auditor with work waiting: how much, and the first of it in stream order (one
    small query per auditor: as a subquery of the grouped query it ran once per row)."""
    rows = (
        _waiting()
        .values("auditor_id", "auditor__username")
        .annotate(n=Count("id"))
        .order_by("auditor__username")
    )
    ordered = ("statement__discussion_id", "statement__order")
    return [
        Waiting(
            r["auditor_id"],
            r["auditor__username"],
            r["n"],
            _waiting()
            .filter(auditor_id=r["auditor_id"])
            .order_by(*ordered)
            .values_list("statement_id", flat=True)
            .first()
            or 0,
        )
        for r in rows
    ]


def review_waiting_count() -> int:
    return _waiting().count()


# --- an auditor's own queues -------------------------------------------------------------------------


def my_open_assignments(*, user: User) -> QuerySet[Assignment]:
    """The auditor's open assignments not yet submitted, in due order."""
    sent = Feedback.objects.filter(auditor=user).exclude(status=S.DRAFT)
    return (
        Assignment.objects.open()
        .of(user)
        .exclude(statement_id__in=sent.values("statement_id"))
        .select_related("statement__discussion", "statement__speaker")
        .in_due_order()
    )


def my_needs_changes(*, user: User) -> QuerySet[Feedback]:
    """The auditor's coding sent back with a reason, in discussion order."""
    return (
        Feedback.objects.filter(auditor=user, status=S.REJECTED)
        .select_related("statement__discussion", "statement__speaker")
        .defer("edited_extraction")  # the list shows where and why, not the coding
        .order_by("statement__discussion_id", "statement__order")
    )


def skipped_assignments() -> QuerySet[Assignment]:
    """Skipped statements, for the admins' list (newest first)."""
    return (
        Assignment.objects.filter(status=Assignment.Status.SKIPPED)
        .select_related("statement__discussion", "auditor")
        .order_by("-released_at", "-id")
    )


def assignment_groups() -> list[dict]:
    """Assignments per discussion and auditor with counts by status (the assign page)."""
    A = Assignment.Status
    return list(
        Assignment.objects.values(
            "statement__discussion_id", "statement__discussion__summary", "auditor_id",
            "auditor__username",
        )
        .annotate(
            total=Count("id"),
            open=Count("id", filter=Q(status=A.OPEN)),
            submitted=Count("id", filter=Q(status=A.SUBMITTED)),
            skipped=Count("id", filter=Q(status=A.SKIPPED)),
            overlap=Count("id", filter=Q(overlap=True)),
        )
        .order_by("statement__discussion_id", "auditor__username")
    )  # fmt: skip


def review_waiting_feedback(*, statement: Statement | None) -> list[int]:
    """Ids of the feedback waiting for review on this statement."""
    if statement is None:
        return []
    return list(_waiting().filter(statement=statement).order_by("id").values_list("pk", flat=True))


def assignments_list(*, user: User, filters: dict | None = None) -> QuerySet[Assignment]:
    """The assignments the user may see (auditors: their own), filtered, in id order."""
    filters = filters or {}
    qs = Assignment.objects.visible_to(user).select_related("statement", "auditor", "assigned_by")
    lookups = {
        "auditor": "auditor_id",
        "discussion": "statement__discussion_id",
        "statement": "statement_id",
        "status": "status",
    }
    given = {lookup: filters[name] for name, lookup in lookups.items() if name in filters}
    return qs.filter(**given).order_by("id")
