"""The statements behind each figure of a run's error analysis.

The error analysis (``metrics.engine.derived``) is computed by a worker from every statement result
of a run. In the same pass it counts, per statement, each figure the analysis and the run's
error tables link to (missed / spurious entities per type, wrong SARF codes, an event kind
missed or spurious, one SARF confusion cell) and stores the non-zero counts as
``StatementError`` rows; the totals per figure (statements, count) go into the stored
analysis. The page of the statements behind a figure then reads one page of that index and
the stored totals, whatever the size of the run.

The index is kept incrementally, with the plumbing of the own-data families' pieces
(``metrics.own_data.pieces``): each statement's rows are stored with a hash of what produced
them (its result's input hash and computed_at, its discussion and order: every rewrite of a
result moves its computed_at). Whatever writes or removes a statement result records it
(``statement_results_changed``, a ``StatementResultChange`` row in the same transaction); an
update reads those rows, compares only their statements' hashes, and for those whose hash
moved (or whose result went away) reads their rows, subtracts them from the stored totals,
deletes them and writes them again; then it deletes the change rows it read, and only those.
So one approval costs a few statements' rows, whatever the size of the run, and a change
committed while an update runs is left for the next one rather than lost. Deleted
statements (their rows and hash go by cascade, their part of the totals would not) are found
by counting the stored hashes. A full rebuild (``full``; also when there is no stored index
of this code version to start from, when more than ``FULL_SHARE`` of the statements changed,
or when the count disagrees) reads every result and writes every row again; both give the
same rows and totals. The index, its hashes, the consumed changes and the analysis that holds
the totals are written in one transaction (``metrics.engine.derived``), so the totals always match
the rows.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Model

from audit.models import ExtractionRun
from evalsite.perf.planner import planner_statistics_after_commit
from metrics.families.payload.items import ENTITY_KINDS
from metrics.models import MetricResult, StatementError, StatementPiece, StatementResultChange
from metrics.own_data.pieces import (
    piece_hasher,
    pieces_diff,
    pieces_remove,
    pieces_store,
)

log = logging.getLogger(__name__)

# Bump when a statement's rows for the same result change: every stored hash is then outdated.
CODE_VERSION = "error-analysis/3"
EXTRACTION = "extraction"  # the family whose statement results are read (metrics.engine.services)
INDEX = "error_analysis"  # the family of the index's stored hashes (``StatementPiece``)
# More statements changed than this share of the run: rewriting all is cheaper than reading,
# subtracting and deleting each changed statement's rows first.
FULL_SHARE = 0.5
ERROR_COUNT_KINDS = tuple(f"{e}_{c}" for e in ENTITY_KINDS for c in ("fn", "fp"))
WRITE_BATCH = 5000
READ_CHUNK = 2000
# What a statement's counts are read from: these keys of its values and its SARF confusions.
VALUE_KEYS = (*ERROR_COUNT_KINDS, "fn_event_kinds", "fp_event_kinds")
FIGURE_LENGTH = StatementError._meta.get_field("figure").max_length or 200


def error_figure(
    *,
    kind: str = "",
    event_kind: str = "",
    missed: bool = True,
    variable: str = "",
    gt: str = "",
    ai: str = "",
) -> str:
    """The stored figure a link of the error pages names; "" when it names none."""
    figure = ""
    if kind in ERROR_COUNT_KINDS or kind == "sarf":
        figure = kind
    elif event_kind:
        figure = f"events_{'fn' if missed else 'fp'}:{event_kind}"
    elif variable:
        figure = f"sarf:{variable}:{ai}:{gt}"
    return figure[:FIGURE_LENGTH]


def statement_error_counts(values: dict | None, sarf: dict | None) -> Counter[str]:
    """Each figure one statement result counts in, and how many times (zeros left out), from
    its values (``VALUE_KEYS``) and its contribution's SARF confusions."""
    values, counts = values or {}, Counter[str]()
    for kind in ERROR_COUNT_KINDS:
        counts[kind] = int(values.get(kind) or 0)
    for missed, key in ((True, "fn_event_kinds"), (False, "fp_event_kinds")):
        counts.update(error_figure(event_kind=k, missed=missed) for k in values.get(key) or [])
    # The confusion tables are keyed AI value first, then ground truth; the cells where the
    # two agree are no error (the page links only the others).
    for variable, table in (sarf or {}).items():
        for ai, cells in table.items():
            for gt, n in cells.items():
                if ai != gt:
                    counts[error_figure(variable=variable, gt=gt, ai=ai)] += n
                    counts["sarf"] += n
    return +counts


