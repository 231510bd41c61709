"""The imported inputs edited by hand (the admin site), and deletions: what is derived from them
follows each write here, as it follows the other services' writes.

A deletion cascades (a discussion takes its statements, their codings, assignments and triage
rows with it), so ``inputs_delete`` reads what will go before it deletes and says so
(``audit.signals.rows_deleting``: the stored results depend on it), then has the stored counts
follow: the tallies of deleted discussions leave the auditors' rows, those of surviving
discussions are recounted, as are what is still to code and the lowest open scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from audit.derived.coding_times import codings_deleting
from audit.derived.tallies import SENT, Pair, queue_changed, tallies_forget, tallies_refresh
from audit.derived.team_figures import discussion_label_store, queue_figures_refresh
from audit.models import (
    Assignment,
    BlindReview,
    Discussion,
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    Feedback,
    Speaker,
    Statement,
    TriageStatement,
)
from audit.signals import rows_deleting_send, statements_edited_send


@transaction.atomic
def discussion_save(*, discussion: Discussion) -> Discussion:
    """Create or change a discussion; the team page's row shows its summary."""
    created = discussion.pk is None
    discussion.save()
    if not created:
        discussion_label_store(discussion=discussion)
    return discussion


@transaction.atomic
def speaker_save(*, speaker: Speaker) -> Speaker:
    """Create or change a speaker: a speaker who becomes (or stops being) the subject brings
    their statements into what is still to code (or takes them out)."""
    created = speaker.pk is None
    speaker.save()
    if not created:  # a new speaker has no statements yet
        queue_changed(statement_ids=speaker.statements.values_list("pk", flat=True))
    return speaker


@transaction.atomic
def statement_save(*, statement: Statement) -> Statement:
    """Add or change a statement: its discussion's count of what is still to code and lowest
    open score follow, and the stored results that name its place (an edit)."""
    created = statement.pk is None
    statement.save()
    queue_figures_refresh(discussion_ids=[statement.discussion_id])
    if not created:
        statements_edited_send(statement_ids=[statement.pk])
    return statement


@dataclass
class _Going:
    """What a deletion takes with it, read before it deletes."""

    discussions: set[int] = field(default_factory=set)  # deleted themselves
    touched: set[int] = field(default_factory=set)  # discussions that lose statements
    pairs: set[Pair] = field(default_factory=set)  # (discussion, auditor) tallies changed
    feedback: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)  # statements a deleted run accepted
    scored: set[int] = field(default_factory=set)  # discussions a deleted run scored
    # What the stored results depend on (``audit.signals.rows_deleting``).
    statements: list[tuple[int, int]] = field(default_factory=list)
    extractions: list[tuple[int, int]] = field(default_factory=list)
    discussion_extractions: list[tuple[int, int]] = field(default_factory=list)
    approved: list[int] = field(default_factory=list)
    runs: list[int] = field(default_factory=list)
    coding: bool = False

    def announce(self) -> None:
        rows_deleting_send(
            statements=self.statements,
            extractions=self.extractions,
            discussion_extractions=self.discussion_extractions,
            approved=self.approved,
            runs=self.runs,
            coding=self.coding,
        )


def _statements_of(rows: QuerySet) -> QuerySet[Statement] | None:
    ids = rows.values("pk")
    if rows.model is Discussion:
        return Statement.objects.filter(discussion_id__in=ids)
    if rows.model is Speaker:
        return Statement.objects.filter(speaker_id__in=ids)
    if rows.model is Statement:
        return Statement.objects.filter(pk__in=ids)
    return None


def _going(rows: QuerySet) -> _Going:
    going = _Going()
    if rows.model is Discussion:
        going.discussions = set(rows.values_list("pk", flat=True))
    statements = _statements_of(rows)
    feedback: QuerySet[Feedback] = Feedback.objects.none()
    assignments: QuerySet[Assignment] = Assignment.objects.none()
    if statements is not None:
        going.statements = list(statements.values_list("pk", "discussion_id"))
        going.touched = {discussion_id for _, discussion_id in going.statements}
        feedback = Feedback.objects.filter(statement__in=statements)
        assignments = Assignment.objects.filter(statement__in=statements)
        going.coding = BlindReview.objects.filter(statement__in=statements).exists()
    elif rows.model is Feedback:
        feedback = rows
        # Other coders of a statement whose sent coding goes share it no more.
        sent = rows.filter(status__in=SENT).values("statement_id")
        others = Feedback.objects.filter(statement_id__in=sent)
        going.pairs |= set(others.values_list("statement__discussion_id", "auditor_id"))
        going.approved = list(
            feedback.filter(status=Feedback.Status.APPROVED).values_list("statement_id", flat=True)
        )
    elif rows.model is Assignment:
        assignments = rows
    elif rows.model is ExtractionRun:
        going.runs = list(rows.values_list("pk", flat=True))
        triage = TriageStatement.objects.filter(run_id__in=going.runs)
        going.accepted = list(
            triage.filter(provisional=True).values_list("statement_id", flat=True)
        )
        going.scored = set(
            triage.order_by().values_list("statement__discussion_id", flat=True).distinct()
        )
    elif rows.model is Extraction:
        going.extractions = list(rows.values_list("statement_id", "run_id"))
    elif rows.model is DiscussionExtraction:
        going.discussion_extractions = list(rows.values_list("discussion_id", "run_id"))
    going.coding |= feedback.exclude(status=Feedback.Status.DRAFT).exists()
    going.feedback = list(feedback.values_list("pk", flat=True))
    going.pairs |= set(feedback.values_list("statement__discussion_id", "auditor_id"))
    going.pairs |= set(assignments.values_list("discussion_id", "auditor_id"))
    return going


@transaction.atomic
def inputs_delete(*, rows: QuerySet[Any]) -> int:
    """Delete these rows (discussions, speakers, statements, runs, extractions, codings or
    assignments) and what cascades from them; returns how many rows went in all. The stored
    counts follow in the same transaction (codings carry history: only ``history_purge``
    lets them go)."""
    going = _going(rows)
    going.announce()
    codings_deleting(feedback=Feedback.objects.filter(pk__in=going.feedback))
    tallies_forget(discussion_ids=going.discussions)
    deleted, _ = rows.delete()
    tallies_refresh(pairs={pair for pair in going.pairs if pair[0] not in going.discussions})
    queue_changed(statement_ids=going.accepted)
    queue_figures_refresh(discussion_ids=(going.touched | going.scored) - going.discussions)
    return deleted
