"""Discussions, their speakers and their statements: the material being coded."""

from __future__ import annotations

import uuid

from django.db import models

from audit.models.coding import Feedback


class DiscussionQuerySet(models.QuerySet):
    def with_approved(self) -> DiscussionQuerySet:
        return self.filter(statements__feedback__status=Feedback.Status.APPROVED).distinct()


class Discussion(models.Model):
    summary = models.TextField()
    date = models.DateField(null=True, blank=True)
    external_id = models.CharField(max_length=200, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DiscussionQuerySet.as_manager()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.summary[:60]}"

    def save(self, *args, **kwargs) -> None:
        # Every discussion carries an external id so exports re-import idempotently.
        if not self.external_id:
            self.external_id = uuid.uuid4().hex
        super().save(*args, **kwargs)

    def subject_statements(self) -> models.QuerySet[Statement]:
        return self.statements.filter(speaker__type=Speaker.Type.SUBJECT).order_by("order")


class Speaker(models.Model):
    class Type(models.TextChoices):
        SUBJECT = "subject", "Subject"
        EXPERT = "expert", "Expert"

    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="speakers")
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=10, choices=Type.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["discussion", "name"], name="unique_speaker_name")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class StatementQuerySet(models.QuerySet):
    def subjects(self) -> StatementQuerySet:
        return self.filter(speaker__type=Speaker.Type.SUBJECT)

    def to_code(self) -> StatementQuerySet:
        """Subject statements auditors still have to code: not AI accepted by review triage."""
        return self.subjects().exclude(triage__provisional=True)


class Statement(models.Model):
    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="statements")
    speaker = models.ForeignKey(Speaker, on_delete=models.CASCADE, related_name="statements")
    order = models.PositiveIntegerField()
    text = models.TextField()

    objects = StatementQuerySet.as_manager()

    class Meta:
        ordering = ["discussion_id", "order"]
        constraints = [
            models.UniqueConstraint(fields=["discussion", "order"], name="unique_statement_order")
        ]

    def __str__(self) -> str:
        return f"Statement {self.pk} (#{self.order} of discussion {self.discussion_id})"

    @property
    def is_subject(self) -> bool:
        return self.speaker.type == Speaker.Type.SUBJECT

    def approved_feedback(self) -> Feedback | None:
        return self.feedback.filter(status=Feedback.Status.APPROVED).first()
