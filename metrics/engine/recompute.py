"""Recompute jobs: every extraction result (or every stale one) recomputed in the background.

A job (``ComputeJob``) lists what it must do, then splits the statement and discussion results
into chunks. Each chunk is a task any worker on the slow queue takes, so N workers share the
job; a chunk reads its inputs in bulk and stores its results in batches (one transaction
each, bulk writes), which a worker's threads take in turn. The chunk that completes the set
settles the runs' totals and the system result. Progress, the lease (heartbeat) and
cancellation live on the job row:

- a worker lost mid-job stops writing the heartbeat; the sweep then resumes the job as a new
  attempt, which only finds what is left (the older attempt's tasks stop);
- a cancelled job stops before its next batch; the discussions and runs it did not reach stay
  stale for the sweep.

A full recompute marks the discussion, run and system rows stale (their figures follow every
statement) but not the statement rows: each of those is computed from its own inputs with the
code and settings in force, so its stored figures stand until its batch replaces them. What
the job has done is what was computed since it began (``since``): a batch skips a row computed
after that (by an approval's task, or by an earlier delivery of the same chunk), and a resumed
job lists only the rows computed before it.

The per-result computation is ``metrics.engine.services`` (one row at a time, for the tasks an
approval queues); this module is the batch path, with the same figures, hashes and rows.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from queue import Empty, SimpleQueue
from typing import Any

from django.conf import settings as django_settings
from django.db import connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit.models import Extraction, Feedback
from audit.services.jobs import compute_job_start, jobs_lease_expired
from evalsite.match_settings import match_settings
from evalsite.perf.bulk import rows_update
from evalsite.perf.planner import planner_statistics_refresh
from evalsite.perf.priority import background_yield
from evalsite.post_commit import after_commit
from evalsite.queue import TRANSIENT_ERRORS, task_enqueue_named
from metrics.engine.errors import statement_results_changed
from metrics.engine.services import (
    CHILD_SCOPES,
    CODE_VERSION,
    CONFIRMED_FIELDS,
    FIGURES,
    STORED_FIELDS,
    Progress,
    ResultInputs,
    Scope,
    Status,
    children_inputs,
    discussion_result_compute,
    extraction_results,
    failure_recorded,
    placeholders_create,
    results_mark_stale,
    row_fill,
    row_is_current,
    row_mark_fresh,
    rows_mark_stale,
    run_result_compute,
    statement_result_compute,
    system_result_compute,
    whole_discussion_pairs,
)
from metrics.families.extraction.batch import collector_paused
from metrics.models import ComputeJob, MetricResult
from metrics.own_data.common import own_results_mark_stale, own_results_outdated
from metrics.registry import EXTRACTION, RECOMPUTE_JOB
from metrics.results import MAX_ERROR_CHARS

log = logging.getLogger(__name__)

# --- settings or code changed --------------------------------------------------------------------


def results_outdated() -> Any:
    """Extraction rows (not already stale) computed with other match settings or code than
    those in force now."""
    return (
        extraction_results()
        .exclude(status=Status.STALE)
        .exclude(match_settings=match_settings().to_dict(), code_version=CODE_VERSION)
    )


def results_mark_outdated() -> int:
    """Mark every result computed with other settings or code stale, and queue one stale-only
    recompute job for them (the own-data families follow). Returns how many rows changed.

    Called at worker start and by every periodic sweep: cheap when nothing is outdated (one
    query), safe to run from several processes at once (rows are marked under their locks,
    so only the first caller finds them not yet stale and queues the job).
    """
    with transaction.atomic():
        pks = list(results_outdated().values_list("pk", flat=True))
        marked = rows_mark_stale(Q(pk__in=pks))[1] if pks else 0
        if marked:
            rows_mark_stale(Q(scope=Scope.SYSTEM))
            metrics_recompute_all(stale_only=True)
    if own_results_outdated().exists():
        own_results_mark_stale(reason="match settings or code changed")
    if marked:
        log.warning(
            "%s extraction results were computed with other match settings or code: "
            "marked stale, recompute queued",
            marked,
        )
    return marked


def results_mark_stale_many(
    *, statement_ids: Iterable[int], reason: str = "", run_ids: Iterable[int] | None = None
) -> int:
    """What ``results_mark_stale`` does, for changes too large for a task per result (an
    import of thousands of statements): the same rows are marked stale, and one stale-only
    recompute job computes them in chunks that every slow worker shares, so the broker gets
    one message instead of one per result. Returns how many rows changed."""
    with transaction.atomic():
        marked = results_mark_stale(
            statement_ids=statement_ids, reason=reason, run_ids=run_ids, queue_tasks=False
        )
        metrics_recompute_all(stale_only=True)  # placeholders are new stale rows, uncounted
    return marked


# --- recompute all / stale: compute jobs -------------------------------------------------------

Item = tuple[str, int, int]  # (scope, target id, run id); target id 0 for run/system items


def _expected_items(run_id: int | None) -> list[Item]:
    """Every result that should exist, plus existing rows that no longer should (to remove)."""
    runs = Extraction.objects.all() if run_id is None else Extraction.objects.filter(run_id=run_id)
    approved = Feedback.objects.approved().values("statement_id")
    statements = set(
        runs.filter(statement_id__in=approved).values_list(
            "statement_id", "statement__discussion_id", "run_id"
        )
    )
    discussions = {(d, r) for _, d, r in statements} | whole_discussion_pairs(run_id=run_id)
    rows = extraction_results().filter(scope__in=CHILD_SCOPES)
    rows = rows if run_id is None else rows.filter(run_id=run_id)
    for scope, d, s, r in rows.values_list("scope", "discussion_id", "statement_id", "run_id"):
        if scope == Scope.STATEMENT:
            statements.add((s, d, r))
        else:
            discussions.add((d, r))
    run_ids = sorted({r for *_, r in statements | discussions} | ({run_id} if run_id else set()))
    return _items(statements, discussions, run_ids)


def _items(statements: set, discussions: set, run_ids: Iterable[int]) -> list[Item]:
    """Statement (statement, discussion, run) and discussion (discussion, run) items, each
    discussion right after its statements: a batch then reads a statement's inputs once
    for both, and every chunk holds its share of the discussions."""
    children: dict[tuple[str, int, int], tuple] = {}
    for s, d, r in statements:
        children.setdefault((Scope.STATEMENT, s, r), (r, d or 0, 0, s))
    for d, r in discussions:
        children[Scope.DISCUSSION, d, r] = (r, d, 1, d)
    return [
        *sorted(children, key=children.__getitem__),
        *((Scope.RUN, 0, r) for r in run_ids),
        (Scope.SYSTEM, 0, 0),
    ]


def _stale_items(
    run_id: int | None, older_than: timedelta | None = None, *, since: datetime | None = None
) -> list[Item]:
    """Stale rows (stale for longer than ``older_than``) and runs whose totals are unknown,
    oldest first; with ``since`` (a full recompute resumed), also the statement rows not
    computed since then."""
    stale = Q(status=Status.STALE)
    if older_than is not None:
        stale &= Q(stale_since__lte=timezone.now() - older_than)
    rows = extraction_results().filter(
        stale | Q(scope=Scope.RUN, contribution__isnull=True) | _undone(since)
    )
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    found = list(rows.values_list("scope", "statement_id", "discussion_id", "run_id"))
    if not found:
        return []
    statements = {(s, d, r) for scope, s, d, r in found if scope == Scope.STATEMENT}
    discussions = {(d, r) for scope, _, d, r in found if scope == Scope.DISCUSSION}
    run_ids = sorted({r for *_, r in found if r is not None})
    return _items(statements, discussions, run_ids)


def _undone(since: datetime | None) -> Q:
    """The rows a full recompute that began at ``since`` has not computed yet, beside the stale
    ones (its statement rows are not marked stale: see the module's docstring)."""
    if since is None:
        return Q(pk__in=[])
    return Q(scope=Scope.STATEMENT) & (Q(computed_at__lt=since) | Q(computed_at__isnull=True))


def _item_compute(item: Item, *, force: bool) -> None:
    scope, target, run_id = item
    with failure_recorded(
        scope=scope,
        run_id=run_id or None,
        statement_id=target if scope == Scope.STATEMENT else None,
        discussion_id=target if scope == Scope.DISCUSSION else None,
    ):
        # Batch: the items end with each run, whose totals are rebuilt once there.
        if scope == Scope.STATEMENT:
            statement_result_compute(statement_id=target, run_id=run_id, force=force, batch=True)
        elif scope == Scope.DISCUSSION:
            discussion_result_compute(discussion_id=target, run_id=run_id, force=force, batch=True)
        elif scope == Scope.RUN:
            run_result_compute(run_id=run_id, rebuild=force)
        else:
            system_result_compute()


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
    failed, or taken over by a resumed run (a newer attempt).

    RECOMPUTE_BATCH_THREADS threads take the batches in turn, each on its own database
    connection, so one thread's figures are computed while another waits for PostgreSQL
    (about a third of a batch's time). They are what N workers sharing a job already are:
    batches of distinct rows, each locked and written in its own transaction."""
    size = django_settings.RECOMPUTE_BATCH_ITEMS
    batches = [
        [tuple(item) for item in items[start : start + size]]
        for start in range(0, len(items), size)
    ]
    chunk = _ChunkRun(job_id=job_id, attempt=attempt, index=index, progress=progress)
    threads = _batch_threads()
    if threads == 1:
        for batch in batches:
            if not chunk.step(batch):
                break
    else:
        _batches_threaded(chunk, batches, threads)
    if chunk.yielded >= 0.1:
        log.info(
            "chunk %s of job %s gave way to the default queue for %.1f s",
            index,
            job_id,
            chunk.yielded,
        )
    return not chunk.stopped


def _batch_threads() -> int:
    """One thread inside a transaction (a test's, or a caller's): another thread's connection
    would not see its uncommitted rows. SQLite allows one writer at a time anyway."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return 1
    return max(1, django_settings.RECOMPUTE_BATCH_THREADS)


@dataclass
class _ChunkRun:
    """A chunk's batches as its threads take them: what is done, and whether the job stopped."""

    job_id: int
    attempt: int
    index: int
    progress: Progress | None
    done: int = 0
    yielded: float = 0.0  # seconds its batches waited for the default queue
    stopped: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, batch: list[Item]) -> bool:
        """One batch; False when the job stopped (here or in another thread)."""
        # An approval's results first: this batch waits while the default queue has work.
        waited = background_yield()
        job = None if self.stopped else _job_running(self.job_id, self.attempt)
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
        # Progress counts batches as they end, in whatever order the threads end them.
        with self.lock:
            self.done += len(batch)
            self.yielded += waited
            settle = _job_progress(self.job_id, self.attempt, self.index, self.done, self.progress)
        if settle is None:
            self.stopped = True
            return False
        if settle:
            _job_settle(self.job_id, self.attempt, self.progress)
        return True


def _batches_threaded(chunk: _ChunkRun, batches: list[list[Item]], threads: int) -> None:
    """The batches taken in turn by this thread and threads - 1 helpers; the first error any
    of them raised (a transient one, for the task's retry) is raised here once all stopped."""
    queue: SimpleQueue[list[Item]] = SimpleQueue()
    for batch in batches:
        queue.put(batch)
    errors: list[BaseException] = []

    def take() -> None:
        try:
            while chunk.step(queue.get_nowait()):
                pass
        except Empty:
            pass  # every batch taken
        except BaseException as exc:
            errors.append(exc)

    def helper() -> None:
        try:
            take()
        finally:
            connection.close()  # this thread's own connection

    helpers = [
        threading.Thread(target=helper, name=f"recompute-batch-{n}") for n in range(1, threads)
    ]
    for thread in helpers:
        thread.start()
    take()
    for thread in helpers:
        thread.join()
    if errors:
        raise errors[0]


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


def _batch_compute(items: list[Item], *, force: bool, since: datetime | None = None) -> None:
    """Statement and discussion items in one transaction: their rows locked in pk order (as
    ``rows_mark_stale`` locks them, so the two cannot deadlock), inputs read in bulk, figures stored by
    bulk writes. An item whose row is no longer stale (nor, with ``since``, computed before
    then) was done meanwhile (a per-item task, or this batch before a retry) and is skipped;
    so is an item whose row is gone."""
    # No cyclic collection while the decoded payloads and the figures pile up (as the
    # library's batch API does): it finds nothing to free and costs time in every batch.
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
        """Bulk writes: new figures in one UPDATE (see _rows_store), confirmed rows in one
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
        # The runs' totals are rebuilt once, when the job settles them (see _run_totals_swap).
        extraction_results().filter(
            scope=Scope.RUN, run_id__in=self.runs_changed, contribution__isnull=False
        ).update(contribution=None)


def _rows_store(rows: list[MetricResult]) -> None:
    """Store the rows' STORED_FIELDS. On PostgreSQL by pk in one statement (``rows_update``:
    the figures are encoded once, in one ``json.dumps``, and sent as one parameter; Django's
    bulk writes encode every JSON field apart and escape it for the SQL text, which cost more
    than the upsert itself). Elsewhere, one upsert on the key."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        MetricResult.objects.bulk_create(
            [_unsaved(row) for row in rows],
            update_conflicts=True,
            unique_fields=["key"],
            update_fields=STORED_FIELDS,
        )
        return
    rows_update(rows, STORED_FIELDS)


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


