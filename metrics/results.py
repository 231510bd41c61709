"""The lifecycle of every stored result (``MetricResult``), whatever its family.

A row is found by its key, written under its row lock, and records what it was computed from:
``input_hash`` (the inputs plus everything else that shapes the output), ``match_settings`` and
``code_version``. Its status is fresh (figures match the inputs), stale (inputs changed since;
``stale_since`` is when) or failed (``error`` holds the traceback; a change of settings or
code retries it).

The families' own wings decide *what* their inputs are and *when* a row is stale; the pieces
every wing shares live here:

- keys: ``result_key``, ``run_key``, ``system_key``, ``pair_key``;
- ``input_hash``, and ``json_ready`` (what a row may store);
- locking: ``row_locked``, ``row_locked_or_created`` (safe against a racing insert),
  ``placeholder_create``;
- stale/settle: ``changed_since`` (an input changed after a computation read its inputs);
- failures: ``result_record_failure`` and the ``failure_recorded`` context manager (a bug
  becomes a failed row; transient database errors propagate so the task is retried).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypedDict, Unpack

from django.db import transaction
from django.utils import timezone

from audit.models import Statement
from evalsite.queue import TRANSIENT_ERRORS
from metrics.models import MetricResult

log = logging.getLogger(__name__)

Scope = MetricResult.Scope
Status = MetricResult.Status
MAX_ERROR_CHARS = 8000  # the end of a traceback says what failed

# --- keys ----------------------------------------------------------------------------------------


def result_key(
    family: str,
    scope: str,
    *,
    run_id: int | None = None,
    discussion_id: int | None = None,
    statement_id: int | None = None,
) -> str:
    return MetricResult.make_key(
        family, scope, run_id=run_id, discussion_id=discussion_id, statement_id=statement_id
    )


def run_key(family: str, run_id: int | None) -> str:
    return result_key(family, Scope.RUN, run_id=run_id)


def system_key(family: str) -> str:
    return result_key(family, Scope.SYSTEM)


def pair_key(family: str, left_id: int, right_id: int) -> str:
    """A row about two runs (the run comparison), kept with its left run."""
    return f"{family}:pair:r{left_id}:r{right_id}"


# --- what a row was computed from ------------------------------------------------------------------


def input_hash(inputs: Any, *, code_version: str, settings: dict[str, Any], **extra: Any) -> str:
    """Hash of the inputs plus everything else that shapes the output: the match settings, the
    code version and any family parameter (``extra``: resamples, seed...)."""
    payload = {"inputs": inputs, "settings": settings, "code": code_version, **extra}
    encoded = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(encoded).hexdigest()


def json_ready(value: Any) -> Any:
    """Plain JSON for a row: tuples become lists, non-finite floats None (the JSON column
    refuses NaN)."""
    if isinstance(value, Mapping):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- locking -------------------------------------------------------------------------------------


def _locking(with_values: bool) -> Any:
    rows = MetricResult.objects.select_for_update(no_key=True)
    # A writer that always rewrites `values` need not fetch and decode them.
    return rows if with_values else rows.defer("values")


def row_locked(key: str, *, with_values: bool = False) -> MetricResult | None:
    return _locking(with_values).filter(key=key).first()


def row_locked_or_created(
    *,
    key: str,
    family: str,
    scope: str,
    stale_since: datetime | None = None,
    with_values: bool = False,
    **ids: Any,
) -> MetricResult:
    """The row under a lock, inserted first (as stale) if missing; safe against a racing insert.

    ``stale_since`` None suits a caller that fills the row at once from inputs it has read (no
    change happened after that); a placeholder waiting for a computation gets the time now.
    """
    placeholder_create(key=key, family=family, scope=scope, stale_since=stale_since, **ids)
    return _locking(with_values).get(key=key)


def placeholder_create(
    *, key: str, family: str, scope: str, stale_since: datetime | None, **ids: Any
) -> None:
    """Insert the row as stale (waiting for its computation) unless it exists."""
    placeholder = MetricResult(
        key=key, family=family, scope=scope, status=Status.STALE, stale_since=stale_since, **ids
    )
    MetricResult.objects.bulk_create([placeholder], ignore_conflicts=True)


# --- stale / settle ------------------------------------------------------------------------------


def changed_since(row: MetricResult, read_at: datetime) -> bool:
    """An input changed after a computation read its inputs at ``read_at``: the row was marked
    stale later, so the figures that computation stores are already outdated."""
    return row.status == Status.STALE and row.stale_since is not None and row.stale_since > read_at


# --- failures ------------------------------------------------------------------------------------


def result_record_failure(
    *,
    family: str,
    scope: str,
    code_version: str,
    settings: dict[str, Any],
    error: str,
    run_id: int | None = None,
    discussion_id: int | None = None,
    statement_id: int | None = None,
    stale_now: bool = False,
    key: str | None = None,
    input_hash: str | None = None,
) -> None:
    """Mark one result failed with the error text, and its run and system rows with it.

    Nothing is recomputed here (that could fail the same way); the next successful compute
    settles the parents again. A family without run or system rows above the failed one (a
    whole-run or whole-system family) has nothing to propagate to. ``stale_now``: a missing row
    is created stale since now (as the placeholders of a family whose rows wait for their
    computation are). ``key``: a row not keyed by its ids alone (a pair of runs);
    ``input_hash``: what it failed on, for a family that retries only when its inputs change.
    """
    if scope == Scope.STATEMENT and discussion_id is None and statement_id is not None:
        discussion_id = (
            Statement.objects.filter(pk=statement_id)
            .values_list("discussion_id", flat=True)
            .first()
        )
        if discussion_id is None:
            return  # the statement is gone, and its rows with it
    ids: dict[str, Any] = {
        "run_id": run_id,
        "discussion_id": discussion_id,
        "statement_id": statement_id,
    }
    key = key or result_key(family, scope, **ids)
    with transaction.atomic():
        stale_since = timezone.now() if stale_now else None
        row = row_locked_or_created(
            key=key, family=family, scope=scope, stale_since=stale_since, **ids
        )
        row.status, row.error = Status.FAILED, error[-MAX_ERROR_CHARS:]
        # What it failed with: a change of settings or code retries it.
        row.match_settings, row.code_version = settings, code_version
        fields = ["status", "error", "match_settings", "code_version"]
        if input_hash is not None:
            row.input_hash = input_hash
            fields.append("input_hash")
        row.save(update_fields=fields)
        _parents_mark_failed(family, scope, run_id, summary=f"{scope} result {key} failed")


def _parents_mark_failed(family: str, scope: str, run_id: int | None, *, summary: str) -> None:
    summary += "; see that row for the error."
    failed = {"status": Status.FAILED, "error": summary}
    if run_id is not None and scope not in (Scope.RUN, Scope.SYSTEM):
        MetricResult.objects.filter(key=run_key(family, run_id)).update(**failed)
    if scope != Scope.SYSTEM:
        MetricResult.objects.filter(key=system_key(family)).update(**failed)


class FailedRow(TypedDict, total=False):
    """Which row a failure is recorded on, and how (result_record_failure's keywords)."""

    run_id: int | None
    discussion_id: int | None
    statement_id: int | None
    stale_now: bool
    key: str | None
    input_hash: str | None


@contextmanager
def failure_recorded(
    *,
    family: str,
    scope: str,
    code_version: str,
    settings: dict[str, Any],
    **row: Unpack[FailedRow],
) -> Iterator[None]:
    """Record a bug as a failed result instead of losing it; transient database errors
    propagate so the task is retried."""
    try:
        yield
    except TRANSIENT_ERRORS:
        raise
    except Exception:
        log.exception("computing %s %s result failed (run %s)", family, scope, row.get("run_id"))
        result_record_failure(
            family=family,
            scope=scope,
            code_version=code_version,
            settings=settings,
            error=traceback.format_exc(),
            **row,
        )
