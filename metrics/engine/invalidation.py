"""The one door from audit into metrics: changes to audit's data make stored results stale.

Subscribes (``connect``, called from ``MetricsConfig.ready``) to audit's domain signals
(``audit.signals``: ground truth, extractions, coding changed) and to the deletions that
cascade past the services (statements, extractions, approved feedback, runs, blind samples),
then calls the stale-marking services, which queue the recomputation; and to a statement's
edit, which the error index follows. Nothing else in metrics listens to audit.

Cascades remove result rows without going through the services, so the affected runs'
totals are rebuilt and the remaining results recomputed, after the delete commits.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.db.models.signals import post_delete, post_save, pre_delete

from audit import signals as audit_signals
from audit.models import (
    BlindReview,
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    Feedback,
    Statement,
)
from evalsite.post_commit import after_commit
from metrics.engine import errors, recompute, services, snapshots
from metrics.models import MetricResult
from metrics.own_data import common as own_data

_suspended: ContextVar[bool] = ContextVar("metrics_signals_suspended", default=False)


@contextmanager
def suspended() -> Iterator[None]:
    """Bulk cleanups (the benchmark's) that settle the results themselves afterwards."""
    token = _suspended.set(True)
    try:
        yield
    finally:
        _suspended.reset(token)


# --- audit's domain signals (already sent after commit) ------------------------------------------


def ground_truth_changed(*, statement_ids: list[int], reason: str, **_: Any) -> None:
    _results_mark_stale(statement_ids=statement_ids, run_ids=None, reason=reason)


def extractions_changed(
    *, statement_ids: list[int], run_ids: list[int] | None, reason: str, **_: Any
) -> None:
    _results_mark_stale(statement_ids=statement_ids, run_ids=run_ids, reason=reason)
    # Figures on frozen ground truth follow the run's extractions (never ground truth).
    snapshots.snapshot_results_mark_stale(run_ids=run_ids, statement_ids=statement_ids)


def _results_mark_stale(
    *, statement_ids: list[int], run_ids: list[int] | None, reason: str
) -> None:
    """A task per result for what an approval or a small import changes; a chunked recompute
    job for more (thousands of statements at once)."""
    if len(statement_ids) > settings.RECOMPUTE_CHUNK_ITEMS:
        recompute.results_mark_stale_many(
            statement_ids=statement_ids, run_ids=run_ids, reason=reason
        )
    else:
        # Looked up on the module at call time: the F1 benchmark times this call by wrapping it.
        services.results_mark_stale(statement_ids=statement_ids, run_ids=run_ids, reason=reason)


def coding_changed(*, reason: str, **_: Any) -> None:
    own_data.interauditor_mark_stale(reason=reason)


def triage_changed(*, run_id: int, reason: str, **_: Any) -> None:
    own_data.triage_mark_stale(run_id=run_id, reason=reason)


# --- deletions that cascade past the services ----------------------------------------------------


def statement_deleted(sender: Any, instance: Statement, **kwargs: Any) -> None:
    if _suspended.get():
        return
    # Read before the cascade: which runs hold rows of this statement or its discussion.
    run_ids = list(
        MetricResult.objects.filter(family=services.EXTRACTION)
        .filter(
            Q(statement_id=instance.pk)
            | Q(scope=MetricResult.Scope.DISCUSSION, discussion_id=instance.discussion_id)
        )
        .values_list("run_id", flat=True)
        .distinct()
    )
    discussion_ids = [instance.discussion_id]
    after_commit(
        lambda: services.results_forget_deleted(discussion_ids=discussion_ids, run_ids=run_ids)
    )


def statement_saved(sender: Any, instance: Statement, created: bool, **kwargs: Any) -> None:
    """A statement's discussion and order are written into its error index rows: an edited
    statement (its order changed in the admin) has them rewritten at the index's next update."""
    if not created:
        errors.statement_results_changed(
            MetricResult.objects.filter(
                family=services.EXTRACTION, scope=MetricResult.Scope.STATEMENT, statement=instance
            ).only("scope", "run_id", "statement_id")
        )


def extraction_deleted(sender: Any, instance: Extraction, **kwargs: Any) -> None:
    if _suspended.get():
        return
    statement_id, run_id = instance.statement_id, instance.run_id
    after_commit(
        lambda: services.results_mark_stale(
            statement_ids=[statement_id], run_ids=[run_id], reason="extraction deleted"
        )
    )
    _snapshot_results_follow(run_id)


def discussion_extraction_deleted(
    sender: Any, instance: DiscussionExtraction, **kwargs: Any
) -> None:
    """A discussion-unit run's extraction deleted on its own (not with its discussion, whose
    deletion the statements' handle): its row goes, the run's totals follow."""
    if _suspended.get():
        return
    discussion_id, run_id = instance.discussion_id, instance.run_id
    after_commit(
        lambda: services.results_mark_stale(
            statement_ids=[], discussion_ids=[discussion_id], run_ids=[run_id], reason="deleted"
        )
    )
    _snapshot_results_follow(run_id)


def _snapshot_results_follow(run_id: int) -> None:
    after_commit(lambda: snapshots.snapshot_results_mark_stale(run_ids=[run_id], statement_ids=[]))


def feedback_deleted(sender: Any, instance: Feedback, **kwargs: Any) -> None:
    if not _suspended.get() and instance.status == Feedback.Status.APPROVED:
        statement_id = instance.statement_id
        after_commit(
            lambda: services.results_mark_stale(
                statement_ids=[statement_id], reason="ground truth deleted"
            )
        )
    _coding_saved_or_deleted(instance)


def run_deleted(sender: Any, instance: ExtractionRun, **kwargs: Any) -> None:
    if _suspended.get():
        return
    after_commit(services.results_run_deleted)
    # The other runs' review-savings comparisons with this run are outdated.
    after_commit(lambda: own_data.own_results_mark_stale(reason="run deleted"))


# --- auditors' coding (inter-auditor agreement reads submitted coding, not only approved) -------


def feedback_saved(sender: Any, instance: Feedback, **kwargs: Any) -> None:
    _coding_saved_or_deleted(instance)


def blind_review_deleted(sender: Any, instance: BlindReview, **kwargs: Any) -> None:
    _interauditor_mark_after_commit("blind review unmarked")


def _coding_saved_or_deleted(instance: Feedback) -> None:
    # Drafts are not coding yet, so saving one changes nothing.
    if instance.status != Feedback.Status.DRAFT:
        _interauditor_mark_after_commit("coding changed")


def _interauditor_mark_after_commit(reason: str) -> None:
    """Announced as audit's ``coding_changed`` (stored with the change, sent once per
    transaction after it commits: a cascade deleting thousands of feedback rows marks once)."""
    if not _suspended.get():
        audit_signals.coding_changed_send(reason=reason)


def connect() -> None:
    """Subscribe once (dispatch uids make a second call harmless)."""
    audit_signals.ground_truth_changed.connect(ground_truth_changed, dispatch_uid="m_gt")
    audit_signals.extractions_changed.connect(extractions_changed, dispatch_uid="m_extr")
    audit_signals.coding_changed.connect(coding_changed, dispatch_uid="m_coding")
    audit_signals.triage_changed.connect(triage_changed, dispatch_uid="m_triage")
    pre_delete.connect(statement_deleted, sender=Statement, dispatch_uid="m_statement_del")
    post_save.connect(statement_saved, sender=Statement, dispatch_uid="m_statement_saved")
    post_delete.connect(extraction_deleted, sender=Extraction, dispatch_uid="m_extraction_del")
    post_delete.connect(
        discussion_extraction_deleted, sender=DiscussionExtraction, dispatch_uid="m_whole_del"
    )
    post_delete.connect(feedback_deleted, sender=Feedback, dispatch_uid="m_feedback_del")
    post_save.connect(feedback_saved, sender=Feedback, dispatch_uid="m_feedback_saved")
    post_delete.connect(run_deleted, sender=ExtractionRun, dispatch_uid="m_run_del")
    post_delete.connect(blind_review_deleted, sender=BlindReview, dispatch_uid="m_blind_del")
