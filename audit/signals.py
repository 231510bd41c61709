"""Audit's domain signals: what changed, with plain ids, sent once the change has committed.

audit is the ground floor and knows nothing of what is computed from its data; it announces
changes here and whoever keeps derived figures subscribes (``metrics.engine.invalidation``). Every
signal is sent after the surrounding transaction commits, so a receiver reads the new data.

- ``ground_truth_changed(statement_ids, reason)``: approved coding or the statements' data
  changed (approval, edit of approved coding, import, demo data).
- ``extractions_changed(statement_ids, run_ids, reason)``: AI extractions of these
  statements changed (``run_ids=None``: any run).
- ``coding_changed(reason)``: auditors' submitted coding or the blind sample changed.
- ``triage_changed(run_id, reason)``: a run's review-triage settings changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.dispatch import Signal

ground_truth_changed = Signal()
extractions_changed = Signal()
coding_changed = Signal()
triage_changed = Signal()


def ground_truth_changed_send(*, statement_ids: Iterable[int], reason: str) -> None:
    ids = sorted(set(statement_ids))
    transaction.on_commit(
        lambda: ground_truth_changed.send(sender=None, statement_ids=ids, reason=reason)
    )


def extractions_changed_send(
    *, statement_ids: Iterable[int], reason: str, run_ids: Iterable[int] | None = None
) -> None:
    ids = sorted(set(statement_ids))
    runs = None if run_ids is None else sorted(set(run_ids))
    transaction.on_commit(
        lambda: extractions_changed.send(
            sender=None, statement_ids=ids, run_ids=runs, reason=reason
        )
    )


def coding_changed_send(*, reason: str) -> None:
    transaction.on_commit(lambda: coding_changed.send(sender=None, reason=reason))


def triage_changed_send(*, run_id: int, reason: str) -> None:
    transaction.on_commit(lambda: triage_changed.send(sender=None, run_id=run_id, reason=reason))
