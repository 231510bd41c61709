"""The two roles: auditors code and submit ground truth; admins review, approve and export."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.db.models import Q, QuerySet

AUDITOR = "auditor"
ADMIN = "admin"


def is_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return _group_names(user) & {ADMIN} != set()


def admins() -> QuerySet:
    """Every user with the admin role (superusers included)."""
    return get_user_model().objects.filter(Q(is_superuser=True) | Q(groups__name=ADMIN)).distinct()


def is_auditor(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Admins can code too; anyone in a role group may use the audit screens."""
    if not user.is_authenticated:
        return False
    return is_admin(user) or AUDITOR in _group_names(user)


def _group_names(user) -> set[str]:
    cached = getattr(user, "_evalsite_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._evalsite_groups = cached
    return cached


def ensure_role_groups() -> tuple[Group, Group]:
    auditor, _ = Group.objects.get_or_create(name=AUDITOR)
    admin, _ = Group.objects.get_or_create(name=ADMIN)
    return auditor, admin
