"""Permanent history: a coding's revisions and the audit log, which no deletion removes
(only data a benchmark or test seeded itself is purged, inside ``history_purge``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import CASCADE, ProtectedError

# A coding's revisions and the audit log are never deleted: not by the admin site, not by a
# cascade from a deleted coding, statement or discussion, not by a queryset. Only data a
# benchmark or test seeded itself is purged, inside ``history_purge``.
_purging: ContextVar[bool] = ContextVar("history_purging", default=False)
HISTORY_IS_PERMANENT = (
    "Revisions and audit-log entries are permanent: a coding with history, its statement "
    "and its discussion cannot be deleted."
)


@contextmanager
def history_purge() -> Iterator[None]:
    """Let the code inside delete revisions and log entries (its own seeded data only)."""
    token = _purging.set(True)
    try:
        yield
    finally:
        _purging.reset(token)


def history_kept(collector: Any, field: Any, sub_objs: Any, using: str) -> None:
    """``on_delete`` of a revision's coding: refuse the deletion, unless purging."""
    if not _purging.get():
        raise ProtectedError(HISTORY_IS_PERMANENT, sub_objs)
    CASCADE(collector, field, sub_objs, using)


class HistoryQuerySet(models.QuerySet):
    def delete(self) -> tuple[int, dict[str, int]]:
        if not _purging.get():
            raise ProtectedError(HISTORY_IS_PERMANENT, set(self[:20]))
        return super().delete()

    delete.alters_data = True  # type: ignore[attr-defined]


class HistoryModel(models.Model):
    """A row of history: deleted only inside ``history_purge``."""

    objects = HistoryQuerySet.as_manager()

    class Meta:
        abstract = True

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if not _purging.get():
            raise ProtectedError(HISTORY_IS_PERMANENT, {self})
        return super().delete(*args, **kwargs)


class AuditLogEntry(HistoryModel):
    """One named act on ground truth or its inputs, for admins to look back on."""

    class Action(models.TextChoices):
        BLIND_MARK = "blind_mark", "Blind review marked"
        BLIND_UNMARK = "blind_unmark", "Blind review unmarked"
        APPROVE = "approve", "Approved"
        SELF_APPROVE = "self_approve", "Self-approved"
        UNAPPROVE = "unapprove", "Unapproved"
        REJECT = "reject", "Rejected"
        PROPOSE = "propose", "Change to approved ground truth proposed"
        IMPORT = "import", "Imported"
        RUN_UPLOAD = "run_upload", "Evaluation run uploaded"
        ASSIGN = "assign", "Assigned"
        REASSIGN = "reassign", "Reassigned"
        UNASSIGN = "unassign", "Unassigned"
        SKIP = "skip", "Skipped"
        TRIAGE_SETTINGS = "triage_settings", "Review triage settings changed"
        TRIAGE_ACCEPT = "triage_accept", "Review triage accepted statements provisionally"
        TRIAGE_SUSPEND = "triage_suspend", "Review triage suspended"
        GUIDELINES = "guidelines", "Coding guidelines saved"
        COMMENT = "comment", "Commented"
        ADJUDICATE = "adjudicate", "Codings adjudicated"
        ADJUDICATION_REMERGE = "adjud_remerge", "Adjudication re-merged"
        ADJUDICATION_RESET = "adjud_reset", "Adjudication choices reset (a coding changed)"
        RUN_REGISTER = "run_register", "Extraction run registered"
        SNAPSHOT_FREEZE = "snapshot_freeze", "Ground truth frozen as a snapshot"
        SNAPSHOT_DELETE = "snapshot_delete", "Ground-truth snapshot deleted"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as text too, so the log still says who after a user is deleted.
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    object_type = models.CharField(max_length=40)
    object_id = models.CharField(max_length=64, blank=True)
    message = models.TextField()
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"])]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.object_type} {self.object_id}"
