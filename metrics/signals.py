"""Deletions that change stored results: statements, extractions, approved feedback, runs.

Cascades remove result rows without going through the services, so the affected runs'
totals are rebuilt and the remaining results recomputed, after the delete commits.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_delete, pre_delete
from django.dispatch import receiver

from audit.models import Extraction, ExtractionRun, Feedback, Statement
from metrics.models import MetricResult
from metrics.services import (
    EXTRACTION,
    results_forget_deleted,
    results_mark_stale,
    results_run_deleted,
)

_suspended: ContextVar[bool] = ContextVar("metrics_signals_suspended", default=False)


@contextmanager
def suspended() -> Iterator[None]:
    """Bulk cleanups (the benchmark's) that settle the results themselves afterwards."""
    token = _suspended.set(True)
    try:
        yield
    finally:
        _suspended.reset(token)


@receiver(pre_delete, sender=Statement, dispatch_uid="metrics_statement_deleted")
def statement_deleted(sender, instance: Statement, **kwargs) -> None:
    if _suspended.get():
        return
    # Read before the cascade: which runs hold rows of this statement or its discussion.
    run_ids = list(
        MetricResult.objects.filter(family=EXTRACTION)
        .filter(
            Q(statement_id=instance.pk)
            | Q(scope=MetricResult.Scope.DISCUSSION, discussion_id=instance.discussion_id)
        )
        .values_list("run_id", flat=True)
        .distinct()
    )
    discussion_ids = [instance.discussion_id]
    transaction.on_commit(
        lambda: results_forget_deleted(discussion_ids=discussion_ids, run_ids=run_ids)
    )


@receiver(post_delete, sender=Extraction, dispatch_uid="metrics_extraction_deleted")
def extraction_deleted(sender, instance: Extraction, **kwargs) -> None:
    if _suspended.get():
        return
    statement_id, run_id = instance.statement_id, instance.run_id
    transaction.on_commit(
        lambda: results_mark_stale(
            statement_ids=[statement_id], run_ids=[run_id], reason="extraction deleted"
        )
    )


@receiver(post_delete, sender=Feedback, dispatch_uid="metrics_feedback_deleted")
def feedback_deleted(sender, instance: Feedback, **kwargs) -> None:
    if _suspended.get() or instance.status != Feedback.Status.APPROVED:
        return
    statement_id = instance.statement_id
    transaction.on_commit(
        lambda: results_mark_stale(statement_ids=[statement_id], reason="ground truth deleted")
    )


@receiver(post_delete, sender=ExtractionRun, dispatch_uid="metrics_run_deleted")
def run_deleted(sender, instance: ExtractionRun, **kwargs) -> None:
    if not _suspended.get():
        transaction.on_commit(results_run_deleted)