Totals = dict[str, list[int]]  # figure -> [statements, count]


class IndexDrift(Exception):
    """The stored index and the stored totals disagree: the index is rebuilt whole."""


def _results(run: ExtractionRun) -> Any:
    """The run's statement results that hold figures (a placeholder waiting for its first
    computation has none, and no change is recorded when it is created)."""
    return MetricResult.objects.filter(
        family=EXTRACTION,
        scope=MetricResult.Scope.STATEMENT,
        run=run,
        statement__isnull=False,
        computed_at__isnull=False,
    )


def _stamps(run: ExtractionRun, statement_ids: Sequence[int] | None = None) -> dict[int, str]:
    """Per statement result of the run (of these statements only, when given), what its rows
    are computed from: any rewrite of the result moves its computed_at; its discussion and
    order are written into the rows. Reads no JSON."""
    fields = ("statement_id", "discussion_id", "statement__order", "input_hash", "computed_at")
    results = _results(run).values_list(*fields)
    chunks = (
        [results.iterator(chunk_size=5000)]
        if statement_ids is None
        else (results.filter(statement_id__in=chunk) for chunk in _chunks(statement_ids))
    )
    return {
        statement_id: f"{discussion_id}|{order}|{digest}|{computed_at}"
        for chunk in chunks
        for statement_id, discussion_id, order, digest, computed_at in chunk
    }


# --- the changes recorded since the last update ---------------------------------------------


def statement_results_changed(rows: Iterable[MetricResult]) -> None:
    """Record that these extraction results were written or removed, in the caller's
    transaction: the change then commits with the result or not at all, and the next update
    of the run's error index rewrites the statements' rows (statement results only; the
    others are left out)."""
    changes = [
        StatementResultChange(run_id=row.run_id, statement_id=row.statement_id)
        for row in rows
        if row.scope == MetricResult.Scope.STATEMENT and row.run_id and row.statement_id
    ]
    StatementResultChange.objects.bulk_create(changes, batch_size=WRITE_BATCH)


@dataclass(frozen=True)
class Changes:
    """The changes recorded for a run when the update read them."""

    ids: list[int]  # the rows read: only these are deleted
    statement_ids: list[int]  # the statements they name, ascending, once each


def _changes_read(run: ExtractionRun) -> Changes:
    """Read before any result: every change read here committed with its result, so the reads
    that follow see that result (or a later one)."""
    rows = list(StatementResultChange.objects.filter(run=run).values_list("pk", "statement_id"))
    return Changes([pk for pk, _ in rows], sorted({statement_id for _, statement_id in rows}))


def _changes_consume(changes: Changes) -> None:
    """Delete the rows read, by id: a change committed after they were read (by a transaction
    that wrote its result meanwhile) is not among them and waits for the next update."""
    for chunk in _chunks(changes.ids):
        StatementResultChange.objects.filter(pk__in=chunk).delete()


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), READ_CHUNK):
        yield list(ids[start : start + READ_CHUNK])


# What a statement's rows are made of: ids in COLUMNS order, then the keys counted, extracted
# by the database (a statement's whole values and contribution are several times larger, and
# decoding them was most of the time).
ROW_IDS = ("discussion_id", "statement_id", "statement__order")
ROW_FIELDS = (*ROW_IDS, *(f"values__{key}" for key in VALUE_KEYS), "contribution__sarf")


