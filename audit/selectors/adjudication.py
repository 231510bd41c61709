"""Statements whose codings disagree and wait for an admin to adjudicate them."""

from __future__ import annotations

from django.db.models import (
    Count,
    Max,
    Q,
    QuerySet,
)

from audit.models import (
    Adjudication,
    CodingTally,
    Feedback,
    Statement,
)


def adjudication_codings(*, statement_id: int) -> QuerySet[Feedback]:
    """The codings an adjudication merges: submitted or approved, not an adjudication's own
    result, in auditor id order (the first is the alignment's pivot): the same codings always
    align the same way, whoever started or resubmitted first."""
    return (
        Feedback.objects.filter(
            statement_id=statement_id,
            status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            adjudication__isnull=True,
        )
        .select_related("auditor")
        .order_by("auditor_id", "pk")
    )


def adjudicable_statement_ids(*, statement_ids: list[int]) -> set[int]:
    """Of these statements, those with two or more codings to adjudicate."""
    rows = (
        Feedback.objects.filter(
            statement_id__in=statement_ids,
            status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            adjudication__isnull=True,
        )
        .values("statement_id")
        .annotate(n=Count("id"))
        .filter(n__gte=2)
    )
    return {row["statement_id"] for row in rows}


def statements_to_adjudicate(*, limit: int = 50) -> QuerySet[Statement]:
    """Subject statements (the only ones ground truth is taken from) with two or more codings
    and no adjudicated coding yet, in discussion order (the review queue lists them)."""
    codings = Count(
        "feedback",
        filter=Q(
            feedback__status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED),
            feedback__adjudication__isnull=True,
        ),
    )
    return (
        Statement.objects.subjects()
        .filter(discussion_id__in=_discussions_to_adjudicate(limit))
        .annotate(n_codings=codings)
        .filter(n_codings__gte=2, adjudication__feedback__isnull=True)
        .select_related("discussion")
        .order_by("discussion_id", "order")[:limit]
    )


def _discussions_to_adjudicate(limit: int) -> list[int]:
    """The first discussions (in id order) that hold the first ``limit`` statements to
    adjudicate, read from the stored tallies. A tally's ``to_adjudicate`` counts statements
    its auditor shares with another auditor, each of them one the list shows, so a
    discussion holds at least its largest tally's count: the discussions are taken until
    those counts reach ``limit``, and only their statements are counted (about 10 of 50
    discussions when each has 5 to adjudicate)."""
    largest = (
        CodingTally.objects.filter(to_adjudicate__gt=0)
        .order_by("discussion_id")
        .values("discussion_id")
        .annotate(most=Max("to_adjudicate"))
        .values_list("discussion_id", "most")[:limit]
    )
    wanted, at_least = [], 0
    for discussion_id, most in largest:
        wanted.append(discussion_id)
        at_least += most
        if at_least >= limit:
            break
    return wanted


def adjudication_counts() -> list[tuple[int, int]]:
    """(unanimous, adjudicated) item counts of every statement whose merge was produced."""
    rows = Adjudication.objects.filter(feedback__isnull=False).order_by("statement_id")
    return [tuple(r) for r in rows.values_list("unanimous_items", "adjudicated_items")]  # type: ignore[misc]
