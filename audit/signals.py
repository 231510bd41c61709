"""Audit's domain signals: what changed, with plain ids, sent once the change has committed.

audit is the ground floor and knows nothing of what is computed from its data; it announces
changes here and whoever keeps derived figures subscribes (``metrics.engine.invalidation``). The
services that change the data send them, explicitly; every signal but ``rows_deleting`` is sent
after the surrounding transaction commits, so a receiver reads the new data.

- ``ground_truth_changed(statement_ids, reason)``: approved coding or the statements' data
  changed (approval, edit of approved coding, import, demo data).
- ``extractions_changed(statement_ids, run_ids, reason)``: AI extractions of these
  statements changed (``run_ids=None``: any run).
- ``coding_changed(reason)``: auditors' submitted coding or the blind sample changed (sent
  once per transaction, however many codings it changed).
- ``triage_changed(run_id, reason)``: a run's review-triage settings changed.
- ``statements_edited(statement_ids)``: statements' order, speaker or text edited by hand.

One more is sent before the commit: ``rows_deleting`` (``rows_deleting_send``), by the service
that deletes (``audit.services.inputs.inputs_delete``), inside its transaction before the rows
go, so a subscriber reads what depends on them while they are there; its work waits for the
commit. Its ids: ``statements`` and ``discussion_extractions`` ((id, discussion id) and
(discussion id, run id) pairs), ``extractions`` ((statement id, run id) pairs deleted on their
own), ``approved`` (statements whose approved coding goes, the statement staying), ``runs``,
and ``coding`` (a sent coding or a blind mark goes).

An announcement is stored with the change (``Announcement``, in the same transaction) and
deleted once its receivers ran after the commit. If they fail there (the database connection
died right after the commit, a bug), the request still answers with what it stored, and the
periodic sweep sends the announcements left behind (``announcements_redeliver``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from audit.models import Announcement
from evalsite.post_commit import after_commit, after_commit_registered

log = logging.getLogger(__name__)

ground_truth_changed = Signal()
extractions_changed = Signal()
coding_changed = Signal()
triage_changed = Signal()
statements_edited = Signal()
rows_deleting = Signal()
SIGNALS = {
    "ground_truth_changed": ground_truth_changed,
    "extractions_changed": extractions_changed,
    "coding_changed": coding_changed,
    "triage_changed": triage_changed,
    "statements_edited": statements_edited,
}
REDELIVER_BATCH = 100


def ground_truth_changed_send(*, statement_ids: Iterable[int], reason: str) -> None:
    _announce("ground_truth_changed", statement_ids=sorted(set(statement_ids)), reason=reason)


def extractions_changed_send(
    *, statement_ids: Iterable[int], reason: str, run_ids: Iterable[int] | None = None
) -> None:
    runs = None if run_ids is None else sorted(set(run_ids))
    _announce(
        "extractions_changed", statement_ids=sorted(set(statement_ids)), run_ids=runs, reason=reason
    )


def coding_changed_send(*, reason: str) -> None:
    _announce("coding_changed", once=True, reason=reason)


def triage_changed_send(*, run_id: int, reason: str) -> None:
    _announce("triage_changed", run_id=run_id, reason=reason)


def statements_edited_send(*, statement_ids: Iterable[int]) -> None:
    _announce("statements_edited", statement_ids=sorted(set(statement_ids)))


def rows_deleting_send(
    *,
    statements: list[tuple[int, int]],
    extractions: list[tuple[int, int]],
    discussion_extractions: list[tuple[int, int]],
    approved: list[int],
    runs: list[int],
    coding: bool,
) -> None:
    """Sent now, in the deleting transaction: see the module's docstring."""
    rows_deleting.send(
        sender=None,
        statements=statements,
        extractions=extractions,
        discussion_extractions=discussion_extractions,
        approved=approved,
        runs=runs,
        coding=coding,
    )


def _announce(name: str, *, once: bool = False, **params: Any) -> None:
    """Store the announcement with the change; send it once the change commits."""
    key = f"announce:{name}" if once else ""
    if key and after_commit_registered(key):
        return
    pk = Announcement.objects.create(signal=name, params=params).pk
    after_commit(lambda: _deliver(pk, name, params), once=key)


def _deliver(pk: int, name: str, params: dict[str, Any]) -> None:
    SIGNALS[name].send(sender=None, **params)
    Announcement.objects.filter(pk=pk).delete()


def announcements_redeliver(*, older_than: timedelta) -> int:
    """The sweep's share: send the announcements whose delivery failed after their commit
    (older than ``older_than``: a younger one may still be on its way), oldest first, each in
    a transaction of its own. Returns how many were sent."""
    cutoff = timezone.now() - older_than
    waiting = Announcement.objects.filter(created_at__lt=cutoff).order_by("pk")
    sent = 0
    for pk, name in list(waiting.values_list("pk", "signal")[:REDELIVER_BATCH]):
        try:
            sent += _redeliver(pk)
        except Exception:
            log.exception("announcement %s (%s) failed again; the next sweep retries it", pk, name)
    if sent:
        log.warning("sent %s announcement(s) whose delivery had failed after their commit", sent)
    return sent


@transaction.atomic
def _redeliver(pk: int) -> int:
    rows = Announcement.objects.select_for_update(no_key=True, skip_locked=True)
    found = rows.filter(pk=pk).first()
    if found is None:  # sent meanwhile, or being sent
        return 0
    SIGNALS[found.signal].send(sender=None, **found.params)
    found.delete()
    return 1
