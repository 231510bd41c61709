"""Results marked stale when their inputs change, and their recomputation queued: rows that
must now exist are created stale (placeholders), existing ones are marked under their locks,
and a task per result is queued after the commit."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings as django_settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from audit.models import DiscussionExtraction, Extraction, Feedback, Statement
from evalsite.post_commit import after_commit
from evalsite.queue import task_enqueue_named, task_enqueue_on_commit
from metrics.engine.services.rows import Scope, Status, extraction_results
from metrics.models import MetricResult
from metrics.own_data.common import own_results_mark_stale
from metrics.registry import EXTRACTION
from metrics.results import result_key

log = logging.getLogger(__name__)


def placeholders_create(approved: Any, run_ids: Iterable[int] | None) -> int:
    """Stale rows for results that must now exist: a statement that just got approved GT
    needs a row in every run that extracted it (and so do its discussion and the run).
    Returns how many were missing when read (on PostgreSQL: how many it inserted; a
    concurrent caller may have created some first).

    ``approved`` is a queryset of approved feedback (the statements concerned). The database
    finds the rows still missing (an anti-join per scope): after the first compute nearly all
    exist, and listing the present keys in Python was most of a full recompute's planning. On
    PostgreSQL it also writes them, one ``INSERT ... SELECT`` per scope, rather than building
    every placeholder of a new run in Python.
    """
    missing = missing_rows(approved, run_ids)
    if connection.vendor == "postgresql":
        return sum(_placeholders_inserted(rows, scope, columns) for rows, scope, columns in missing)
    return _placeholders_created(missing)


Missing = tuple[Any, str, list[str]]  # ids of the missing rows (a query), their scope, id names


def missing_rows(approved: Any, run_ids: Iterable[int] | None) -> list[Missing]:
    """Per scope, the query of the missing rows' ids (see placeholders_create)."""
    pairs = Extraction.objects.filter(statement_id__in=approved.values("statement_id"))
    if run_ids is not None:
        pairs = pairs.filter(run_id__in=run_ids)
    ids = {"run_id": "run_id", "discussion_id": "statement__discussion_id"}
    # Discussion-unit runs: a row per discussion they extracted (computed, or removed when
    # the discussion is only partly approved).
    whole = DiscussionExtraction.objects.filter(
        discussion_id__in=approved.values("statement__discussion_id")
    )
    if run_ids is not None:
        whole = whole.filter(run_id__in=run_ids)
    whole_ids = {"run_id": "run_id", "discussion_id": "discussion_id"}
    return [
        _missing(pairs, Scope.STATEMENT, {**ids, "statement_id": "statement_id"}),
        _missing(pairs, Scope.DISCUSSION, ids),
        _missing(pairs, Scope.RUN, {"run_id": "run_id"}),
        _missing(whole, Scope.DISCUSSION, whole_ids),
        _missing(whole, Scope.RUN, {"run_id": "run_id"}),
    ]


def _missing(pairs: Any, scope: str, columns: dict[str, str]) -> Missing:
    """The ids of the ``scope`` rows of ``pairs`` (extractions) that do not exist yet;
    ``columns`` maps each id of the row to its column in ``pairs``. A statement row is found
    by its run and statement (its discussion follows from the statement)."""
    matched = {name: OuterRef(column) for name, column in columns.items()}
    if scope == Scope.STATEMENT:
        del matched["discussion_id"]
    present = extraction_results().filter(scope=scope, **matched)
    rows = pairs.exclude(Exists(present)).order_by().values_list(*columns.values()).distinct()
    return rows, scope, list(columns)


def _placeholders_created(missing: list[Missing]) -> int:
    """Read the missing ids and create their rows from Python (SQLite: small sites)."""
    rows = (
        _placeholder(result_key(EXTRACTION, scope, **fields), scope, **fields)
        for query, scope, columns in missing
        for fields in (dict(zip(columns, ids, strict=True)) for ids in list(query))
    )  # each query read whole: a write while SQLite's cursor reads is unsafe
    created = 0
    while batch := list(itertools.islice(rows, 2000)):  # rows held at once: bounded
        MetricResult.objects.bulk_create(batch, ignore_conflicts=True, batch_size=500)
        created += len(batch)
    return created


