"""Comment threads: the comments a user may see, what is unread, notifications."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import (
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)

from audit.models import (
    AuditorFigures,
    Comment,
    FeedbackRevision,
    Notification,
    Statement,
    ThreadRead,
)
from audit.selectors.blind import submitted_statement_ids
from evalsite.access import admins, is_admin


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
        # comments_unread_summary reads the same in SQL (_admin_unread_rows): change both.
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
    every one after every approval. A
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
    """The user's unread comments by statement (``comments_unread``), read once per page.
    An admin's (every page's header asks for them) are read in plain SQL: with no blind rule
    to apply, building the ORM's query cost far more than running it."""
    rows: Iterable[tuple[int, int, int]]
    if is_admin(user):
        rows = _admin_unread_rows(user.pk)
    else:
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


def _admin_unread_rows(user_id: int) -> list[tuple[int, int, int]]:
    """(statement, its discussion, unread) for an admin: ``comments_unread``'s admin branch,
    every comment by someone else past the admin's read marker of its thread."""
    quote = connection.ops.quote_name
    comment, statement, marker = (
        quote(model._meta.db_table) for model in (Comment, Statement, ThreadRead)
    )
    sql = f"""
        SELECT c.statement_id, s.discussion_id, COUNT(*) FROM {comment} AS c
          JOIN {statement} AS s ON s.id = c.statement_id
         WHERE c.author_id <> %s
           AND NOT EXISTS (SELECT 1 FROM {marker} AS r WHERE r.user_id = %s
                           AND r.statement_id = c.statement_id AND r.last_read >= c.id)
         GROUP BY c.statement_id, s.discussion_id"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, user_id])
        return cursor.fetchall()


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
