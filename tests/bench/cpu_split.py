"""Where a recompute's CPU goes: one worker's batches run in this process, one thread, with
the CPU seconds of each phase counted apart.

- reading: the rows locked and the inputs read (queries, rows, input hashes), less decoding;
- decoding: the JSON payloads turned into Python (every JSON field read);
- matching: the extraction-F1 library's comparisons (statement and cumulative);
- writing: the figures made ready to store, encoded and written (bulk UPDATEs, changes);
- other: everything else (planning, locks on the job, progress, settling the run).

The phases are counted by wrapping the functions that do them, for this measurement only:
the code measured is the code a worker runs. The database server's CPU is in none of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import wraps
from typing import Any
from unittest import mock

from django.db.models import JSONField

from metrics.engine import recompute
from metrics.engine.recompute import batches
from metrics.engine.services import children
from metrics.models import ComputeJob
from tests.bench.jobs import recompute_job_done, recompute_job_start

PHASES = ("reading", "decoding", "matching", "writing", "other")


@dataclass
class PhaseClock:
    """CPU seconds of this thread per phase, each exclusive: time spent in a phase entered
    inside another counts for the inner one only."""

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    stack: list[str] = field(default_factory=lambda: ["other"])
    since: float = field(default_factory=time.thread_time)

    def _charge(self) -> None:
        now = time.thread_time()
        self.seconds[self.stack[-1]] += now - self.since
        self.since = now

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self._charge()
        self.stack.append(name)
        try:
            yield
        finally:
            self._charge()
            self.stack.pop()

    def counted(self, function: Callable, name: str) -> Callable:
        @wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return function(*args, **kwargs)

        return timed

    def total(self) -> float:
        self._charge()
        return sum(self.seconds.values())


# (owner, attribute, phase): the functions whose time goes to each phase.
COUNTED = (
    (batches, "_stale_rows_locked", "reading"),
    (batches, "_batch_inputs", "reading"),
    (JSONField, "from_db_value", "decoding"),
    (children, "calculate_statement_f1", "matching"),
    (children, "calculate_cumulative_f1", "matching"),
    (batches._BatchWrites, "add", "writing"),
    (batches._BatchWrites, "save", "writing"),
)


@dataclass(frozen=True)
class Split:
    job: ComputeJob
    seconds: dict[str, float]  # CPU seconds per phase
    cpu: float  # their sum: the job's CPU in this process
    wall: float


def recompute_split(run_id: int) -> Split:
    """A full recompute of the run, computed here in one thread, its CPU split by phase."""
    job = recompute_job_start(run_id, queue=False)  # no worker is told: it is computed here
    clock = PhaseClock()
    with ExitStack() as patches:
        for owner, name, phase in COUNTED:
            original = getattr(owner, name)
            patches.enter_context(mock.patch.object(owner, name, clock.counted(original, phase)))
        started, clock.since = time.perf_counter(), time.thread_time()
        clock.seconds = dict.fromkeys(PHASES, 0.0)
        job = recompute.compute_job_run(job_id=job.pk)
        wall = time.perf_counter() - started
        cpu = clock.total()
    recompute_job_done(job)
    return Split(job, dict(clock.seconds), cpu, wall)
