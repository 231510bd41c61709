"""Reads of the audit app that the pages and the API share: querysets in a stable order (by id),
so API pagination is stable, and the history a reviewer reads. Writes stay in the services."""

from __future__ import annotations

import heapq
import itertools
from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import (
    Count,
    Exists,
    F,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce

from audit.models import (
    CodingTally,
    Discussion,
    DiscussionFigures,
    Extraction,
    ExtractionRun,
    Feedback,
    Statement,
    TriageSettings,
    TriageStatement,
)

# --- the audit screens: the queues, the runs of a discussion --------------------------------------

S = Feedback.Status
SENT = (S.SUBMITTED, S.APPROVED)


class QueueCounts(TypedDict):
    """What discussion_queue counts per discussion: mine (this auditor's) and everyone's."""

    n_subject: int
    n_left: int  # statements still to code that I have not sent
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


def _unsent_queued(*, user: User) -> QuerySet[Statement]:
    """Statements still to code that I have not sent a coding of (none, a draft, sent back)."""
    return Statement.objects.to_code().filter(~Exists(_sent_by(user=user)))


def _sent_by(*, user: User) -> QuerySet[Feedback]:
    """My sent coding of the outer statement."""
    return Feedback.objects.filter(statement_id=OuterRef("pk"), auditor=user, status__in=SENT)


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
    queued = Statement.objects.to_code().filter(discussion=OuterRef("pk"))
    uncoded = queued.exclude(feedback__auditor=user)
    next_uncoded = uncoded
    if triage_lowest_first():
        next_uncoded = uncoded.annotate(weakest=Min("triage__confidence")).order_by(
            F("weakest").asc(nulls_last=True), "order"
        )
    else:
        next_uncoded = next_uncoded.order_by("order")
    n_queued = queued.order_by().values("discussion").annotate(n=Count("pk")).values("n")
    n_left = (
        _unsent_queued(user=user)
        .filter(discussion=OuterRef("pk"))
        .order_by()
        .values("discussion")
        .annotate(n=Count("pk"))
        .values("n")
    )
    weakest = (
        uncoded.order_by().values("discussion").annotate(w=Min("triage__confidence")).values("w")
    )
    return Discussion.objects.annotate(
        n_subject=Coalesce(Subquery(n_queued), Value(0)),
        n_left=Coalesce(Subquery(n_left), Value(0)),
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


TRIAGE_COUNTS = ("n_provisional", "n_qa", "n_qa_approved")


def triage_counts(*, run_id: int) -> dict[str, int]:
    """What review triage has done to the queue: provisional statements, the QA sample, and
    QA statements already coded and approved, as counted when triage last applied its outcome
    (``triage_counts_store``); none without settings (nothing was ever accepted)."""
    found = TriageSettings.objects.filter(run_id=run_id).values(*TRIAGE_COUNTS).first()
    return found or dict.fromkeys(TRIAGE_COUNTS, 0)


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


def progress_status_filter(*, user: User, status: str) -> Q:
    """Discussions whose row says ``status`` (``queue_status`` in the view reads the same from
    live counts): "needs changes" when a coding of mine was sent back; otherwise "done" when
    there is something to code and I sent all of it, "in progress" when I coded something,
    else "not started". Each is a condition on my stored tally and the discussion's stored
    count of what is still to code, so a page costs what its discussions cost."""
    mine = CodingTally.objects.filter(auditor=user, discussion_id=OuterRef("pk"))
    if status == "not_started":
        return ~Q(Exists(mine.filter(coded__gt=0)))
    if status == "needs_changes":
        return Q(Exists(mine.filter(rejected__gt=0)))
    started = mine.filter(coded__gt=0, rejected=0)
    if status == "done":
        return Q(Exists(started.filter(_sent_all_to_code())))
    return Q(Exists(started.filter(~_sent_all_to_code())))


def _sent_all_to_code() -> Exists:
    """On a tally: its discussion has something to code and the tally's auditor sent it all."""
    return Exists(
        DiscussionFigures.objects.filter(
            pk=OuterRef("discussion_id"), to_code__gt=0, to_code__lte=OuterRef("sent_to_code")
        )
    )


PROGRESS_STATUSES = ("not_started", "in_progress", "done", "needs_changes")


def discussion_queue_page(
    *,
    user: User,
    visible: Q | None,
    status: str,
    q: str,
    page: str | int | None,
    per_page: int,
) -> tuple[Page, list[QueueDiscussion]]:
    """One page of the queue and its discussions with their counts.

    The page is cut from the discussion ids first (with the progress filter as a condition per
    discussion) and only its discussions are counted, so the page costs the same however many
    discussions there are: in discussion order (the default), or in review triage's
    weakest-first order (``WeakestFirst``)."""
    discussions = Discussion.objects.all()
    if visible is not None:  # joins: one row per match, so as a subquery
        discussions = discussions.filter(pk__in=Discussion.objects.filter(visible).values("pk"))
    if status in PROGRESS_STATUSES:
        discussions = discussions.filter(progress_status_filter(user=user, status=status))
    if q:
        discussions = discussions.filter(summary__icontains=q)
    ids: Any = discussions.order_by("id").values_list("pk", flat=True)
    if triage_lowest_first():
        ids = WeakestFirst(user=user, discussions=discussions)
    found = Paginator(ids, per_page).get_page(page)
    counted = {d.pk: d for d in discussion_queue_counted(user=user, ids=[int(pk) for pk in found])}
    return found, [counted[pk] for pk in found]


class WeakestFirst:
    """The discussions' ids in review triage's weakest-first order, for the paginator: first
    those with a statement I still have to code that triage scored, by the lowest such score
    (then id), then the others by id; the count is the discussions'.

    Both kinds of stored lowest score are read from the lowest up along an index, as far as
    the page needs, and merged: my tally's (``CodingTally.weakest``) where I have coded
    something, else the discussion's (``DiscussionFigures.weakest``)."""

    def __init__(self, *, user: User, discussions: QuerySet[Discussion]) -> None:
        self.discussions = discussions
        shown = discussions.values("pk")
        coded_here = CodingTally.objects.filter(
            auditor=user, discussion_id=OuterRef("discussion_id"), coded__gt=0
        )
        self.theirs = (
            DiscussionFigures.objects.filter(weakest__isnull=False, discussion__in=shown)
            .exclude(Exists(coded_here))
            .order_by("weakest", "discussion_id")
            .values_list("weakest", "discussion_id")
        )
        self.mine = (
            CodingTally.objects.filter(
                auditor=user, coded__gt=0, weakest__isnull=False, discussion__in=shown
            )
            .order_by("weakest", "discussion_id")
            .values_list("weakest", "discussion_id")
        )

    def count(self) -> int:
        return self.discussions.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, window: slice) -> list[int]:
        start, stop = window.start or 0, window.stop
        weakest = self._scored(stop)
        if stop is not None and len(weakest) >= stop:
            return weakest[start:stop]
        # every scored discussion was read, so the rest are the others, by id
        rest = self.discussions.exclude(pk__in=weakest).order_by("id").values_list("pk", flat=True)
        skip = max(start - len(weakest), 0)
        upto = None if stop is None else stop - len(weakest)
        return [*weakest[start:stop], *rest[skip:upto]]

    def _scored(self, stop: int | None) -> list[int]:
        """The first ``stop`` scored discussions in order (all of them if fewer)."""
        theirs, mine = (
            (self.theirs, self.mine) if stop is None else (self.theirs[:stop], self.mine[:stop])
        )
        return [pk for _, pk in itertools.islice(heapq.merge(theirs, mine), stop)]


def discussion_queue_counted(*, user: User, ids: list[int]) -> list[QueueDiscussion]:
    """These discussions (in id order) with the counts of ``discussion_queue``, read with three
    grouped queries over their own statements and feedback only, my stored tallies and the
    discussions' stored lowest scores."""
    discussions = list(Discussion.objects.filter(pk__in=ids).order_by("id"))
    # What is still to code, and the first of it I have not coded, in one pass over it.
    coded_by_me = Exists(Feedback.objects.filter(statement_id=OuterRef("pk"), auditor=user))
    to_code = {
        discussion_id: (n, first)
        for discussion_id, n, first in Statement.objects.to_code()
        .filter(discussion_id__in=ids)
        .order_by()
        .values("discussion_id")
        .annotate(n=Count("pk"), first=Min("order", filter=~coded_by_me))
        .values_list("discussion_id", "n", "first")
    }
    # What I sent of it is counted in my tally (``sent_to_code``), so no statement is checked
    # against my codings one by one. The lowest score still to code is stored too: my tally's where I
    # coded something, else the discussion's (what ``WeakestFirst`` orders by).
    tallies = CodingTally.objects.filter(auditor=user, discussion_id__in=ids)
    sent: dict[int, int] = {}
    weakest = _weakest_stored(ids)
    for discussion_id, sent_to_code, coded, own_weakest in tallies.values_list(
        "discussion_id", "sent_to_code", "coded", "weakest"
    ):
        sent[discussion_id] = sent_to_code
        if coded:
            weakest[discussion_id] = own_weakest
    n_queued = {pk: (n, n - sent.get(pk, 0)) for pk, (n, _) in to_code.items()}
    mine = Q(auditor=user)
    counts = {
        row.pop("statement__discussion_id"): row
        for row in Feedback.objects.filter(statement__discussion_id__in=ids)
        .order_by()
        .values("statement__discussion_id")
        .annotate(
            mine_coded=Count("pk", filter=mine),
            mine_sent=Count("pk", filter=mine & Q(status__in=SENT)),
            mine_approved=Count("pk", filter=mine & Q(status=S.APPROVED)),
            mine_rejected=Count("pk", filter=mine & Q(status=S.REJECTED)),
            all_coded=Count("statement", distinct=True),
            all_sent=Count("statement", filter=Q(status__in=SENT), distinct=True),
            all_approved=Count("statement", filter=Q(status=S.APPROVED), distinct=True),
        )
    }
    firsts = {(pk, first) for pk, (_, first) in to_code.items() if first is not None}
    next_ids = {
        discussion_id: pk
        for discussion_id, order, pk in Statement.objects.filter(
            discussion_id__in=ids, order__in={order for _, order in firsts}
        ).values_list("discussion_id", "order", "pk")
        if (discussion_id, order) in firsts
    }
    empty = dict.fromkeys(QueueCounts.__annotations__, 0)
    for discussion in discussions:
        figures = {**empty, **counts.get(discussion.pk, {})}
        figures["n_subject"], figures["n_left"] = n_queued.get(discussion.pk, (0, 0))
        figures["next_uncoded"] = next_ids.get(discussion.pk)
        figures["weakest"] = weakest.get(discussion.pk)
        for name, value in figures.items():
            setattr(discussion, name, value)
    return discussions


def _weakest_stored(ids: list[int]) -> dict[int, float | None]:
    """The discussions' lowest score still to code, as stored for whoever has coded none of
    it (``DiscussionFigures.weakest``): read, not computed from 250,000 triage rows a page."""
    figures = DiscussionFigures.objects.filter(discussion_id__in=ids, weakest__isnull=False)
    return dict(figures.values_list("discussion_id", "weakest"))


def submitted_feedback_page(
    *, auditor_id: int | None, page: str | int | None, per_page: int
) -> tuple[Page, list[dict], int]:
    """One page of the review queue's groups (discussion x auditor, in that order), the
    groups' items, and how many submissions wait in all. The page is cut from the group keys,
    so only its own submissions are read; the groups and the total come from the stored
    tallies (``audit.derived.tallies``)."""
    tallies = submitted_tallies()
    if auditor_id:
        tallies = tallies.filter(auditor_id=auditor_id)
    keys = tallies.order_by("discussion_id", "auditor_id").values_list(
        "discussion_id", "auditor_id"
    )
    found = Paginator(keys, per_page).get_page(page)
    groups: list[dict] = []
    if found.object_list:
        where = Q()
        for discussion_id, auditor in found.object_list:
            where |= Q(statement__discussion_id=discussion_id, auditor_id=auditor)
        # the page's discussions by id first: an index scan, then the pairs among them
        where &= Q(statement__discussion_id__in={d for d, _ in found.object_list})
        groups, _ = submitted_feedback_groups(auditor_id=auditor_id, where=where)
    return found, groups, tallies.aggregate(n=Sum("in_review"))["n"] or 0


def submitted_tallies() -> QuerySet[CodingTally]:
    """The stored (discussion, auditor) tallies with submissions not yet decided."""
    return CodingTally.objects.filter(in_review__gt=0)


def submitted_feedback_groups(
    *, auditor_id: int | None, where: Q | None = None
) -> tuple[list[dict], list[Feedback]]:
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
    if where is not None:
        submitted = submitted.filter(where)
    items = list(
        submitted.select_related("statement__discussion", "auditor")
        .defer("edited_extraction", "proposed_extraction")  # the queue lists, never shows them
        .order_by("statement__discussion_id", "auditor_id", "statement__order")[:1000]
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


def discussion_progress(*, discussion: Discussion, user: User) -> dict[str, int]:
    """The page head's figures (one query): subject statements, how many of them I coded, and
    how many of those I sent (submitted or approved)."""
    mine = Q(feedback__auditor=user)
    return (
        Statement.objects.subjects()
        .filter(discussion=discussion)
        .aggregate(
            n_subject=Count("pk", distinct=True),
            coded=Count("pk", filter=mine, distinct=True),
            sent=Count("pk", filter=mine & Q(feedback__status__in=SENT), distinct=True),
        )
    )


def discussion_window_bounds(
    *, discussion: Discussion, start: int, size: int
) -> tuple[int | None, int | None, int | None]:
    """(last order shown, order the next window starts at, order the previous one starts at)
    of the window of `size` statements from order `start` (two small queries on the index)."""
    orders = discussion.statements.order_by("order").values_list("order", flat=True)
    ahead = list(orders.filter(order__gte=start)[: size + 1])
    behind = list(orders.filter(order__lt=start).order_by("-order")[:size])
    last = ahead[min(size, len(ahead)) - 1] if ahead else None
    return (
        last,
        ahead[size] if len(ahead) > size else None,
        behind[-1] if behind else None,
    )


def discussion_runs(*, discussion: Discussion) -> list[ExtractionRun]:
    """Runs that extracted something in this discussion, newest first."""
    extracted = Extraction.objects.filter(statement__discussion=discussion).values("run_id")
    return list(
        ExtractionRun.objects.filter(pk__in=extracted)
        .select_related("configuration")  # their labels
        .latest_first()
    )


# --- comment threads -------------------------------------------------------------------------


# --- ids a coding may refer to -----------------------------------------------------------------
