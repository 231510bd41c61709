"""Recompute jobs (``ComputeJob``): started once at a time, claimed by one worker, planned in
chunks that any worker on the slow queue takes, leased by a heartbeat, cancelled between
batches, and settled (runs, then the system) by the chunk that completes the set."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit.models import Feedback
from audit.services.jobs import compute_job_start
from evalsite.perf.planner import planner_statistics_refresh
from evalsite.post_commit import after_commit
from evalsite.queue import TRANSIENT_ERRORS, task_enqueue_named
from metrics.engine.recompute.batches import _batch_compute
from metrics.engine.recompute.items import Item, _expected_items, _item_compute, _stale_items
from metrics.engine.services.rows import CHILD_SCOPES, Scope
from metrics.engine.services.stale import placeholders_create, rows_mark_stale
from metrics.models import ComputeJob, MetricResult
from metrics.registry import EXTRACTION, RECOMPUTE_JOB
from metrics.results import MAX_ERROR_CHARS

log = logging.getLogger(__name__)


Progress = Callable[[int, int], None]

RECOMPUTE_SCOPE = "recompute"  # one recompute job at a time, whatever its run
MAX_JOB_ATTEMPTS = 3  # a job whose worker was lost this many times is marked failed


def metrics_recompute_all(
    *,
    user: Any = None,
    family: str = EXTRACTION,
    run_id: int | None = None,
    stale_only: bool = False,
    queue: bool = True,
) -> ComputeJob:
    """Create a recompute job (queued to a worker unless ``queue=False``).

    The database holds at most one active recompute job: an active one (or the one a
    simultaneous start just created) is returned instead of starting a second.
    """
    if family not in RECOMPUTE_JOB:
        raise ValueError(f"unknown metric family {family!r}; known: {', '.join(RECOMPUTE_JOB)}")
    job = compute_job_start(
        kind=ComputeJob.Kind.RECOMPUTE,
        scope=RECOMPUTE_SCOPE,
        params={"family": family, "run_id": run_id, "stale_only": stale_only},
        user=user,
    )
    if queue and job.created:
        after_commit(lambda: _enqueue_job(job.pk))
    return job


def _enqueue_job(job_id: int) -> None:
    task_enqueue_named("metrics.tasks.run_compute_job", job_id=job_id)


def _job_claim(job_id: int) -> int | None:
    """Only one worker runs a job, even if its task was delivered twice: queued → running.
    Returns this run's attempt number (its lease), or None when another task has the job."""
    now = timezone.now()
    claimed = ComputeJob.objects.filter(pk=job_id, status=ComputeJob.Status.QUEUED).update(
        status=ComputeJob.Status.RUNNING,
        started_at=Coalesce("started_at", Value(now)),
        heartbeat_at=now,
        attempt=F("attempt") + 1,
    )
    if not claimed:
        return None
    return ComputeJob.objects.values_list("attempt", flat=True).get(pk=job_id)


def _scope_mark_stale(run_id: int | None) -> None:
    """Before recomputing everything: placeholders for missing results; the discussion, run
    and system rows stale.

    Pages then show "updating" for every figure that sums statements, and each run settles
    (and the system follows) once, at its last row rather than after every row. Rows a
    cancelled job does not reach stay stale for the sweep, which only confirms them when their
    inputs did not change. The statement rows are not marked: they are most of the rows, and
    marking them was most of the job's serial planning.
    """
    runs = None if run_id is None else [run_id]
    with transaction.atomic():
        written = placeholders_create(Feedback.objects.approved(), runs)
        for scope in (Scope.DISCUSSION, Scope.RUN):
            written += rows_mark_stale(Q(scope=scope), runs)[1]
        rows_mark_stale(Q(scope=Scope.SYSTEM))
    planner_statistics_refresh(models=[MetricResult], written=written)


def _job_items(job: ComputeJob) -> list[Item]:
    """What is left to do. A full recompute notes when it began and marks its scope stale; a
    resumed job (or a stale-only one) then only has the rows still stale or, for a full one,
    not computed since it began, so it continues from what is done."""
    params = job.params
    if not params.get("stale_only") and not params.get("marked"):
        since = timezone.now()  # before the marking: whatever is computed after it is done
        _scope_mark_stale(params.get("run_id"))
        job.params = {**params, "marked": True, "since": since.isoformat()}
        job.save(update_fields=["params"])
        return _expected_items(params.get("run_id"))
    return _stale_items(params.get("run_id"), since=_job_since(job))


def _job_since(job: ComputeJob) -> datetime | None:
    """When a full recompute began (None for a stale-only job)."""
    since = job.params.get("since")
    return datetime.fromisoformat(since) if since and not job.params.get("stale_only") else None


def compute_job_run(
    *, job_id: int, progress: Progress | None = None, parallel: bool = False
) -> ComputeJob:
    """Start a recompute job: claim it, list what is left, and process it in chunks.

    ``parallel``: each chunk is a task of its own, so every worker on the slow queue takes a
    share; the chunk that completes the set settles the runs and the system result. Otherwise
    the chunks run here, one after the other (the command line, the benchmarks).
    """
    attempt = _job_claim(job_id)
    if attempt is None:
        return ComputeJob.objects.get(pk=job_id)
    try:
        chunks = _job_plan(ComputeJob.objects.get(pk=job_id), attempt)
    except Exception:
        _job_end(job_id, attempt, ComputeJob.Status.FAILED, error=_failure(job_id))
        return ComputeJob.objects.get(pk=job_id)
    if not chunks:
        _job_settle(job_id, attempt, progress)
    for index, chunk in enumerate(chunks):
        if parallel:
            task_enqueue_named(
                "metrics.tasks.compute_job_chunk",
                job_id=job_id,
                attempt=attempt,
                index=index,
                items=chunk,
            )
        elif not compute_job_chunk(
            job_id=job_id, attempt=attempt, index=index, items=chunk, progress=progress
        ):
            break
    return ComputeJob.objects.get(pk=job_id)