def _rows_counted(run: ExtractionRun, results: list[dict], totals: Totals) -> list[tuple]:
    """The index rows of these statement results (``ROW_FIELDS``), added to ``totals``."""
    rows = []
    for row in results:
        values = {key: row[f"values__{key}"] for key in VALUE_KEYS}
        counts = statement_error_counts(values, row["contribution__sarf"])
        for figure, n in counts.items():
            total = totals.setdefault(figure, [0, 0])
            total[0], total[1] = total[0] + 1, total[1] + n
            rows.append((run.pk, figure, *(row[key] for key in ROW_IDS), n))
    return rows


def _result_chunks(run: ExtractionRun) -> Iterator[list[dict]]:
    """Every statement result of the run, read in chunks by id (never a server-side cursor:
    the connection also carries the COPY of what each chunk counts)."""
    rows = _results(run).order_by("pk")
    last = 0
    while chunk := list(rows.filter(pk__gt=last).values("pk", *ROW_FIELDS)[:READ_CHUNK]):
        yield chunk
        last = chunk[-1]["pk"]


def _rows_removed(run: ExtractionRun, statement_ids: list[int], totals: Totals) -> None:
    """Take these statements' stored rows out of ``totals`` and delete them."""
    stored = StatementError.objects.filter(run=run, statement_id__in=statement_ids)
    for figure, n in stored.values_list("figure", "count"):
        total = totals.get(figure)
        if total is None or total[0] < 1 or total[1] < n:
            raise IndexDrift(f"run {run.pk}: figure {figure!r} exceeds its stored total")
        total[0], total[1] = total[0] - 1, total[1] - n
        if not total[0]:
            del totals[figure]
    stored.delete()


def _event_kinds(totals: dict[str, list[int]]) -> list[dict[str, Any]]:
    """Event kinds the AI missed and invented, most missed first."""
    missed = {f.split(":", 1)[1]: n for f, (_, n) in totals.items() if f.startswith("events_fn:")}
    spurious = {f.split(":", 1)[1]: n for f, (_, n) in totals.items() if f.startswith("events_fp:")}
    rows = [
        {"kind": kind, "missed": missed.get(kind, 0), "spurious": spurious.get(kind, 0)}
        for kind in missed.keys() | spurious.keys()
    ]
    return sorted(rows, key=lambda r: (-r["missed"], -r["spurious"], r["kind"]))


Index = tuple[Totals, int]  # the totals, and how many statements the index holds


def error_analysis_compute(
    run: ExtractionRun,
    *,
    stored: Callable[[], dict[str, Any] | None] = lambda: None,
    full: bool = False,
) -> dict[str, Any]:
    """Bring the run's ``StatementError`` rows up to date with its statement results and
    return the analysis: the event kinds missed and invented, and per figure [statements,
    count]. ``stored``: the analysis stored with the current rows (read once the run is
    locked; None when its code version is another), whose totals an incremental update starts
    from; ``full`` rewrites every row. An update reads the changes recorded since the last
    one and only those statements' results and rows; a full rebuild reads every result of the
    run. A worker does it (``metrics.engine.derived``)."""
    with transaction.atomic():
        # One writer per run at a time. No key update: rows that refer to the run (results,
        # extractions, recorded changes) are still written meanwhile.
        ExtractionRun.objects.select_for_update(no_key=True).filter(pk=run.pk).first()
        changes = _changes_read(run)
        previous = None if full else stored()
        index = None
        if previous is not None and _updatable(run, changes, previous):
            try:
                with transaction.atomic():
                    index = _index_update(run, changes, previous)
            except IndexDrift:
                log.warning("error index of run %s disagrees with its totals: rebuilt", run.pk)
        totals, indexed = index or _index_rebuild(run)
        _changes_consume(changes)
    return {"event_kinds": _event_kinds(totals), "figures": totals, "indexed": indexed}


