"""The statements behind each figure of a run's error analysis.

The error analysis (``metrics.derived``) is computed by a worker from every statement result
of a run. In the same pass it counts, per statement, each figure the analysis and the run's
error tables link to (missed / spurious entities per type, wrong SARF codes, an event kind
missed or spurious, one SARF confusion cell) and stores the non-zero counts as
``StatementError`` rows, replaced whole for the run; the totals per figure (statements,
count) go into the stored analysis. The page of the statements behind a figure then reads
one page of that index and the stored totals, whatever the size of the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction

from audit.models import ExtractionRun
from audit.pdp import ENTITY_KINDS
from metrics.models import MetricResult, StatementError

EXTRACTION = "extraction"  # the family whose statement results are read (metrics.services)
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


def _statement_chunks(run: ExtractionRun) -> Iterator[list[Any]]:
    """The run's statement results, read in chunks by id (never a server-side cursor: the
    connection also carries the COPY of what each chunk counts)."""
    rows = MetricResult.objects.filter(
        family=EXTRACTION, scope=MetricResult.Scope.STATEMENT, run=run, statement__isnull=False
    ).order_by("pk")
    # Only the keys counted, extracted by the database: a statement's whole values and
    # contribution are several times larger, and decoding them was most of the time.
    ids = ("pk", "statement_id", "discussion_id", "statement__order")
    keys = [f"values__{key}" for key in VALUE_KEYS]
    last = 0
    while chunk := list(
        rows.filter(pk__gt=last).values(*ids, *keys, "contribution__sarf")[:READ_CHUNK]
    ):
        yield chunk
        last = chunk[-1]["pk"]


def _event_kinds(totals: dict[str, list[int]]) -> list[dict[str, Any]]:
    """Event kinds the AI missed and invented, most missed first."""
    missed = {f.split(":", 1)[1]: n for f, (_, n) in totals.items() if f.startswith("events_fn:")}
    spurious = {f.split(":", 1)[1]: n for f, (_, n) in totals.items() if f.startswith("events_fp:")}
    rows = [
        {"kind": kind, "missed": missed.get(kind, 0), "spurious": spurious.get(kind, 0)}
        for kind in missed.keys() | spurious.keys()
    ]
    return sorted(rows, key=lambda r: (-r["missed"], -r["spurious"], r["kind"]))


def error_analysis_compute(run: ExtractionRun) -> dict[str, Any]:
    """Count every statement result of the run into its figures, replace the run's stored
    ``StatementError`` rows with them, and return the analysis: the event kinds missed and
    invented, and per figure [statements, count]. Reads every statement row of the run
    (about a second at 50,000): a worker does it (``metrics.derived``)."""
    totals: dict[str, list[int]] = {}
    with transaction.atomic():
        # One writer per run at a time. No key update: rows that refer to the run (results,
        # extractions) are still written meanwhile.
        ExtractionRun.objects.select_for_update(no_key=True).filter(pk=run.pk).first()
        StatementError.objects.filter(run=run).delete()
        for chunk in _statement_chunks(run):
            rows = []
            for row in chunk:
                values = {key: row[f"values__{key}"] for key in VALUE_KEYS}
                counts = statement_error_counts(values, row["contribution__sarf"])
                ids = (row["discussion_id"], row["statement_id"], row["statement__order"])
                for figure, n in counts.items():
                    found = totals.setdefault(figure, [0, 0])
                    found[0], found[1] = found[0] + 1, found[1] + n
                    rows.append((run.pk, figure, *ids, n))
            _rows_write(rows)
    return {"event_kinds": _event_kinds(totals), "figures": totals}


COLUMNS = ("run_id", "figure", "discussion_id", "statement_id", "order", "count")


def _rows_write(rows: list[tuple[int, str, int, int, int, int]]) -> None:
    """On PostgreSQL a COPY (a run has hundreds of thousands of rows: building a model object and
    binding six parameters per row cost ten times more); elsewhere bulk inserts."""
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        table, columns = quote(StatementError._meta.db_table), ", ".join(map(quote, COLUMNS))
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    StatementError.objects.bulk_create(
        [StatementError(**dict(zip(COLUMNS, row, strict=True))) for row in rows],
        batch_size=WRITE_BATCH,
    )
