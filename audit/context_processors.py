from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from django.contrib.auth.models import User
from django.http import HttpRequest

from audit.definitions import (
    DIRECTION_DEFINITIONS,
    EVENT_KIND_DEFINITIONS,
    RELATIONSHIP_DEFINITIONS,
    SARF_VARIABLE_DEFINITIONS,
)
from audit.markdown import Html, render_markdown
from audit.models import Assignment
from audit.selectors.threads import UnreadComments, comments_unread_summary
from audit.services.guidelines import guideline_current
from evalsite.access import is_admin, is_auditor
from metrics.families.payload.schema import RELATIONSHIPS

T = TypeVar("T")


def roles(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None:
        return {"is_admin": False, "is_auditor": False}
    return {"is_admin": is_admin(user), "is_auditor": is_auditor(user)}


def inbox(request: HttpRequest) -> dict:
    """The header's unread-comments badge. A callable: the count is read only when a page
    shows it (signed-in users with a role)."""
    user = getattr(request, "user", None)
    if user is None or not is_auditor(user):
        return {"inbox_unread": 0}
    return {"inbox_unread": lambda: unread_comments(request).total}


def unread_comments(request: HttpRequest) -> UnreadComments:
    """The signed-in user's unread comments, read at most once per request (the header's
    badge, the home's threads and the queue's rows share them), when first asked: after the
    view's own writes."""
    found: UnreadComments | None = getattr(request, "_unread_comments", None)
    if found is None:
        user = request.user
        found = (
            comments_unread_summary(user=user) if isinstance(user, User) else UnreadComments({}, {})
        )
        request._unread_comments = found  # type: ignore[attr-defined]
    return found


def unread_comments_thread_read(request: HttpRequest, statement_id: int) -> None:
    """The request just marked a thread read: what shows unread comments after this (the
    header's badge) no longer counts it. The page's read is amended, not repeated: the marker
    covers every comment of the thread the page listed (one posted in between counts from
    the next page on)."""
    found: UnreadComments | None = getattr(request, "_unread_comments", None)
    if found is not None:
        request._unread_comments = found.without(statement_id)  # type: ignore[attr-defined]


@lru_cache(maxsize=16)
def _rendered(pk: int, text: str) -> Html:
    """A saved version never changes: its Markdown is rendered once per process."""
    return render_markdown(text)


def _once(read: Callable[[], T]) -> Callable[[], T]:
    """`read` called at most once per request, and only if a template asks for it."""
    found: list[T] = []

    def call() -> T:
        if not found:
            found.append(read())
        return found[0]

    return call


def shortcuts(request: HttpRequest) -> dict:
    """What the keyboard help lists (the relationship codes the digits 1-9 set, in order) and
    the reasons a statement can be skipped for."""
    current = _once(guideline_current)
    return {
        "shortcut_relationships": RELATIONSHIPS[:9],
        "skip_reasons": Assignment.SkipReason.choices,
        "definitions": {
            "variables": SARF_VARIABLE_DEFINITIONS,
            "directions": DIRECTION_DEFINITIONS,
            "relationships": RELATIONSHIP_DEFINITIONS,
            "event_kinds": EVENT_KIND_DEFINITIONS,
        },
        # Callables: read and rendered only on pages that show the guideline panel, the
        # version once for both.
        "guidelines_current": current,
        "guidelines_html": lambda: (
            _rendered(version.pk, version.text) if (version := current()) else None
        ),
    }