def _placeholders_inserted(query: Any, scope: str, columns: list[str]) -> int:
    """The missing rows written by the database from the query of their ids: the key as
    ``MetricResult.make_key`` writes it, every other field as ``_placeholder`` leaves it."""
    meta, quote = MetricResult._meta, connection.ops.quote_name
    prototype = _placeholder("", scope)
    constant = [
        field
        for field in meta.concrete_fields
        if not field.primary_key and field.name != "key" and field.attname not in columns
    ]
    names = ["key", *columns, *(field.column for field in constant)]
    # "extraction:statement:r1:d2:s3", "extraction:run:r1:d-:s-"
    key = " || ".join(
        f"%s || COALESCE(m.{quote(name)}::text, '-')" if name in columns else "%s || '-'"
        for name in _KEY_IDS
    )
    ids = ", ".join(f"m.{quote(name)}" for name in columns)
    values = [
        field.get_db_prep_save(getattr(prototype, field.attname), connection) for field in constant
    ]
    select, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(n) for n in names)}) "
            f"SELECT {key}, {ids}{''.join(f', %s::{f.db_type(connection)}' for f in constant)} "
            f"FROM ({select}) AS m({', '.join(quote(n) for n in columns)}) "
            f"ON CONFLICT ({quote('key')}) DO NOTHING",
            [f"{EXTRACTION}:{scope}:r", ":d", ":s", *values, *params],
        )
        return cursor.rowcount


_KEY_IDS = ("run_id", "discussion_id", "statement_id")  # in MetricResult.make_key's order


def _placeholder(key: str, scope: str, **fields: Any) -> MetricResult:
    return MetricResult(
        key=key,
        family=EXTRACTION,
        scope=scope,
        status=Status.STALE,
        stale_since=timezone.now(),
        **fields,
    )


def rows_mark_stale(query: Q, run_ids: Iterable[int] | None = None) -> tuple[list[tuple], int]:
    """Lock (in pk order, so concurrent callers cannot deadlock) and mark rows stale.

    Returns (run, discussion, statement) of every matching row, and how many changed.
    """
    rows = extraction_results().filter(query)
    if run_ids is not None:
        rows = rows.filter(run_id__in=run_ids)
    locked = list(
        rows.select_for_update(no_key=True)
        .order_by("pk")
        .values_list("pk", "status", "run_id", "discussion_id", "statement_id")
    )
    # Marked by the same condition (the rows are locked now), not by a list of their ids,
    # which PostgreSQL would have to parse for every row of a recompute-all.
    marked = rows.exclude(status=Status.STALE).update(
        status=Status.STALE, stale_since=timezone.now()
    )
    return [tuple(row[2:]) for row in locked], marked


