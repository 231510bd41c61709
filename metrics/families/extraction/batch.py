"""Many statements (or discussions) at once: the same results as one call per item.

Scoring thousands of statements allocates hundreds of thousands of small lists and
dicts (every result holds its matches, ids and SARF pairs). CPython's cyclic
collector runs a full collection each time enough allocations pile up, and a full
collection walks the caller's whole heap, not just these results: in a process
holding a workload in memory that was a third of the run time. Nothing built here
can form a reference cycle (the results are plain trees; the only cycles are the
callers' own), so the batch functions pause the collector while they run, as
Mercurial's `nogc` does for the same reason, and restore its previous state.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from .cumulative import calculate_cumulative_f1
from .results import CumulativeF1Metrics, StatementF1Metrics
from .settings import MatchSettings, resolve_settings
from .statement import calculate_statement_f1

Payload = dict[str, Any] | None


class StatementInput(NamedTuple):
    """One statement to score; plain (ai, gt) or 4-tuples are accepted too."""

    ai: Payload
    gt: Payload
    statement_id: int | None = None
    discussion_id: int | None = None


class DiscussionInput(NamedTuple):
    """One discussion's subject-statement deltas, in order; (ai, gt) pairs accepted too."""

    ai_deltas: Sequence[Payload]
    gt_deltas: Sequence[Payload]
    discussion_id: int | None = None


def calculate_statements_f1(
    statements: Iterable[StatementInput | tuple],
    *,
    settings: MatchSettings | None = None,
) -> list[StatementF1Metrics]:
    """calculate_statement_f1 of each (ai, gt[, statement_id, discussion_id]) item."""
    settings = resolve_settings(settings)
    with collector_paused():
        return [
            calculate_statement_f1(
                item.ai,
                item.gt,
                settings=settings,
                statement_id=item.statement_id,
                discussion_id=item.discussion_id,
            )
            for item in map(_as_statement, statements)
        ]


def calculate_discussions_cumulative_f1(
    discussions: Iterable[DiscussionInput | tuple],
    *,
    settings: MatchSettings | None = None,
) -> list[CumulativeF1Metrics]:
    """calculate_cumulative_f1 of each (ai_deltas, gt_deltas[, discussion_id]) item."""
    settings = resolve_settings(settings)
    with collector_paused():
        return [
            calculate_cumulative_f1(
                item.ai_deltas, item.gt_deltas, settings=settings, discussion_id=item.discussion_id
            )
            for item in map(_as_discussion, discussions)
        ]


def _as_statement(item: StatementInput | tuple) -> StatementInput:
    return item if isinstance(item, StatementInput) else StatementInput(*item)


def _as_discussion(item: DiscussionInput | tuple) -> DiscussionInput:
    return item if isinstance(item, DiscussionInput) else DiscussionInput(*item)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Suspend the cyclic garbage collector for the block (reference counting still
    frees everything as usual); leave it disabled if it already was. Threads may pause it
    at once (a worker's batch threads): it resumes when the last of them leaves."""
    global _pausing, _resume
    with _pause_lock:
        if _pausing == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pausing -= 1
            if _pausing == 0 and _resume:
                _age_young_objects()
                gc.enable()


_pause_lock = threading.Lock()
_pausing = 0  # blocks inside collector_paused now, in every thread
_resume = False  # whether the collector was enabled when the first of them entered


def _age_young_objects() -> None:
    """Move every tracked object to the oldest generation without scanning it.

    Everything the batch built sits in the youngest generation, far past its
    threshold, so the first allocation after gc.enable() would scan all of it (a
    tenth of a 5,000-statement batch) and find nothing to free (see above); objects
    that survive are promoted towards the oldest generation anyway. freeze() then
    unfreeze() moves them there directly; full collections still visit them. Skipped
    when the process froze objects itself, since unfreeze() would release those too.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
