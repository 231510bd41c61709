"""Auditors' coding changed: the inter-auditor result (which reads submitted coding, not only
approved ground truth) becomes stale. Drafts are not coding yet, so saving one changes nothing.
A deleted run leaves the other runs' review-savings comparisons with it outdated."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from audit.models import BlindReview, ExtractionRun, Feedback
from metrics.signals import _suspended


def _mark_after_commit(reason: str) -> None:
    """Once per transaction: a cascade deleting thousands of feedback rows queues one recompute."""
    from metrics.own_data.common import interauditor_mark_stale

    if _suspended.get():  # a bulk cleanup that settles the results itself (metrics.signals)
        return
    if any(getattr(hook[1], "own_data_mark", False) for hook in connection.run_on_commit):
        return

    def mark() -> None:
        interauditor_mark_stale(reason=reason)

    mark.own_data_mark = True  # type: ignore[attr-defined]
    transaction.on_commit(mark)


def _coding_changed(instance: Feedback) -> None:
    if instance.status != Feedback.Status.DRAFT:
        _mark_after_commit("coding changed")


@receiver(post_save, sender=Feedback, dispatch_uid="own_data_feedback_saved")
def feedback_saved(sender, instance: Feedback, **kwargs) -> None:
    _coding_changed(instance)


@receiver(post_delete, sender=Feedback, dispatch_uid="own_data_feedback_deleted")
def feedback_deleted(sender, instance: Feedback, **kwargs) -> None:
    _coding_changed(instance)


@receiver(post_delete, sender=BlindReview, dispatch_uid="own_data_blind_review_deleted")
def blind_review_deleted(sender, instance: BlindReview, **kwargs) -> None:
    _mark_after_commit("blind review unmarked")


@receiver(post_delete, sender=ExtractionRun, dispatch_uid="own_data_run_deleted")
def run_deleted(sender, instance: ExtractionRun, **kwargs) -> None:
    from metrics.own_data.common import own_results_mark_stale

    if _suspended.get():
        return
    transaction.on_commit(lambda: own_results_mark_stale(reason="run deleted"))
