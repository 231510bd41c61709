"""Who may do what, for both apps: the two roles, the page decorators and the API permissions.

Auditors code and submit ground truth; admins review, approve and export (and may code too).
A role is membership of a group of the same name; superusers count as admins. This module only
knows users and groups, so every app (audit on the ground floor, metrics above it) may import it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from rest_framework import permissions
from rest_framework.request import Request

AUDITOR = "auditor"
ADMIN = "admin"

AnyUser = AbstractBaseUser | AnonymousUser

# --- roles -------------------------------------------------------------------------------------


def is_admin(user: AnyUser) -> bool:
    if not user.is_authenticated:
        return False
    if getattr(user, "is_superuser", False):
        return True
    return ADMIN in _group_names(user)


def is_auditor(user: AnyUser) -> bool:
    """Admins can code too; anyone in a role group may use the audit screens."""
    if not user.is_authenticated:
        return False
    return is_admin(user) or AUDITOR in _group_names(user)


def admins() -> QuerySet:
    """Every user with the admin role (superusers included)."""
    return get_user_model().objects.filter(Q(is_superuser=True) | Q(groups__name=ADMIN)).distinct()


def ensure_role_groups() -> tuple[Group, Group]:
    auditor, _ = Group.objects.get_or_create(name=AUDITOR)
    admin, _ = Group.objects.get_or_create(name=ADMIN)
    return auditor, admin


def _group_names(user: Any) -> set[str]:
    # One query per request: role checks run several times while a page renders.
    cached: set[str] | None = getattr(user, "_evalsite_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._evalsite_groups = cached
    return cached


# --- page decorators ---------------------------------------------------------------------------

View = Callable[..., HttpResponseBase]


def role_required(check: Callable[[AnyUser], bool]) -> Callable[[View], View]:
    """Sign-in first (a redirect), then the role (a 403 for a signed-in user without it)."""

    def decorator(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not check(request.user):
                raise PermissionDenied("Your account has no role that may open this page.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


auditor_required = role_required(is_auditor)
admin_required = role_required(is_admin)


# --- API permissions ---------------------------------------------------------------------------


class IsAuditor(permissions.BasePermission):
    """Anyone in a role group (auditor or admin)."""

    message = "Your account has no role (auditor or admin) that may use the API."

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_auditor(request.user)


class IsAdmin(permissions.BasePermission):
    message = "Only admins may do this."

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_admin(request.user)


class IsAdminOrReadOnly(permissions.BasePermission):
    """Reads for every role; writes for admins. Use after ``IsAuditor``."""

    message = "Only admins may do this."

    def has_permission(self, request: Request, view: Any) -> bool:
        return request.method in permissions.SAFE_METHODS or is_admin(request.user)


READ_ALL_WRITE_ADMIN = [IsAuditor, IsAdminOrReadOnly]
ADMIN_ONLY = [IsAuditor, IsAdmin]
