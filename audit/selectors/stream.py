"""Reads of the review stream (submitted coding waiting for an admin, in discussion order) and
of an auditor's own queues (their assignments, their coding sent back as "needs changes").
The review home, approve-and-next, the auditor's queue and the API share them."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Left

from audit.models import Assignment, AuditorFigures, CodingTally, Discussion, Feedback, Statement

S = Feedback.Status


def waiting_q() -> Q:
    """What an admin reviews: submissions on statements without approved ground truth, and
    proposed changes to approved ground truth. Once a statement of an overlap sample has its
    ground truth approved, the other codings serve agreement and wait no more (the bulk review
    queue still lists them, marked "has approved GT"). A condition on feedback rows, so the
    stored tallies (``audit.derived.tallies``) count with it too."""
    approved = Feedback.objects.filter(statement_id=OuterRef("statement_id"), status=S.APPROVED)
    return Q(status=S.SUBMITTED, statement__speaker__type="subject") & ~Exists(approved) | Q(
        status=S.APPROVED, proposed_extraction__isnull=False
    )


def _waiting() -> QuerySet[Feedback]:
    return Feedback.objects.filter(waiting_q())


def review_stream_next(*, after: Statement | None = None) -> Statement | None:
    """The next statement with coding waiting for review, by discussion then statement order
    (after ``after``; from the start when nothing is after it).

    The discussions come from the stored tallies' waiting counts, so only one discussion's
    feedback is read: ordering every waiting coding by position grew with the data."""
    if after is None:
        pk = _first_waiting_after(None)
    else:
        pk = _later_in_discussion(after) or _first_waiting_after(after.discussion_id)
        pk = pk or _first_waiting_but(after)  # wrap around: earlier statements may still wait
    if pk is None:
        return None
    return Statement.objects.select_related("discussion", "speaker").get(pk=pk)


def _next_waiting_discussion(after_id: int | None) -> int | None:
    tallies = _tallies_waiting()
    if after_id is not None:
        tallies = tallies.filter(discussion_id__gt=after_id)
    return tallies.aggregate(d=Min("discussion_id"))["d"]


def _first_waiting_after(discussion_id: int | None) -> int | None:
    """The first statement waiting in the first discussion with work after this one."""
    following = _next_waiting_discussion(discussion_id)
    return None if following is None else _first_waiting(following)


def _later_in_discussion(after: Statement) -> int | None:
    found = _waiting().filter(
        statement__discussion_id=after.discussion_id, statement__order__gt=after.order
    )
    return found.order_by("statement__order").values_list("statement_id", flat=True).first()


def _first_waiting_but(after: Statement) -> int | None:
    first = _next_waiting_discussion(None)
    if first is None:
        return None
    found = _waiting().filter(statement__discussion_id=first).exclude(statement=after)
    return found.order_by("statement__order").values_list("statement_id", flat=True).first()


@dataclass(frozen=True)
class Waiting:
    """Counts waiting for review in one discussion or from one auditor, and where to start."""

    id: int
    label: str
    waiting: int
    first_statement: int


def _tallies_waiting() -> QuerySet[CodingTally]:
    """The stored (discussion, auditor) tallies with work waiting for review."""
    return CodingTally.objects.filter(waiting__gt=0).order_by()


def _first_waiting(discussion_id: int, auditor_id: int | None = None) -> int | None:
    """The first statement waiting in this discussion (from this auditor), in stream order."""
    found = _waiting().filter(statement__discussion_id=discussion_id)
    if auditor_id is not None:
        found = found.filter(auditor_id=auditor_id)
    return found.order_by("statement__order").values_list("statement_id", flat=True).first()


def review_waiting_by_discussion(*, limit: int | None = None) -> list[Waiting]:
    """Discussions with work waiting, in order; the first `limit` of them when given. Counted
    from the stored tallies; only the listed discussions' statements are read."""
    rows = (
        _tallies_waiting()
        .values("discussion_id")
        .annotate(n=Sum("waiting"))
        .order_by("discussion_id")
        .values_list("discussion_id", "n")
    )
    listed = list(rows if limit is None else rows[:limit])
    ids = [pk for pk, _ in listed]
    labels = dict(Discussion.objects.filter(pk__in=ids).values_list("pk", Left("summary", 90)))
    firsts = _first_statements(ids)
    return [Waiting(pk, labels[pk], n, firsts[pk]) for pk, n in listed]


