"""The PostgreSQL planner's statistics after a bulk write.

PostgreSQL picks a query's plan from each table's statistics (rows, value frequencies), which
autovacuum refreshes some time after enough rows changed, or never where it is turned off.
Until then the planner plans for the table it last saw: right after a large import it takes
the new tables for empty and scans where it should probe an index, and an approval waits on it.

So whatever writes in bulk (an import, a recompute's planning and its end, the benchmark
seeds) refreshes the statistics of the tables it changed at once: ``ANALYZE`` reads a sample
of 30,000 rows per table, once per bulk write.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import DatabaseError, connection, transaction
from django.db.models import Model

from evalsite.post_commit import after_commit

log = logging.getLogger(__name__)

# Fewer rows than this, or than this share of the largest table's rows, do not change the
# tables enough to mislead the planner (autovacuum's own default share); the next autovacuum
# catches up with many small writes. The share keeps a small import over HTTP on a large
# site from paying for an ANALYZE in its request.
BULK_ROWS = 1_000
BULK_SHARE = 0.1


def planner_statistics_refresh(
    *, models: Iterable[type[Model]] | None = None, written: int | None = None
) -> bool:
    """ANALYZE the models' tables (every table with ``models=None``) on PostgreSQL, when
    ``written`` (rows inserted or changed; None: unknown, refresh) reaches BULK_ROWS.
    Returns whether it did. Inside a transaction the statistics count its own rows and are
    kept only if it commits.

    Statistics only make plans better: a failure is logged and leaves the caller's work (and
    its transaction, by a savepoint) as it was."""
    if connection.vendor != "postgresql" or (written is not None and written < BULK_ROWS):
        return False
    quote = connection.ops.quote_name
    tables = [] if models is None else sorted({model._meta.db_table for model in models})
    if written is not None and written < BULK_SHARE * _largest_estimate(tables):
        return False
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in [f"ANALYZE {quote(table)}" for table in tables] or ["ANALYZE"]:
                cursor.execute(statement)
    except DatabaseError:
        log.warning("refreshing the planner's statistics of %s failed", tables, exc_info=True)
        return False
    return True


def planner_statistics_after_commit(*, models: Iterable[type[Model]], written: int) -> None:
    """Refresh the models' statistics once the caller's transaction commits, if ``written``
    reaches BULK_ROWS. After the commit because ANALYZE holds a lock on each table until the
    end of the transaction it runs in: a second bulk writer's refresh would wait on it while
    holding rows the first may still need. Below the threshold nothing is registered, so an
    approval (a row or two) leaves no callback behind."""
    if written < BULK_ROWS:
        return
    chosen = list(models)
    after_commit(lambda: planner_statistics_refresh(models=chosen, written=written))


def _largest_estimate(tables: list[str]) -> float:
    """The planner's row estimate of the largest of the tables (0 if never analysed)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(MAX(GREATEST(reltuples, 0)), 0) FROM pg_class WHERE relname = ANY(%s)",
            [tables],
        )
        return float(cursor.fetchone()[0])
