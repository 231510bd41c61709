"""Who codes what: the statements assigned to each auditor."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from audit.models.discussions import Discussion, Statement
from evalsite.access import is_admin


class AssignmentQuerySet(models.QuerySet):
    def open(self) -> AssignmentQuerySet:
        return self.filter(status=Assignment.Status.OPEN)

    def of(self, user) -> AssignmentQuerySet:
        return self.filter(auditor=user)

    def visible_to(self, user) -> AssignmentQuerySet:
        return self if is_admin(user) else self.filter(auditor=user)

    def in_due_order(self) -> AssignmentQuerySet:
        """What to code first: the earliest due date (none last), then discussion order. The
        stored discussion makes the first two keys an index's (``assignment_due_order``)."""
        return self.order_by(
            models.F("due").asc(nulls_last=True), "discussion_id", "statement__order"
        )


class Assignment(models.Model):
    """One subject statement an admin gave one auditor to code.

    Admins assign discussions or statement ranges; the services store one row per statement,
    so "what needs this auditor next" and "is anyone else on it" are single queries. The
    assignment is released (no longer open) when its auditor submits, skips or is unassigned
    (an unassignment deletes the row; the audit log keeps the act).
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"

    class SkipReason(models.TextChoices):
        UNCLEAR = "unclear", "Unclear"
        NOT_CODABLE = "not_codable", "Not codable"
        NEEDS_CONTEXT = "needs_context", "Needs context"
        OTHER = "other", "Other"

    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="assignments")
    # The statement's discussion (a statement never moves), stored so that an auditor's open
    # assignments can be read in due order along an index, as far as a page needs.
    discussion = models.ForeignKey(
        Discussion, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments"
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # Part of a planned overlap sample: coded by several auditors on purpose.
    overlap = models.BooleanField(default=False)
    due = models.DateField(null=True, blank=True)
    skip_reason = models.CharField(max_length=20, choices=SkipReason.choices, blank=True)
    skip_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    released_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["statement_id", "auditor_id"]
        # The skipped list, newest first, is read a page at a time in this order.
        indexes = [
            models.Index(
                fields=["-released_at", "-id"],
                condition=Q(status="skipped"),
                name="audit_assignment_skipped",
            ),
            # An auditor's open assignments in due order (``in_due_order``: a btree's ascending
            # order puts no date last on PostgreSQL); each discussion's few are sorted by place.
            models.Index(
                fields=["auditor", "due", "discussion"],
                condition=Q(status="open"),
                name="assignment_due_order",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["statement", "auditor"], name="one_assignment_per_auditor_per_statement"
            ),
            # Outside an overlap sample a statement is open for one auditor at a time.
            models.UniqueConstraint(
                fields=["statement"],
                condition=Q(status="open", overlap=False),
                name="one_open_assignment_per_statement",
            ),
        ]

    def __str__(self) -> str:
        return f"Statement {self.statement_id} assigned to {self.auditor} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN
