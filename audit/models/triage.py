"""Triage: which statements are worth a human's coding, and its settings."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Q

from audit.models.discussions import Speaker, Statement
from audit.models.runs import ExtractionRun


class TriageSettings(models.Model):
    """Review triage of one extraction run: statements the AI very likely got right skip the
    auditors' queue as provisional ground truth, with a proven bound (alpha, delta) on the share
    of unacceptable ones let through, and a QA sample coded by auditors as usual."""

    class State(models.TextChoices):
        OFF = "off", "Off"
        ACTIVE = "active", "Active"
        SUSPENDED = "suspended", "Suspended"

    run = models.OneToOneField(ExtractionRun, on_delete=models.CASCADE, related_name="triage")
    enabled = models.BooleanField(default=False)
    alpha = models.FloatField(default=0.05, help_text="Risk level: share of unacceptable ones.")
    delta = models.FloatField(default=0.10, help_text="Chance the bound fails.")
    acceptable_f1 = models.FloatField(default=1.0, help_text="F1 at or above: acceptable.")
    qa_rate = models.FloatField(default=0.10, help_text="Share of accepted ones coded anyway.")
    lowest_first = models.BooleanField(default=False, help_text="Queue: weakest AI first.")

    class Score(models.TextChoices):
        RAW = "raw", "Weakest item confidence × agreement with the other run"
        CALIBRATED = "calibrated", "Calibrated P(acceptable), fitted on other discussions"

    score = models.CharField(max_length=12, choices=Score.choices, default=Score.RAW)
    # The monitor reads QA results approved since triage was (re)enabled.
    enabled_at = models.DateTimeField(null=True, blank=True)
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_reason = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    # What triage has done to the queue, counted whenever it applies its outcome or gives the
    # accepted statements back (``triage_counts_store``): counting on a page read every triage
    # row of the run.
    n_provisional = models.PositiveIntegerField(default=0)
    n_qa = models.PositiveIntegerField(default=0)
    n_qa_approved = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"triage of {self.run} ({self.state})"

    @property
    def state(self) -> str:
        if not self.enabled:
            return self.State.OFF
        return self.State.SUSPENDED if self.suspended_at else self.State.ACTIVE

    @property
    def is_active(self) -> bool:
        return self.state == self.State.ACTIVE

    def chosen(self) -> dict[str, Any]:
        """What an admin chooses for the run's triage: logged before and after a change, shown
        by the API, stored with the triage result."""
        return {
            "enabled": self.enabled,
            "alpha": self.alpha,
            "delta": self.delta,
            "acceptable_f1": self.acceptable_f1,
            "qa_rate": self.qa_rate,
            "lowest_first": self.lowest_first,
            "score": self.score,
        }


class TriageStatementQuerySet(models.QuerySet):
    def provisional(self) -> TriageStatementQuerySet:
        return self.filter(provisional=True)

    def open_scores(self) -> TriageStatementQuerySet:
        """The scores of statements still to code (a subject's, AI accepted by no run's
        triage): what review triage's weakest-first queue orders by."""
        accepted = TriageStatement.objects.filter(
            statement_id=OuterRef("statement_id"), provisional=True
        )
        return self.filter(
            provisional=False, statement__speaker__type=Speaker.Type.SUBJECT
        ).exclude(Exists(accepted))

    def qa(self) -> TriageStatementQuerySet:
        return self.filter(qa=True)


class TriageStatement(models.Model):
    """A subject statement of a triaged run: its confidence score, whether it is AI accepted
    (provisional: out of the auditors' queue) and whether it was drawn for QA (stays in the
    queue, coded blind as usual; kept after approval, the monitor reads it)."""

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="+")
    # indexed below, with its score (``triage_statement_score``)
    statement = models.ForeignKey(
        Statement, on_delete=models.CASCADE, related_name="triage", db_index=False
    )
    confidence = models.FloatField()
    provisional = models.BooleanField(default=False)
    qa = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TriageStatementQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "statement"], name="one_triage_row_per_run")
        ]
        indexes = [
            models.Index(fields=["run", "provisional"]),
            # The queue's weakest-first order walks the rows from the lowest confidence up.
            models.Index(
                fields=["confidence", "statement"],
                condition=Q(provisional=False),
                name="triage_weakest_first",
            ),
            # Every "still to code" (``Statement.objects.to_code``) asks whether some run AI
            # accepted the statement: probed in this small index, not by hashing every accepted
            # row.
            models.Index(
                fields=["statement"], condition=Q(provisional=True), name="triage_accepted"
            ),
            # A statement's scores are read with it (the queue's weakest score of a page's
            # discussions) without visiting the table (a key column, not INCLUDE: SQLite too).
            models.Index(fields=["statement", "confidence"], name="triage_statement_score"),
        ]

    def __str__(self) -> str:
        return f"triage {self.run_id}/{self.statement_id} ({self.confidence:.3f})"
