"""One batch of statement and discussion items in one transaction: their rows locked in pk
order, inputs read in bulk, figures computed and stored by bulk writes; a failure in one item
fails its row, not the batch."""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import Q

from evalsite.match_settings import match_settings
from evalsite.perf.collector import collector_paused
from metrics.engine.errors import statement_results_changed
from metrics.engine.recompute.items import Item, _undone
from metrics.engine.services.children import FIGURES
from metrics.engine.services.inputs import ResultInputs, children_inputs
from metrics.engine.services.rows import (
    CODE_VERSION,
    CONFIRMED_FIELDS,
    STORED_FIELDS,
    Scope,
    Status,
    extraction_results,
    row_fill,
    row_is_current,
    row_mark_fresh,
)
from metrics.models import MetricResult
from metrics.results import MAX_ERROR_CHARS

log = logging.getLogger(__name__)


def _batch_compute(items: list[Item], *, force: bool, since: datetime | None = None) -> None:
    """Statement and discussion items in one transaction: their rows locked in pk order (as
    ``rows_mark_stale`` locks them, so the two cannot deadlock), inputs read in bulk, figures stored by
    bulk writes. An item whose row is no longer stale (nor, with ``since``, computed before
    then) was done meanwhile (a per-item task, or this batch before a retry) and is skipped;
    so is an item whose row is gone."""
    # No cyclic collection while the decoded payloads and the figures pile up: it finds
    # nothing to free and costs time in every batch (evalsite/perf/collector.py).
    with transaction.atomic(), collector_paused():
        rows = _stale_rows_locked(items, force=force, since=since)
        inputs = _batch_inputs(rows)
        writes = _BatchWrites()
        for row in rows:
            writes.add(row, inputs.get((row.scope, _target(row), row.run_id)), force)
        writes.save()


@dataclass
class _BatchWrites:
    """What a batch writes: new figures, confirmations, failures, removals, and the runs whose
    totals changed."""

    stored: list[MetricResult] = field(default_factory=list)
    confirmed: list[int] = field(default_factory=list)
    failed: list[MetricResult] = field(default_factory=list)
    gone: list[MetricResult] = field(default_factory=list)
    runs_changed: set[int | None] = field(default_factory=set)

    def add(self, row: MetricResult, inputs: ResultInputs | None, force: bool) -> None:
        # A full recompute rebuilds every run's totals when it settles, so it neither reads
        # the old contributions (not fetched) nor compares them: a new one marks its run.
        old = None if force else row.contribution
        if inputs is None:
            self.gone.append(row)
            changed = force or old is not None
        elif row_is_current(row, inputs.hash, force):
            self.confirmed.append(row.pk)
            changed = False
        elif _row_figured(row, inputs):
            self.stored.append(row)
            changed = force or row.contribution != old
        else:
            self.failed.append(row)
            changed = False
        if changed:
            self.runs_changed.add(row.run_id)

    def save(self) -> None:
        """Bulk writes: new figures in one upsert (see _rows_store), confirmed rows in one
        UPDATE."""
        _rows_store(self.stored)
        fresh = MetricResult(status=Status.FRESH)
        row_mark_fresh(fresh)
        MetricResult.objects.filter(pk__in=self.confirmed).update(
            **{name: getattr(fresh, name) for name in CONFIRMED_FIELDS}
        )
        for row in self.failed:
            row.save(update_fields=["status", "error", "match_settings", "code_version"])
        MetricResult.objects.filter(pk__in=[row.pk for row in self.gone]).delete()
        statement_results_changed([*self.stored, *self.gone])
        # The runs' totals are rebuilt once, when the job settles them (see services.runs._run_totals_swap).
        extraction_results().filter(
            scope=Scope.RUN, run_id__in=self.runs_changed, contribution__isnull=False
        ).update(contribution=None)


def _rows_store(rows: list[MetricResult]) -> None:
    """Store the rows' STORED_FIELDS in one upsert on the key."""
    if rows:
        MetricResult.objects.bulk_create(
            [_unsaved(row) for row in rows],
            update_conflicts=True,
            unique_fields=["key"],
            update_fields=STORED_FIELDS,
        )


def _unsaved(row: MetricResult) -> MetricResult:
    """The row as a new object without its pk: the upsert then inserts nothing but updates
    by key."""
    ids = {f: getattr(row, f) for f in ("key", "family", "scope", "run_id", "discussion_id")}
    fields = {field: getattr(row, field) for field in STORED_FIELDS}
    return MetricResult(**ids, statement_id=row.statement_id, **fields)


def _target(row: MetricResult) -> int | None:
    return row.statement_id if row.scope == Scope.STATEMENT else row.discussion_id


def _stale_rows_locked(
    items: list[Item], *, force: bool, since: datetime | None
) -> list[MetricResult]:
    wanted = set(items)
    query = Q()
    for scope, column in ((Scope.STATEMENT, "statement_id"), (Scope.DISCUSSION, "discussion_id")):
        targets = {target for s, target, _ in wanted if s == scope}
        if targets:
            runs = {run for s, _, run in wanted if s == scope}
            query |= Q(scope=scope, run_id__in=runs, **{f"{column}__in": targets})
    if not query:
        return []
    # The old figures and settings are never read here (they are replaced or confirmed as
    # they stand), so they are not fetched: JSON decoded for nothing otherwise; nor are the
    # old contributions when the job rebuilds the runs' totals anyway (see _BatchWrites.add).
    unread = ["values", "match_settings", *(["contribution"] if force else [])]
    rows = (
        extraction_results()
        .filter(query)
        .filter(Q(status=Status.STALE) | _undone(since))
        .defer(*unread)
        .select_for_update(no_key=True)
        .order_by("pk")
    )
    return [row for row in rows if (row.scope, _target(row), row.run_id) in wanted]


def _batch_inputs(rows: list[MetricResult]) -> dict[tuple, ResultInputs]:
    return children_inputs(
        statements=[(row.statement_id, row.run_id) for row in rows if row.scope == Scope.STATEMENT],
        discussions=[
            (row.discussion_id, row.run_id) for row in rows if row.scope == Scope.DISCUSSION
        ],
    )


def _row_figured(row: MetricResult, inputs: ResultInputs) -> bool:
    """Fill the row with its new figures; False when computing them failed: the row is then
    failed with the traceback, as ``failure_recorded`` leaves it (a bug in one statement must
    not stop the batch; the run settles as failed and says so)."""
    try:
        values, contribution = FIGURES[row.scope](row, inputs)
    except Exception:
        log.exception("computing extraction %s result %s failed", row.scope, row.key)
        row.status, row.error = Status.FAILED, traceback.format_exc()[-MAX_ERROR_CHARS:]
        row.match_settings, row.code_version = match_settings().to_dict(), CODE_VERSION
        return False
    row_fill(row, values=values, contribution=contribution, input_hash=inputs.hash)
    return True