def results_mark_stale(
    *,
    statement_ids: Iterable[int],
    reason: str = "",
    discussion_ids: Iterable[int] = (),
    run_ids: Iterable[int] | None = None,
    queue_tasks: bool = True,
) -> int:
    """Mark every result that depends on these statements stale and queue its recomputation.

    Statement rows of the statements, rows of their discussions, the affected runs and the
    system result (``run_ids`` narrows to some runs). Returns how many rows changed.
    ``queue_tasks=False``: the caller recomputes them otherwise (a chunked recompute job).
    """
    ids = sorted(set(statement_ids))
    discussions = set(discussion_ids)
    if not ids and not discussions:
        return 0
    run_ids = None if run_ids is None else set(run_ids)
    statements: list[tuple] = []
    discussion_rows: list[tuple] = []
    touched: set[int] = set()
    marked = 0
    with transaction.atomic():
        # A batch of statements at a time: an import of thousands holds one batch's rows.
        for batch in map(_id_set, _batches(ids)):
            discussions |= set(
                Statement.objects.filter(pk__in=batch).values_list("discussion_id", flat=True)
            )
            placeholders_create(Feedback.objects.approved().filter(statement_id__in=batch), run_ids)
            rows, n = rows_mark_stale(Q(scope=Scope.STATEMENT, statement_id__in=batch), run_ids)
            marked, touched = marked + n, touched | {row[0] for row in rows}
            statements += rows if queue_tasks else []
        for batch in map(_id_set, _batches(sorted(discussions))):
            rows, n = rows_mark_stale(Q(scope=Scope.DISCUSSION, discussion_id__in=batch), run_ids)
            marked, touched = marked + n, touched | {row[0] for row in rows}
            discussion_rows += rows if queue_tasks else []
        runs = sorted(touched)
        marked += rows_mark_stale(Q(scope=Scope.RUN, run_id__in=runs))[1]
        marked += rows_mark_stale(Q(scope=Scope.SYSTEM))[1] if runs else 0
        if queue_tasks:
            after_commit(lambda: _queue_recompute(statements, discussion_rows, runs))
    log.info("marked %s results stale (%s) for statements %s", marked, reason, ids[:10])
    # The own-data families (review savings, calibration, inter-auditor) follow the same inputs.
    own_results_mark_stale(reason=reason)
    return marked


def _id_set(ids: list[int]) -> Any:
    """A batch of ids for an ``__in`` filter: on PostgreSQL one array parameter, not one
    placeholder per id (psycopg parses a long query's placeholders in Python every time, and
    a batch's ids go into several queries); elsewhere the list."""
    if connection.vendor != "postgresql":
        return ids
    return RawSQL("SELECT unnest(%s::bigint[])", (ids,))


def _batches(ids: list[int]) -> Iterable[list[int]]:
    size = django_settings.RECOMPUTE_CHUNK_ITEMS
    return (ids[start : start + size] for start in range(0, len(ids), size))


def results_forget_deleted(*, discussion_ids: Iterable[int], run_ids: Iterable[int]) -> None:
    """Rows went with deleted statements/discussions: rebuild those runs' totals.

    Run rows are invalidated (totals unknown) here, after the delete committed, rather than
    inside the delete: that would lock the run row before the rows it cascades to. A statement
    without ground truth may have been all that kept its discussion partly approved: the
    discussion-unit runs that extracted it get the row they now score.
    """
    runs = sorted(set(run_ids))
    discussion_ids = sorted(set(discussion_ids))
    with transaction.atomic():
        extraction_results().filter(scope=Scope.RUN, run_id__in=runs).update(
            contribution=None, status=Status.STALE, stale_since=timezone.now()
        )
        rows_mark_stale(Q(scope=Scope.SYSTEM))
        placeholders_create(
            Feedback.objects.approved().filter(statement__discussion_id__in=discussion_ids), None
        )
    results_mark_stale(statement_ids=[], discussion_ids=discussion_ids, reason="deleted")
    for run_id in runs:
        task_enqueue_on_commit("metrics.tasks.compute_run", run_id=run_id)


def results_run_deleted() -> None:
    """A run and all its rows are gone: only the system trend changes."""
    _enqueue_system()


# --- queueing ----------------------------------------------------------------------------------


def _queue_recompute(statements: list[tuple], discussions: list[tuple], runs: list[int]) -> None:
    for run_id, _discussion_id, statement_id in statements:
        task_enqueue_named(
            "metrics.tasks.compute_statement", statement_id=statement_id, run_id=run_id
        )
    for run_id, discussion_id, _ in discussions:
        task_enqueue_named(
            "metrics.tasks.compute_discussion", discussion_id=discussion_id, run_id=run_id
        )
    # Settles a run whose rows all turned out current (or went away) — cheap when nothing to do.
    for run_id in runs:
        task_enqueue_named("metrics.tasks.compute_run", run_id=run_id)


def _enqueue_system() -> None:
    task_enqueue_named("metrics.tasks.compute_system")
