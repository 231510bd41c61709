"""Reads of the audit app that the pages and the API share: querysets in a stable order (by id),
so API pagination is stable, and the history a reviewer reads. Writes stay in the services."""

from __future__ import annotations

import heapq
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.conf import settings
from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import (
    Count,
    Exists,
    F,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce

from audit.display import diff_summary, field_changes
from audit.models import (
    Adjudication,
    AuditorFigures,
    BlindReview,
    CodingTally,
    Comment,
    ComputeJob,
    Discussion,
    DiscussionFigures,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    GuidelineVersion,
    Notification,
    Statement,
    ThreadRead,
    TriageSettings,
    TriageStatement,
)
from audit.services.blind import submitted_statement_ids
from evalsite.access import admins, is_admin
from metrics.families.payload.rules import ENTITY_KINDS, as_id, payload_ids


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


def unassigned_visible() -> bool:
    return settings.UNASSIGNED_WORK_VISIBLE


def hidden_discussion_filter(user: User) -> Q | None:
    """With unassigned work hidden, an auditor's queue lists only discussions with their
    assignments (or their coding); None: no restriction."""
    if unassigned_visible() or is_admin(user):
        return None
    return Q(statements__assignments__auditor=user) | Q(statements__feedback__auditor=user)


def extractions_list(
    *, user: User | None = None, filters: dict[str, Any] | None = None
) -> QuerySet[Extraction]:
    """Extractions, filtered; for an auditor (``user``) only those their editor shows: none of
    a statement in the blind sample, and with unassigned work hidden only of their discussions."""
    lookups = {
        "run": "run_id",
        "discussion": "statement__discussion_id",
        "statement": "statement_id",
    }
    extractions = Extraction.objects.select_related("statement")
    if user is not None and not is_admin(user):
        extractions = extractions.filter(statement__blind_review__isnull=True)
        hidden = hidden_discussion_filter(user)
        if hidden is not None:
            visible = Discussion.objects.filter(hidden).values("pk")
            extractions = extractions.filter(statement__discussion__in=visible)
    return filtered_by(extractions, filters, lookups)


def feedback_list(*, user: User, filters: dict[str, Any] | None = None) -> QuerySet[Feedback]:
    """The feedback the user may see (auditors: their own; admins: all), filtered."""
    qs = (
        Feedback.objects.visible_to(user)
        .select_related("statement", "auditor", "approved_by", "guideline_version", "adjudication")
        .prefetch_related("adjudication__coders")
    )
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
    # against my codings one by one (16 ms a page at 5,000 x 50 for an auditor who coded in
    # every discussion). The lowest score still to code is stored too: my tally's where I
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
    return list(
        ExtractionRun.objects.filter(extractions__statement__discussion=discussion)
        .distinct()
        .latest_first()
    )


# --- comment threads -------------------------------------------------------------------------


def comments_visible_to(*, user: User, statement: Statement | None = None) -> QuerySet[Comment]:
    """The comments ``user`` may read (of one statement's thread, or all), in thread order.

    The blind rule (docs/coding-together.md): admins read every comment. An auditor reads
    their own comments, every comment about their own coding (a rejection reason and the
    replies), and the statement-wide comments of admins (guidance addressed to every coder).
    Other auditors' statement-wide comments could hint at the answer, so an auditor reads them
    only once they have submitted a coding of the statement themselves. Comments about another
    auditor's coding stay between that auditor and the admins.
    """
    comments = Comment.objects.select_related("author", "feedback__auditor")
    if statement is not None:
        comments = comments.filter(statement=statement)
    if not is_admin(user):
        # Submissions among the statements with statement-wide comments only (one thread's,
        # or every thread's): never a scan of everything the user ever coded.
        threads = (
            [statement.pk]
            if statement is not None
            else Comment.objects.filter(feedback__isnull=True).values("statement_id")
        )
        statement_wide = Q(feedback__isnull=True) & (
            Q(author__in=admins())
            | Q(statement_id__in=submitted_statement_ids(user, statements=threads))
        )
        comments = comments.filter(Q(author=user) | Q(feedback__auditor=user) | statement_wide)
    return comments.in_thread_order()


def comments_unread(*, user: User) -> QuerySet[Comment]:
    """Visible comments by others that the user's read marker of their thread does not cover.

    The marker covers the comments up to its id. Another auditor's statement-wide comment was
    hidden from an auditor until their first submission of the statement (the blind rule), so
    for those the marker counts only if it was set after that submission: a comment revealed
    by submitting is unread even when it is older than the newest one read before."""
    covered = ThreadRead.objects.filter(
        user=user, statement_id=OuterRef("statement_id"), last_read__gte=OuterRef("pk")
    )
    unread = comments_visible_to(user=user).exclude(author=user)
    if is_admin(user):
        return unread.exclude(Exists(covered))
    # Threads whose marker was set before the user's first submission (few: reading the
    # thread again clears it): there the marker does not cover the comments it revealed.
    first_submit = (
        FeedbackRevision.objects.filter(
            feedback__auditor=user, feedback__statement_id=OuterRef("statement_id"),
            action="submit",
        )
        .order_by("created_at")
        .values("created_at")[:1]
    )  # fmt: skip
    stale = list(
        ThreadRead.objects.filter(user=user)
        .annotate(first_submit=Subquery(first_submit))
        .filter(read_at__lt=F("first_submit"))
        .values_list("statement_id", flat=True)
    )
    revealed = Q(feedback__isnull=True) & ~Q(author__in=admins()) & Q(statement_id__in=stale)
    return unread.exclude(Exists(covered) & ~revealed)


def comments_unread_count(*, user: User) -> int:
    return comments_unread(user=user).count()


def approved_codings_count() -> int:
    """Approved codings of subject statements (each statement has one ground truth at most),
    summed from the stored team figures: a row per auditor, where counting the codings read
    every one after every approval (140 ms at 5,000 x 50 with two runs' ground truth). A
    coding of a statement that is not a subject's (its speaker's role changed) is not ground
    truth any metric scores, and is not counted."""
    return int(AuditorFigures.objects.aggregate(n=Sum("approved"))["n"] or 0)


@dataclass(frozen=True)
class UnreadComments:
    """A user's unread comments, counted in one query: by statement, with each of those
    statements' discussion. A page that shows them in several places (the header's badge, the
    home's threads, the queue's rows) reads them once."""

    by_statement: dict[int, int]
    discussion_of: dict[int, int]  # statement id -> its discussion, for the statements above

    @property
    def total(self) -> int:
        return sum(self.by_statement.values())

    def without(self, statement_id: int) -> UnreadComments:
        """The same with one thread read (every comment in it covered by the user's marker)."""
        by_statement = {k: n for k, n in self.by_statement.items() if k != statement_id}
        return UnreadComments(by_statement, self.discussion_of)

    def by_discussion(self, discussions: Iterable[int]) -> dict[int, int]:
        """{discussion id: unread comments} for the given discussions with any."""
        wanted, counts = set(discussions), dict[int, int]()
        for statement_id, n in self.by_statement.items():
            discussion_id = self.discussion_of[statement_id]
            if discussion_id in wanted:
                counts[discussion_id] = counts.get(discussion_id, 0) + n
        return counts


def comments_unread_summary(*, user: User) -> UnreadComments:
    """The user's unread comments by statement (``comments_unread``), built and read once:
    building that query costs more than running it (about 8 of 11 ms at 1,000 x 50)."""
    rows = (
        comments_unread(user=user)
        .order_by()
        .values_list("statement_id", "statement__discussion_id")
        .annotate(n=Count("id"))
    )
    by_statement, discussion_of = {}, {}
    for statement_id, discussion_id, n in rows:
        by_statement[statement_id], discussion_of[statement_id] = n, discussion_id
    return UnreadComments(by_statement, discussion_of)


class UnreadThread(TypedDict):
    statement: Statement
    unread: int


def threads_unread(*, unread: UnreadComments, limit: int = 50) -> list[UnreadThread]:
    """The threads with unread comments, oldest statement first (the inbox and home pages)."""
    counts = unread.by_statement
    ids = sorted(counts)[:limit]
    statements = Statement.objects.select_related("discussion", "speaker").in_bulk(ids)
    return [{"statement": statements[pk], "unread": counts[pk]} for pk in ids if pk in statements]


def notifications_list(*, user: User) -> QuerySet[Notification]:
    """The user's notices (mentions), newest first."""
    return Notification.objects.filter(user=user).select_related(
        "comment__author", "comment__statement"
    )


def blind_reviews_page(*, number: str | None, per_page: int) -> Page:
    """The statements marked for blind review, newest first, one page of them; each with how
    many blind and pre-filled codings were sent for it, counted for that page's marks only."""
    order = ("-created_at", "-statement_id")
    ids = BlindReview.objects.order_by(*order).values_list("pk", flat=True)
    page = Paginator(ids, per_page).get_page(number)
    coded = Q(statement__feedback__status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED))
    marks = BlindReview.objects.filter(pk__in=list(page.object_list)).annotate(
        n_blind=Count("statement__feedback", filter=coded & Q(statement__feedback__blind=True)),
        n_prefilled=Count(
            "statement__feedback", filter=coded & Q(statement__feedback__blind=False)
        ),
    )
    listed: Any = list(marks.select_related("statement__discussion", "marked_by").order_by(*order))
    page.object_list = listed
    return page


