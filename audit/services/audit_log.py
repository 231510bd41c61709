"""The audit log: one row per named act on ground truth or its inputs.

Services write it inside their own transaction, so an act and its log entry commit together.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import models
from django.db.models import QuerySet
from django.utils import timezone

from audit.models import AuditLogEntry

Action = AuditLogEntry.Action


def audit_log_record(
    *,
    actor: User | None,
    action: str,
    target: models.Model | None = None,
    object_type: str = "",
    object_id: Any = "",
    message: str,
    details: dict | None = None,
) -> AuditLogEntry:
    """Record one act. Name the object either as a model instance or as type + id."""
    if target is not None:
        object_type = target._meta.model_name or ""
        object_id = target.pk
    return AuditLogEntry.objects.create(
        actor=actor,
        actor_name=actor.get_username() if actor is not None else "",
        action=action,
        object_type=object_type,
        object_id="" if object_id is None else str(object_id),
        message=message,
        details=details or {},
    )


def audit_log_list(*, filters: dict | None = None) -> QuerySet[AuditLogEntry]:
    """Entries newest first, filtered by who (actor id), what (action), when and which object."""
    filters = filters or {}
    entries = AuditLogEntry.objects.select_related("actor")
    if filters.get("actor"):
        entries = entries.filter(actor=filters["actor"])
    if filters.get("action"):
        entries = entries.filter(action=filters["action"])
    if filters.get("object_type"):
        entries = entries.filter(object_type=filters["object_type"])
    if filters.get("object_id"):
        entries = entries.filter(object_id=str(filters["object_id"]))
    if filters.get("since"):
        entries = entries.filter(created_at__gte=_day_start(filters["since"]))
    if filters.get("until"):
        entries = entries.filter(created_at__lt=_day_start(filters["until"], next_day=True))
    return entries.order_by("-created_at", "-id")


def _day_start(day: date, *, next_day: bool = False) -> datetime:
    """Date ranges are whole days, inclusive, in the site's time zone."""
    start = timezone.make_aware(datetime.combine(day, time.min))
    return start + timedelta(days=1) if next_day else start


def audit_log_object_types() -> list[str]:
    return list(
        AuditLogEntry.objects.order_by("object_type")
        .values_list("object_type", flat=True)
        .distinct()
    )
