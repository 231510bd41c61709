"""The periodic sweep: stale rows computed in place (or, past a chunk's worth, left to one
stale-only job), and jobs nobody is running re-queued, resumed or failed."""

from __future__ import annotations

import logging
from collections import Counter
from datetime import timedelta

from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from audit.services.jobs import jobs_lease_expired
from metrics.engine.recompute.items import Item, _item_compute, _stale_items
from metrics.engine.recompute.jobs import MAX_JOB_ATTEMPTS, _enqueue_job, metrics_recompute_all
from metrics.engine.services.rows import Scope, extraction_results
from metrics.models import ComputeJob

log = logging.getLogger(__name__)


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