def review_waiting_discussions() -> int:
    """How many discussions have work waiting for review."""
    return _tallies_waiting().values("discussion_id").distinct().count()


def _first_statements(discussion_ids: list[int]) -> dict[int, int]:
    """discussion id -> its first statement waiting for review (in these discussions)."""
    pairs = (
        _waiting()
        .filter(statement__discussion_id__in=discussion_ids)
        .order_by("statement__discussion_id", "statement__order")
        .values_list("statement__discussion_id", "statement_id")
    )
    firsts: dict[int, int] = {}
    for discussion_id, statement_id in pairs:
        firsts.setdefault(discussion_id, statement_id)
    return firsts


def review_waiting_by_auditor() -> list[Waiting]:
    """Per auditor with work waiting: how much, and the first of it in stream order (in the
    first discussion where they have some)."""
    rows = (
        _tallies_waiting()
        .values("auditor_id", "auditor__username")
        .annotate(n=Sum("waiting"), first=Min("discussion_id"))
        .order_by("auditor__username")
    )
    return [
        Waiting(
            r["auditor_id"],
            r["auditor__username"],
            r["n"],
            _first_waiting(r["first"], r["auditor_id"]) or 0,
        )
        for r in rows
    ]


def review_waiting_count() -> int:
    return _tallies_waiting().aggregate(n=Sum("waiting"))["n"] or 0


# --- an auditor's own queues -------------------------------------------------------------------------


def my_open_assignments(*, user: User) -> QuerySet[Assignment]:
    """The auditor's open assignments not yet submitted, in due order: read in the discussions
    whose stored tally has some (``my_open_count`` counts them all)."""
    discussions = CodingTally.objects.filter(auditor=user, open_unsent__gt=0).values(
        "discussion_id"
    )
    # NOT EXISTS, not NOT IN: an anti-join on the (statement, auditor) index instead of
    # reading every coding the auditor sent
    sent = Feedback.objects.filter(auditor=user, statement_id=OuterRef("statement_id")).exclude(
        status=S.DRAFT
    )
    return (
        Assignment.objects.open()
        .of(user)
        .filter(discussion_id__in=discussions)
        .exclude(Exists(sent))
        .select_related("statement__discussion", "statement__speaker")
        .in_due_order()
    )


def my_open_count(*, user: User) -> int:
    """How many open assignments the auditor has not submitted yet (the sum of their stored
    tallies, stored: ``audit.derived.team_figures``)."""
    found = AuditorFigures.objects.filter(pk=user.pk).values_list("open_unsent", flat=True)
    return found.first() or 0


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


def assigned_discussion_ids(*, offset: int, limit: int) -> list[int]:
    """Up to ``limit`` ids of discussions with any assignment, in id order from ``offset``:
    each discussion is probed for one assignment, and the scan stops once the page is full."""
    assigned = Assignment.objects.filter(statement__discussion_id=OuterRef("pk"))
    ids = Discussion.objects.filter(Exists(assigned)).order_by("pk").values_list("pk", flat=True)
    return list(ids[offset : offset + limit])


def assignment_groups(*, discussion_ids: list[int]) -> list[dict]:
    """Assignments per discussion and auditor with counts by status (the assign page), for
    these discussions."""
    A = Assignment.Status
    return list(
        Assignment.objects.filter(statement__discussion_id__in=discussion_ids)
        .values(
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


def discussions_to_assign(*, search: str = "", unassigned: bool = False) -> QuerySet[Discussion]:
    """The assign page's choice of discussions, in id order: those whose number is ``search``
    (with or without "#") or whose summary contains it; ``unassigned``: only those with no
    assignment at all."""
    found = Discussion.objects.order_by("pk")
    text = search.strip()
    if text:
        number = text.removeprefix("#")
        matches = Q(summary__icontains=text)
        if number.isascii() and number.isdigit() and len(number) < 10:  # not "²"
            matches |= Q(pk=int(number))
        found = found.filter(matches)
    if unassigned:
        found = found.exclude(
            Exists(Assignment.objects.filter(statement__discussion_id=OuterRef("pk")))
        )
    return found


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
