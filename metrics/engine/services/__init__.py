"""Stored extraction-F1 results: computing them, marking them stale, recomputing them.

Pages read ``MetricResult`` rows; Celery tasks (``metrics.tasks``) call the ``*_compute``
services here. Every row records the hash of its inputs, so running a task twice, or
recomputing unchanged inputs, changes nothing.

Invariant, kept under row locks: a run row's ``contribution`` is
``{"statements": Σ statement-row contributions, "discussions": Σ discussion-row
contributions}`` over that run's rows, so one approval updates the run and system figures
in O(1) instead of recomputing every statement. ``contribution = None`` on a run row means
"unknown": it is rebuilt from the rows the next time the row is locked.

Locks are always taken in one order — statement/discussion row, then run row, then the
system row — so two workers never wait on each other in a cycle.

By what they hold: ``rows`` (keys, input hashes, a row filled, confirmed or failed),
``inputs`` (ground truth and extractions read in bulk), ``runs`` (run totals, run and system
rows), ``children`` (statement and discussion rows), ``stale`` (marking stale, placeholders,
queueing). The batch path (``metrics.engine.recompute``: recompute jobs, large changes) stores
the same rows with the same figures from these modules' pieces (``extraction_results``,
``children_inputs``, ``row_is_current``, ``row_fill``, ``row_mark_fresh``,
``placeholders_create``, ``rows_mark_stale``), so there is one implementation of each step.
"""

from metrics.engine.services.children import discussion_result_compute, statement_result_compute
from metrics.engine.services.rows import (
    CODE_VERSION,
    SYSTEM_KEY,
    discussion_key,
    failure_recorded,
    statement_key,
)
from metrics.engine.services.runs import run_result_compute, run_values, system_result_compute
from metrics.engine.services.stale import (
    missing_rows,
    placeholders_create,
    results_forget_deleted,
    results_mark_stale,
    results_run_deleted,
    rows_mark_stale,
)
from metrics.registry import EXTRACTION

__all__ = [
    "CODE_VERSION",
    "EXTRACTION",
    "SYSTEM_KEY",
    "discussion_key",
    "discussion_result_compute",
    "failure_recorded",
    "missing_rows",
    "placeholders_create",
    "results_forget_deleted",
    "results_mark_stale",
    "results_run_deleted",
    "rows_mark_stale",
    "run_result_compute",
    "run_values",
    "statement_key",
    "statement_result_compute",
    "system_result_compute",
]
