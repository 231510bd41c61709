"""Statement threads: comments, how far each user has read, and @mention notices."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from audit.models.coding import Feedback
from audit.models.discussions import Statement


class CommentQuerySet(models.QuerySet):
    def in_thread_order(self) -> CommentQuerySet:
        return self.order_by("created_at", "id")


class Comment(models.Model):
    """A message in a statement's thread. ``feedback`` set: about that coding only (a rejection
    reason, the auditor's reply), seen by its auditor and admins; unset: the whole statement.
    Who sees which comment is decided in ``audit.services.comments`` (blind rules)."""

    class Kind(models.TextChoices):
        COMMENT = "comment", "Comment"
        REJECTION = "rejection", "Rejection reason"

    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="comments")
    feedback = models.ForeignKey(
        Feedback, null=True, blank=True, on_delete=models.CASCADE, related_name="comments"
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.COMMENT)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CommentQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["statement", "id"])]

    def __str__(self) -> str:
        return f"Comment {self.pk} on statement {self.statement_id}"


class ThreadRead(models.Model):
    """How far one user has read one statement's thread (the newest comment id they saw)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="+")
    last_read = models.PositiveBigIntegerField(default=0)
    read_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "statement"], name="one_read_marker_per_thread")
        ]

    def __str__(self) -> str:
        return f"{self.user} read statement {self.statement_id} up to comment {self.last_read}"


class Notification(models.Model):
    """An in-app notice for one user: someone @mentioned them in a comment."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="notifications")
    read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "comment"], name="one_notice_per_mention")
        ]

    def __str__(self) -> str:
        return f"Mention of {self.user} in comment {self.comment_id}"
