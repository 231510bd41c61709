"""Reads of the audit app that the pages and the API share: querysets in a stable order (by id),
so API pagination is stable, and the history a reviewer reads. Writes stay in the services."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib.auth.models import User
from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from audit.models import (
    ComputeJob,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Statement,
    TriageSettings,
    TriageStatement,
)
from audit.views.display import diff_summary, field_changes


def filtered_by(
    queryset: QuerySet[Any], filters: dict[str, Any] | None, lookups: dict[str, str]
) -> QuerySet[Any]:
    """The API's list filters (name -> ORM lookup) that were given, in id order: pages of a
    list stay stable while rows are added."""
    given = filters or {}
    return queryset.filter(
        **{lookup: given[name] for name, lookup in lookups.items() if name in given}
    ).order_by("id")


def feedback_revisions(*, feedback: Feedback) -> list[FeedbackRevision]:
    """A feedback's revisions, newest first, each with what it changed.

    Each revision gets `changes` (field by field), `summary` (one line), `first` (the first
    version folded into it), `is_current` (its payload is the one in force) and `after_json`.
    A revision's change is relative to the revision before it; a conflict's, to the payload
    it lost against (it was never applied).
    """
    revisions = list(
        feedback.revisions.select_related("author", "restored_from").order_by("version", "id")
    )
    previous: dict | None = None
    for revision in revisions:
        before = revision.before if revision.action == "conflict" else previous
        revision.changes = field_changes(before, revision.after)
        revision.summary = diff_summary(before, revision.after)
        revision.first = revision.first_version or revision.version
        revision.after_json = json.dumps(revision.after, indent=2)
        revision.is_current = False
        if revision.action != "conflict":
            previous = revision.after
    current = [r for r in revisions if r.after == feedback.edited_extraction]
    if current:
        current[-1].is_current = True
    return list(reversed(revisions))


def discussions_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Discussion]:
    filters = filters or {}
    qs = Discussion.objects.annotate(
        n_statements=Count("statements", distinct=True),
        n_approved=Count(
            "statements__feedback",
            filter=Q(statements__feedback__status=Feedback.Status.APPROVED),
            distinct=True,
        ),
    )
    if "external_id" in filters:
        qs = qs.filter(external_id=filters["external_id"])
    if filters.get("has_approved") is True:
        qs = qs.filter(n_approved__gt=0)
    elif filters.get("has_approved") is False:
        qs = qs.filter(n_approved=0)
    return qs.order_by("id")


def discussion_statements(*, discussion: Discussion) -> QuerySet[Statement]:
    return discussion.statements.select_related("speaker").order_by("order", "id")


def extraction_runs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ExtractionRun]:
    lookups = {"model_name": "model_name", "prompt_version": "prompt_version"}
    return filtered_by(ExtractionRun.objects.all(), filters, lookups)


def extractions_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Extraction]:
    lookups = {
        "run": "run_id",
        "discussion": "statement__discussion_id",
        "statement": "statement_id",
    }
    return filtered_by(Extraction.objects.select_related("statement"), filters, lookups)


def feedback_list(*, user: User, filters: dict[str, Any] | None = None) -> QuerySet[Feedback]:
    """The feedback the user may see (auditors: their own; admins: all), filtered."""
    qs = Feedback.objects.visible_to(user).select_related("statement", "auditor", "approved_by")
    lookups = {
        "discussion": "statement__discussion_id",
        "statement": "statement_id",
        "status": "status",
        "auditor": "auditor_id",
        "run": "source_extraction__run_id",
    }
    return filtered_by(qs, filters, lookups)


def compute_jobs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ComputeJob]:
    return filtered_by(ComputeJob.objects.all(), filters, {"kind": "kind", "status": "status"})


# --- the audit screens: the queues, the runs of a discussion --------------------------------------

S = Feedback.Status
SENT = (S.SUBMITTED, S.APPROVED)


class QueueCounts(TypedDict):
    """What discussion_queue counts per discussion: mine (this auditor's) and everyone's."""

    n_subject: int
    mine_coded: int
    mine_sent: int
    mine_approved: int
    mine_rejected: int
    all_coded: int
    all_sent: int
    all_approved: int
    next_uncoded: int | None
    weakest: float | None


if TYPE_CHECKING:  # django-stubs' helper is a development requirement only
    from django_stubs_ext import WithAnnotations

    QueueDiscussion = WithAnnotations[Discussion, QueueCounts]
else:
    QueueDiscussion = Discussion


def _in_queue() -> QuerySet[Statement]:
    """Subject statements auditors still have to code: not AI accepted by review triage."""
    return Statement.objects.subjects().exclude(triage__provisional=True)


def triage_lowest_first() -> bool:
    """Whether an active review triage asks for the weakest AI extractions first."""
    return TriageSettings.objects.filter(
        enabled=True, suspended_at__isnull=True, lowest_first=True
    ).exists()


def discussion_queue(*, user: User) -> QuerySet[QueueDiscussion]:
    """Discussions with per-user and overall progress counts, in one query.

    Statements review triage accepted (provisional) are not in the queue: ``n_subject`` and
    the next statement to code leave them out. ``weakest`` is the lowest triage confidence
    among the statements I have not coded yet (for the lowest-confidence-first order)."""
    mine = Q(statements__feedback__auditor=user)
    queued = _in_queue().filter(discussion=OuterRef("pk"))
    uncoded = queued.exclude(feedback__auditor=user)
    next_uncoded = uncoded
    if triage_lowest_first():
        next_uncoded = uncoded.annotate(weakest=Min("triage__confidence")).order_by(
            F("weakest").asc(nulls_last=True), "order"
        )
    else:
        next_uncoded = next_uncoded.order_by("order")
    n_queued = queued.order_by().values("discussion").annotate(n=Count("pk")).values("n")
    weakest = (
        uncoded.order_by().values("discussion").annotate(w=Min("triage__confidence")).values("w")
    )
    return Discussion.objects.annotate(
        n_subject=Coalesce(Subquery(n_queued), Value(0)),
        mine_coded=Count("statements__feedback", filter=mine, distinct=True),
        mine_sent=Count(
            "statements__feedback", filter=mine & Q(statements__feedback__status__in=SENT), distinct=True
        ),
        mine_approved=Count(
            "statements__feedback", filter=mine & Q(statements__feedback__status=S.APPROVED), distinct=True
        ),
        mine_rejected=Count(
            "statements__feedback", filter=mine & Q(statements__feedback__status=S.REJECTED), distinct=True
        ),
        all_coded=Count("statements", filter=Q(statements__feedback__isnull=False), distinct=True),
        all_sent=Count("statements", filter=Q(statements__feedback__status__in=SENT), distinct=True),
        all_approved=Count("statements", filter=Q(statements__feedback__status=S.APPROVED), distinct=True),
        next_uncoded=Subquery(next_uncoded.values("pk")[:1]),
        weakest=Subquery(weakest),
    )  # fmt: skip


def triage_counts(*, run_id: int) -> dict[str, int]:
    """What review triage has done to the queue right now: provisional statements, the QA
    sample, and QA statements already coded and approved."""
    rows = TriageStatement.objects.filter(run_id=run_id)
    return rows.aggregate(
        n_provisional=Count("pk", filter=Q(provisional=True)),
        n_qa=Count("pk", filter=Q(qa=True)),
        n_qa_approved=Count(
            "pk", filter=Q(qa=True, statement__feedback__status=S.APPROVED), distinct=True
        ),
    )


def triage_statements_list(
    *, run_id: int, provisional: bool | None = None
) -> QuerySet[TriageStatement]:
    """A run's triaged statements (the API's list), in id order."""
    rows = TriageStatement.objects.filter(run_id=run_id).select_related("statement")
    if provisional is not None:
        rows = rows.filter(provisional=provisional)
    return rows.order_by("pk")


def provisional_statement_ids(*, statement_ids: list[int]) -> set[int]:
    """Which of these statements review triage accepted (provisional ground truth)."""
    return set(
        TriageStatement.objects.filter(
            statement_id__in=statement_ids, provisional=True
        ).values_list("statement_id", flat=True)
    )


def discussion_queue_filter(
    queryset: QuerySet[QueueDiscussion], *, status: str, q: str
) -> QuerySet[QueueDiscussion]:
    """Filter by progress; done means every subject statement is submitted (or approved) by me."""
    if q:
        queryset = queryset.filter(summary__icontains=q)
    if status == "not_started":
        queryset = queryset.filter(mine_coded=0)
    elif status == "needs_changes":
        queryset = queryset.filter(mine_rejected__gt=0)
    elif status == "done":
        queryset = queryset.filter(n_subject__gt=0, mine_sent__gte=F("n_subject"))
    elif status == "in_progress":
        queryset = queryset.filter(mine_coded__gt=0, mine_rejected=0, mine_sent__lt=F("n_subject"))
    return queryset


def submitted_feedback_groups(*, auditor_id: int | None) -> tuple[list[dict], list[Feedback]]:
    """Submitted feedback grouped per discussion and auditor (bulk approval works on groups).

    Each item knows whether its statement already has approved ground truth (``replaces``),
    which approving it would replace.
    """
    approved_elsewhere = Feedback.objects.filter(
        statement_id=OuterRef("statement_id"), status=S.APPROVED
    ).exclude(pk=OuterRef("pk"))
    submitted = Feedback.objects.filter(status=S.SUBMITTED).annotate(
        replaces=Subquery(approved_elsewhere.values("auditor__username")[:1])
    )
    if auditor_id:
        submitted = submitted.filter(auditor_id=auditor_id)
    items = list(
        submitted.select_related("statement__discussion", "auditor").order_by(
            "statement__discussion_id", "auditor_id", "statement__order"
        )[:1000]
    )
    groups: dict[tuple[int, int], dict] = {}
    for f in items:
        key = (f.statement.discussion_id, f.auditor_id)
        group = groups.setdefault(
            key,
            {
                "discussion": f.statement.discussion,
                "auditor": f.auditor,
                "items": [],
                "n_replace": 0,
            },
        )
        group["items"].append(f)
        group["n_replace"] += bool(f.replaces)
    return list(groups.values()), items


def feedback_proposals() -> QuerySet[Feedback]:
    """Changes to approved ground truth waiting for another admin."""
    return (
        Feedback.objects.filter(status=S.APPROVED, proposed_extraction__isnull=False)
        .select_related("statement__discussion", "auditor", "proposed_by")
        .order_by("statement__discussion_id", "statement__order")
    )


def discussion_runs(*, discussion: Discussion) -> list[ExtractionRun]:
    """Runs that extracted something in this discussion, newest first."""
    return list(
        ExtractionRun.objects.filter(extractions__statement__discussion=discussion)
        .distinct()
        .latest_first()
    )