def guideline_versions() -> QuerySet[GuidelineVersion]:
    """Every saved version of the guidelines, newest first."""
    return GuidelineVersion.objects.select_related("author").order_by("-number")


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
    discussions when each has 5 to adjudicate: 21 -> 3 ms at 1,000 x 50)."""
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


# --- ids a coding may refer to -----------------------------------------------------------------

# The ids of the dict items of each entity list of every payload (every run's extraction and
# every coder's coding) of the statements above one, as JSON text: PostgreSQL takes them out of
# the payloads, so the 2-3 KB payloads are neither sent nor decoded (an approval far down a
# long discussion read about 775 of them for a few hundred ids).
_EARLIER_IDS_SQL = """
SELECT DISTINCT lists.kind, (item -> 'id')::text
FROM (
    SELECT payload.pdp_deltas AS doc FROM {extraction} payload
    JOIN {statement} statement ON statement.id = payload.statement_id
    WHERE statement.discussion_id = %(discussion)s AND statement."order" < %(order)s
    UNION ALL
    SELECT payload.edited_extraction FROM {feedback} payload
    JOIN {statement} statement ON statement.id = payload.statement_id
    WHERE statement.discussion_id = %(discussion)s AND statement."order" < %(order)s
) payloads
CROSS JOIN (VALUES ('people'), ('events'), ('pair_bonds')) AS lists(kind)
CROSS JOIN LATERAL jsonb_array_elements(
    CASE WHEN jsonb_typeof(payloads.doc -> lists.kind) = 'array'
    THEN payloads.doc -> lists.kind ELSE '[]'::jsonb END
) AS item
WHERE jsonb_typeof(item) = 'object' AND item ? 'id'
"""


def earlier_item_ids(*, statement: Statement) -> dict[str, set]:
    """The ids of the people, events and pair bonds in every payload of the discussion's
    earlier statements (which a delta may refer to): `metrics.families.payload.rules.payload_ids` of them all."""
    if connection.vendor != "postgresql":
        earlier = {"statement__discussion_id": statement.discussion_id}
        earlier["statement__order__lt"] = statement.order
        ai = Extraction.objects.filter(**earlier).values_list("pdp_deltas", flat=True)
        coded = Feedback.objects.filter(**earlier).values_list("edited_extraction", flat=True)
        return payload_ids([*ai, *coded])
    tables = {
        "extraction": Extraction._meta.db_table,
        "feedback": Feedback._meta.db_table,
        "statement": Statement._meta.db_table,
    }
    ids: dict[str, set] = {kind: set() for kind in ENTITY_KINDS}
    with connection.cursor() as cursor:
        cursor.execute(
            _EARLIER_IDS_SQL.format(**tables),
            {"discussion": statement.discussion_id, "order": statement.order},
        )
        for kind, text in cursor.fetchall():
            ident = as_id(json.loads(text))  # as payload_ids reads an id: ints and strings
            if ident is not None:
                ids[kind].add(ident)
    return ids
