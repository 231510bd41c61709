from django.http import HttpRequest

from audit.definitions import (
    DIRECTION_DEFINITIONS,
    EVENT_KIND_DEFINITIONS,
    RELATIONSHIP_DEFINITIONS,
    SARF_VARIABLE_DEFINITIONS,
)
from audit.markdown import Html, render_markdown
from audit.models import Assignment
from audit.schemas import RELATIONSHIPS
from audit.selectors import comments_unread_count
from audit.services.guidelines import guideline_current
from evalsite.access import is_admin, is_auditor


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
    return {"inbox_unread": lambda: comments_unread_count(user=user)}


def _guidelines_html() -> Html | None:
    current = guideline_current()
    return render_markdown(current.text) if current else None


def shortcuts(request: HttpRequest) -> dict:
    """What the keyboard help lists (the relationship codes the digits 1-9 set, in order) and
    the reasons a statement can be skipped for."""
    return {
        "shortcut_relationships": RELATIONSHIPS[:9],
        "skip_reasons": Assignment.SkipReason.choices,
        "definitions": {
            "variables": SARF_VARIABLE_DEFINITIONS,
            "directions": DIRECTION_DEFINITIONS,
            "relationships": RELATIONSHIP_DEFINITIONS,
            "event_kinds": EVENT_KIND_DEFINITIONS,
        },
        # Callables: read and rendered only on pages that show the guideline panel.
        "guidelines_current": guideline_current,
        "guidelines_html": _guidelines_html,
    }