def results_recompute_stale(*, older_than: timedelta | None = None) -> Counter:
    """Compute stale rows in place (the periodic sweep); re-queue recompute jobs the broker
    lost, resume (or fail) jobs whose worker died. ``older_than`` leaves alone rows whose
    task was queued moments ago.

    Rows the active recompute job will compute are left to it, and more than a chunk's worth
    become one stale-only job: the sweep runs on whichever worker takes it, a fast one too,
    and computing a recompute-all's 255,000 stale rows one by one there held up every
    approval's results behind it."""
    counts: Counter = Counter()
    items = _unclaimed(_stale_items(None, older_than))
    if len(items) > django_settings.RECOMPUTE_CHUNK_ITEMS or _totals_unknown(items):
        with transaction.atomic():  # queued on commit
            metrics_recompute_all(stale_only=True)
        counts["job"] += 1
        items = []
    for item in items:
        _item_compute(item, force=False)
        counts[item[0]] += 1
    counts.update(compute_jobs_recover(older_than=older_than))
    return counts


def _totals_unknown(items: list[Item]) -> bool:
    """Whether a run among the items has unknown totals (after migration 0011, or a batch that
    stopped before settling): rebuilding them reads every contribution of the run, work for
    the slow queue, not for the sweep on whichever worker runs it."""
    runs = [run_id for scope, _, run_id in items if scope == Scope.RUN]
    return bool(runs) and (
        extraction_results()
        .filter(scope=Scope.RUN, run_id__in=runs, contribution__isnull=True)
        .exists()
    )


