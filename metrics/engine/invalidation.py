"""The one door from audit into metrics: changes to audit's data make stored results stale.

Subscribes (``connect``, called from ``MetricsConfig.ready``) to audit's domain signals
(``audit.signals``, which audit's services send explicitly: ground truth, extractions, coding,
triage changed, statements edited, rows deleting), then calls the stale-marking services,
which queue the recomputation. Nothing else in metrics listens to audit, and nothing here
listens to Django's model signals.

A deletion cascades to result rows, so what it takes is read before the rows go
(``rows_deleting``); the affected runs' totals are rebuilt and the remaining results
recomputed after the delete commits.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Q

from audit import signals as audit_signals
from evalsite.post_commit import after_commit
from metrics.engine import errors, recompute, services, snapshots
from metrics.models import MetricResult
from metrics.own_data import common as own_data

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


def statements_edited(*, statement_ids: list[int], **_: Any) -> None:
    """A statement's discussion and order are written into its error index rows: an edited
    statement (its order changed in the admin) has them rewritten at the index's next update."""
    errors.statement_results_changed(
        MetricResult.objects.filter(
            family=services.EXTRACTION,
            scope=MetricResult.Scope.STATEMENT,
            statement_id__in=statement_ids,
        ).only("scope", "run_id", "statement_id")
    )


# --- deletions (sent inside the deleting transaction, before the rows go) -----------------------


def rows_deleting(
    *,
    statements: list[tuple[int, int]],
    extractions: list[tuple[int, int]],
    discussion_extractions: list[tuple[int, int]],
    approved: list[int],
    runs: list[int],
    coding: bool,
    **_: Any,
) -> None:
    if statements:
        _statements_deleting(statements)
    for statement_id, run_id in extractions:
        _extraction_deleted(statement_id, run_id)
    for discussion_id, run_id in discussion_extractions:
        _discussion_extraction_deleted(discussion_id, run_id)
    if approved:
        after_commit(
            lambda: services.results_mark_stale(
                statement_ids=approved, reason="ground truth deleted"
            )
        )
    if runs:
        after_commit(services.results_run_deleted)
        # The other runs' review-savings comparisons with these runs are outdated.
        after_commit(lambda: own_data.own_results_mark_stale(reason="run deleted"))
    if coding:  # announced after the commit, once per transaction
        audit_signals.coding_changed_send(reason="coding changed")


def _statements_deleting(statements: list[tuple[int, int]]) -> None:
    # Read before the cascade: which runs hold rows of these statements or their discussions.
    discussion_ids = sorted({discussion_id for _, discussion_id in statements})
    run_ids = list(
        MetricResult.objects.filter(family=services.EXTRACTION)
        .filter(
            Q(statement_id__in=[statement_id for statement_id, _ in statements])
            | Q(scope=MetricResult.Scope.DISCUSSION, discussion_id__in=discussion_ids)
        )
        .values_list("run_id", flat=True)
        .distinct()
    )
    after_commit(
        lambda: services.results_forget_deleted(discussion_ids=discussion_ids, run_ids=run_ids)
    )


def _extraction_deleted(statement_id: int, run_id: int) -> None:
    after_commit(
        lambda: services.results_mark_stale(
            statement_ids=[statement_id], run_ids=[run_id], reason="extraction deleted"
        )
    )
    _snapshot_results_follow(run_id)


def _discussion_extraction_deleted(discussion_id: int, run_id: int) -> None:
    """A discussion-unit run's extraction deleted on its own (not with its discussion, whose
    deletion the statements' handle): its row goes, the run's totals follow."""
    after_commit(
        lambda: services.results_mark_stale(
            statement_ids=[], discussion_ids=[discussion_id], run_ids=[run_id], reason="deleted"
        )
    )
    _snapshot_results_follow(run_id)


def _snapshot_results_follow(run_id: int) -> None:
    after_commit(lambda: snapshots.snapshot_results_mark_stale(run_ids=[run_id], statement_ids=[]))


def connect() -> None:
    """Subscribe once (dispatch uids make a second call harmless)."""
    audit_signals.ground_truth_changed.connect(ground_truth_changed, dispatch_uid="m_gt")
    audit_signals.extractions_changed.connect(extractions_changed, dispatch_uid="m_extr")
    audit_signals.coding_changed.connect(coding_changed, dispatch_uid="m_coding")
    audit_signals.triage_changed.connect(triage_changed, dispatch_uid="m_triage")
    audit_signals.statements_edited.connect(statements_edited, dispatch_uid="m_edited")
    audit_signals.rows_deleting.connect(rows_deleting, dispatch_uid="m_deleting")