def _updatable(run: ExtractionRun, changes: Changes, previous: dict[str, Any]) -> bool:
    """The stored totals are those of the stored index, and few enough statements changed. A
    deleted statement takes its rows and hash with it (cascade) but not its part of the
    totals: the index then holds fewer hashes than the totals counted (an index-only count)."""
    indexed = previous.get("indexed")
    return (
        "figures" in previous
        and isinstance(indexed, int)
        and indexed > 0
        and len(changes.statement_ids) <= FULL_SHARE * indexed
        and StatementPiece.objects.filter(family=INDEX, run=run).count() == indexed
    )


def _index_update(run: ExtractionRun, changes: Changes, previous: dict[str, Any]) -> Index:
    """Of the changed statements: rewrite the rows of those whose hash moved, delete those of
    the ones whose result went away, and move the totals by the difference."""
    diff = pieces_diff(
        family=INDEX,
        run_id=run.pk,
        stamps=_stamps(run, changes.statement_ids),
        code_version=CODE_VERSION,
        read_pieces=False,
        among=changes.statement_ids,
    )
    totals = {figure: list(total) for figure, total in previous["figures"].items()}
    for chunk in _chunks(diff.gone):
        _rows_removed(run, chunk, totals)
    pieces_remove(family=INDEX, run_id=run.pk, statement_ids=diff.gone)
    for chunk in _chunks(diff.outdated):
        _rows_removed(run, chunk, totals)
        _statements_write(run, chunk, diff.hashes, totals)
    # The changed statements' hashes (diff.stored of them) are replaced by their current ones.
    return totals, previous["indexed"] - diff.stored + len(diff.hashes)


def _index_rebuild(run: ExtractionRun) -> Index:
    """Every statement's rows and hash written again, the totals counted from nothing."""
    StatementError.objects.filter(run=run).delete()
    StatementPiece.objects.filter(family=INDEX, run=run).delete()
    hash_of = piece_hasher(INDEX, code_version=CODE_VERSION)
    hashes = {statement_id: hash_of(stamp) for statement_id, stamp in _stamps(run).items()}
    totals: Totals = {}
    for chunk in _result_chunks(run):
        _copy(StatementError, COLUMNS, _rows_counted(run, chunk, totals))
    key = StatementPiece.make_key
    empty = "{}" if connection.vendor == "postgresql" else {}  # COPY takes the JSON text
    pieces = (
        (key(INDEX, run_id=run.pk, statement_id=s), INDEX, run.pk, s, digest, empty)
        for s, digest in hashes.items()
    )
    _copy(StatementPiece, PIECE_COLUMNS, pieces)
    # Rows per statement and one hash each: the error pages plan on these tables.
    planner_statistics_after_commit(models=[StatementError, StatementPiece], written=len(hashes))
    return totals, len(hashes)


def _statements_write(
    run: ExtractionRun, statement_ids: list[int], hashes: dict[int, str], totals: Totals
) -> None:
    """These statements' rows, counted into ``totals``, and the hashes they were made from
    (an empty piece: the rows are the statement's part of the index)."""
    results = _results(run).filter(statement_id__in=statement_ids).values(*ROW_FIELDS)
    _copy(StatementError, COLUMNS, _rows_counted(run, list(results), totals))
    pieces: dict[int, dict] = {statement_id: {} for statement_id in statement_ids}
    pieces_store(family=INDEX, run_id=run.pk, pieces=pieces, hashes=hashes)


COLUMNS = ("run_id", "figure", "discussion_id", "statement_id", "order", "count")
PIECE_COLUMNS = ("key", "family", "run_id", "statement_id", "input_hash", "piece")


def _copy(model: type[Model], columns: Sequence[str], rows: Iterable[tuple]) -> None:
    """On PostgreSQL a COPY (a run has hundreds of thousands of rows: building a model object and
    binding six parameters per row cost ten times more); elsewhere bulk inserts."""
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        table, names = quote(model._meta.db_table), ", ".join(map(quote, columns))
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    model.objects.bulk_create(  # type: ignore[attr-defined]
        [model(**dict(zip(columns, row, strict=True))) for row in rows], batch_size=WRITE_BATCH
    )