def _failure(job_id: int) -> str:
    log.exception("compute job %s failed", job_id)
    return traceback.format_exc()[-MAX_ERROR_CHARS:]


def _job_plan(job: ComputeJob, attempt: int) -> list[list[Item]]:
    """What is left to do, in chunks; progress starts from what is already done (resumed:
    what is no longer stale was done by the lost run, or by the sweep meanwhile)."""
    items = _job_items(job)
    children = [item for item in items if item[0] in CHILD_SCOPES]
    size = django_settings.RECOMPUTE_CHUNK_ITEMS
    chunks = [children[start : start + size] for start in range(0, len(children), size)]
    job.done = max(job.total - len(items), 0) if attempt > 1 else 0
    job.total = job.done + len(items)
    job.params = {
        **job.params,
        "base": job.done,
        "chunks": [len(chunk) for chunk in chunks],
        "progress": [0] * len(chunks),
        "settle": [list(item) for item in items if item[0] not in CHILD_SCOPES],
        "settling": False,
    }
    job.save(update_fields=["total", "done", "params"])
    return chunks


def compute_job_chunk(
    *, job_id: int, attempt: int, index: int, items: list, progress: Progress | None = None
) -> bool:
    """One chunk of a recompute job, in batches of RECOMPUTE_BATCH_ITEMS, each in its own
    transaction. Returns False when the job stopped: cancelled (checked before each batch),
    failed, or taken over by a resumed run (a newer attempt)."""
    size = django_settings.RECOMPUTE_BATCH_ITEMS
    chunk = _ChunkRun(job_id=job_id, attempt=attempt, index=index, progress=progress)
    for start in range(0, len(items), size):
        if not chunk.step([tuple(item) for item in items[start : start + size]]):
            break
    return not chunk.stopped


@dataclass
class _ChunkRun:
    """A chunk's batches as they are done, and whether the job stopped."""

    job_id: int
    attempt: int
    index: int
    progress: Progress | None
    done: int = 0
    stopped: bool = False

    def step(self, batch: list[Item]) -> bool:
        """One batch; False when the job stopped."""
        job = _job_running(self.job_id, self.attempt)
        if job is None:
            self.stopped = True
            return False
        try:
            _batch_compute(batch, force=not job.params.get("stale_only"), since=_job_since(job))
        except TRANSIENT_ERRORS:
            self.stopped = True
            raise  # the task is retried; the batches already stored are no longer stale
        except Exception:
            self.stopped = True
            _job_end(
                self.job_id, self.attempt, ComputeJob.Status.FAILED, error=_failure(self.job_id)
            )
            return False
        self.done += len(batch)
        settle = _job_progress(self.job_id, self.attempt, self.index, self.done, self.progress)
        if settle is None:
            self.stopped = True
            return False
        if settle:
            _job_settle(self.job_id, self.attempt, self.progress)
        return True


def _job_running(job_id: int, attempt: int) -> ComputeJob | None:
    """The job, while this attempt still runs it; a requested cancellation takes effect here."""
    job = ComputeJob.objects.filter(pk=job_id, attempt=attempt).first()
    if job is None or job.status != ComputeJob.Status.RUNNING:
        return None
    if job.cancel_requested:
        _job_end(job_id, attempt, ComputeJob.Status.CANCELLED)
        return None
    return job


def _job_progress(
    job_id: int, attempt: int, index: int, done: int, progress: Progress | None
) -> bool | None:
    """Record a chunk's progress and renew the lease. True when this completes every chunk
    (the caller then settles the runs, exactly once), None when the job is no longer this
    attempt's to run."""
    with transaction.atomic():
        job = (
            ComputeJob.objects.select_for_update(no_key=True)
            .filter(pk=job_id, attempt=attempt, status=ComputeJob.Status.RUNNING)
            .first()
        )
        if job is None:
            return None
        params = job.params
        params["progress"][index] = done
        job.done = params["base"] + sum(params["progress"])
        settle = params["progress"] == params["chunks"] and not params["settling"]
        params["settling"] = params["settling"] or settle
        job.heartbeat_at = timezone.now()
        job.save(update_fields=["params", "done", "heartbeat_at"])
    if progress:
        progress(job.done - params["base"], job.total - params["base"])
    return settle


def _job_settle(job_id: int, attempt: int, progress: Progress | None) -> None:
    """After every chunk: the runs' totals and status, then the system result; the job ends."""
    job = ComputeJob.objects.get(pk=job_id)
    try:
        for item in job.params["settle"]:
            if _job_running(job_id, attempt) is None:
                return
            _item_compute(tuple(item), force=not job.params.get("stale_only"))
            job.done += 1
            if progress:
                progress(job.done - job.params["base"], job.total - job.params["base"])
    except Exception:
        _job_end(job_id, attempt, ComputeJob.Status.FAILED, error=_failure(job_id))
        return
    _job_end(job_id, attempt, ComputeJob.Status.DONE)
    # And back: the rows it computed are fresh again (the sweep looks for stale ones).
    planner_statistics_refresh(models=[MetricResult], written=job.total - job.params["base"])


def _job_end(job_id: int, attempt: int, status: str, *, error: str = "") -> None:
    """Only this attempt ends the job (not one that lost its lease to a resumed run)."""
    fields: dict[str, Any] = {"status": status, "error": error, "finished_at": timezone.now()}
    if status == ComputeJob.Status.DONE:
        fields["done"] = F("total")
    ComputeJob.objects.filter(pk=job_id, status=ComputeJob.Status.RUNNING, attempt=attempt).update(
        **fields
    )
