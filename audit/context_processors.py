from django.http import HttpRequest

from audit.models import Assignment
from audit.schemas import RELATIONSHIPS
from evalsite.access import is_admin, is_auditor


def roles(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None:
        return {"is_admin": False, "is_auditor": False}
    return {"is_admin": is_admin(user), "is_auditor": is_auditor(user)}


def shortcuts(request: HttpRequest) -> dict:
    """What the keyboard help lists (the relationship codes the digits 1-9 set, in order) and
    the reasons a statement can be skipped for."""
    return {
        "shortcut_relationships": RELATIONSHIPS[:9],
        "skip_reasons": Assignment.SkipReason.choices,
    }
