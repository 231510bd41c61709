"""Comment threads on statements: comments, replies, rejection reasons, @mentions and read
markers. Who reads which comment is ``audit.selectors.threads.comments_visible_to`` (the blind rule);
every comment is a named act in the audit log."""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from audit.models import Comment, Feedback, Notification, Statement, ThreadRead
from audit.selectors.threads import comments_visible_to
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import NotAllowed, WorkflowError
from evalsite.access import is_admin, is_auditor
from metrics.families.json_input import text_problem

MAX_COMMENT = 100_000  # characters, as a rejection reason
MAX_MENTIONS = 20
# The same comment posted again this soon (a double click, a retried request) is the same act.
REPEAT_WINDOW = timedelta(seconds=10)
# "@name" not preceded by a word character or "@" (so an e-mail address is no mention);
# usernames may hold letters, digits and @ . + - _ (Django's rule); a trailing dot ends a sentence.
MENTION = re.compile(r"(?<![\w@])@([\w.@+-]{1,150})")


def comment_check_body(*, body: object) -> str:
    """The body as it would be stored, or WorkflowError (400) naming the problem."""
    if not isinstance(body, str):
        raise WorkflowError("body: expected the comment as a string.")
    problem = text_problem(body)
    if problem:
        raise WorkflowError(f"body: {problem}.")
    body = body.strip()
    if not body:
        raise WorkflowError("body: a comment must not be empty.")
    if len(body) > MAX_COMMENT:
        raise WorkflowError(f"body: at most {MAX_COMMENT:,} characters (got {len(body):,}).")
    return body


def mentioned_usernames(body: str) -> list[str]:
    """The @usernames a comment names, in order, each once (at most MAX_MENTIONS)."""
    names: list[str] = []
    for match in MENTION.finditer(body):
        name = match[1].rstrip(".")
        if name and name not in names:
            names.append(name)
    return names[:MAX_MENTIONS]


@transaction.atomic
def comment_add(
    *,
    statement: Statement,
    author: User,
    body: object,
    feedback: Feedback | None = None,
    kind: str = Comment.Kind.COMMENT,
) -> Comment:
    """Add a comment to a statement's thread. With ``feedback`` it is about that coding only
    (its auditor and admins read it): admins comment on any coding, an auditor on their own.
    Mentioned users who may read the comment get a notification; the author's own read marker
    moves past it.

    Idempotent: the same author posting the same body about the same coding (or the whole
    statement) again within REPEAT_WINDOW gets the first comment back, ``created`` False,
    nothing stored, notified or logged twice. Posts to one statement queue on its row lock, so
    simultaneous repeats are caught too."""
    if not is_auditor(author):
        raise NotAllowed("Only auditors and admins take part in comment threads.")
    body = comment_check_body(body=body)
    if feedback is not None:
        if feedback.statement_id != statement.pk:
            raise WorkflowError(
                f"feedback: feedback {feedback.pk} codes statement {feedback.statement_id}, "
                f"not statement {statement.pk}."
            )
        if feedback.auditor_id != author.pk and not is_admin(author):
            raise NotAllowed("You can only comment on your own coding.")
    Statement.objects.select_for_update(no_key=True).filter(pk=statement.pk).first()
    repeat = (
        Comment.objects.filter(
            statement=statement,
            feedback=feedback,
            author=author,
            kind=kind,
            body=body,
            created_at__gte=timezone.now() - REPEAT_WINDOW,
        )
        .order_by("id")
        .first()
    )
    if repeat is not None:
        repeat.created = False
        repeat.notified = []
        return repeat
    comment = Comment.objects.create(
        statement=statement, feedback=feedback, author=author, body=body, kind=kind
    )
    comment.created = True  # type: ignore[attr-defined]
    notified = _notify_mentions(comment)
    thread_mark_read(statement=statement, user=author)
    about = f" about {feedback.auditor.get_username()}'s coding" if feedback else ""
    audit_log_record(
        actor=author,
        action=Action.COMMENT,
        target=comment,
        message=f"Commented on statement {statement.pk}{about}: {body[:200]}",
        details={
            "statement": statement.pk,
            "feedback": feedback.pk if feedback else None,
            "kind": kind,
            "mentions": notified,
        },
    )
    comment.notified = notified  # type: ignore[attr-defined]
    return comment


def _notify_mentions(comment: Comment) -> list[str]:
    """One notification per mentioned active user (not the author) who may read the comment;
    returns their usernames. A mention of someone who may not read it notifies nobody."""
    names = mentioned_usernames(comment.body)
    if not names:
        return []
    users = get_user_model().objects.filter(username__in=names, is_active=True)
    notified = []
    for user in users.exclude(pk=comment.author_id).order_by("username"):
        if not is_auditor(user):
            continue
        if comments_visible_to(user=user, statement=comment.statement).filter(pk=comment.pk):
            Notification.objects.get_or_create(user=user, comment=comment)
            notified.append(user.get_username())
    return notified


@transaction.atomic
def thread_mark_read(*, statement: Statement, user: User) -> int:
    """The user has read the statement's thread as far as they may see it: move their read
    marker to its newest visible comment and mark their notifications of it read. Returns the
    marker (0: nothing to read)."""
    newest = comments_visible_to(user=user, statement=statement).aggregate(n=Max("id"))["n"] or 0
    marker, created = ThreadRead.objects.get_or_create(
        user=user, statement=statement, defaults={"last_read": newest}
    )
    if not created:  # read_at moves too: comments revealed since count from it
        marker.last_read = max(marker.last_read, newest)
        marker.save(update_fields=["last_read", "read_at"])
    Notification.objects.filter(
        user=user, comment__statement=statement, read_at__isnull=True
    ).update(read_at=timezone.now())
    return max(marker.last_read, newest)