def _unclaimed(items: list[Item]) -> list[Item]:
    """The items no active recompute job covers (a job's lost worker is the lease's concern:
    ``compute_jobs_recover`` resumes the job itself)."""
    active = ComputeJob.objects.filter(
        kind=ComputeJob.Kind.RECOMPUTE,
        status__in=[ComputeJob.Status.QUEUED, ComputeJob.Status.RUNNING],
    )
    runs = {job.params.get("run_id") for job in active}
    if None in runs:  # every run's rows (a stale-only job: every stale row)
        return []
    return [item for item in items if item[2] not in runs and (not runs or item[0] != Scope.SYSTEM)]


def compute_jobs_recover(*, older_than: timedelta | None = None) -> Counter:
    """Jobs nobody is running: queued ones the broker lost are queued again; running ones
    whose lease expired are resumed (recompute) or marked failed (the others, or after
    MAX_JOB_ATTEMPTS lost workers); cancelled ones are closed."""
    counts: Counter = Counter()
    cutoff = timezone.now() - (older_than or timedelta(0))
    for job_id in ComputeJob.objects.filter(
        kind=ComputeJob.Kind.RECOMPUTE, status=ComputeJob.Status.QUEUED, created_at__lte=cutoff
    ).values_list("pk", flat=True):
        _enqueue_job(job_id)
        counts["job"] += 1
    for job in jobs_lease_expired(ComputeJob.objects.all()):
        counts[_job_recover(job)] += 1
    return counts


def _job_recover(job: ComputeJob) -> str:
    """One job whose worker died: resume it, or say why it stopped."""
    expired = jobs_lease_expired(ComputeJob.objects.filter(pk=job.pk, attempt=job.attempt))
    now = timezone.now()
    if job.cancel_requested:
        expired.update(status=ComputeJob.Status.CANCELLED, finished_at=now)
        return "job_cancelled"
    if job.kind == ComputeJob.Kind.RECOMPUTE and job.attempt < MAX_JOB_ATTEMPTS:
        if expired.update(status=ComputeJob.Status.QUEUED):
            log.warning("compute job %s: worker lost (attempt %s); resuming", job.pk, job.attempt)
            _enqueue_job(job.pk)
        return "job_resumed"
    error = (
        f"The worker running this job stopped (no heartbeat for "
        f"{django_settings.JOB_LEASE_SECONDS:.0f} s, attempt {job.attempt}). "
        "Nothing more will happen to it; start it again."
    )
    expired.update(status=ComputeJob.Status.FAILED, error=error, finished_at=now)
    log.warning("job %s (%s): worker lost; marked failed", job.pk, job.kind)
    return "job_failed"
