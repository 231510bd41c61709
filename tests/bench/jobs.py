"""Recompute jobs a benchmark starts, waits for and stops.

The database holds one active recompute job at a time, and starting another hands the active
one back: a job left running by a benchmark that was stopped midway (or whose workers were
killed) would then be timed in place of the benchmark's own, and the figures would be another
run's, or none. A benchmark starts its job here, and stops a job it leaves running.
"""

from __future__ import annotations

import time

from django.core.management.base import CommandError
from django.db import transaction

from audit.services.jobs import compute_job_cancel
from metrics.engine.recompute import metrics_recompute_all
from metrics.models import ComputeJob


def recompute_job_start(run_id: int, *, queue: bool = True) -> ComputeJob:
    """A new recompute job of the run, queued to the workers on commit unless ``queue=False``;
    refused while another recompute job is active on this database."""
    with transaction.atomic():  # queued on commit, like the API's start
        job = metrics_recompute_all(run_id=run_id, queue=queue)
    if not job.created:
        raise CommandError(
            f"recompute job {job.pk} (run {job.params.get('run_id')}, {job.status}, "
            f"{job.done}/{job.total}) is still active on this database: cancel it on the jobs "
            "page, or wait for it, then run the benchmark again"
        )
    return job


def recompute_job_done(job: ComputeJob) -> ComputeJob:
    """The ended job, if it is done; otherwise what stopped it."""
    if job.status != ComputeJob.Status.DONE:
        reason = job.error.strip().splitlines()[-1] if job.error.strip() else "no error recorded"
        raise CommandError(f"recompute job {job.pk} ended {job.status}: {reason}")
    return job


def recompute_job_stop(job: ComputeJob, *, timeout: float = 120.0) -> None:
    """Cancel the job and wait until its workers have left it (they stop between batches), so
    that what it computes can be deleted without racing them."""
    job = compute_job_cancel(job=job)
    deadline = time.monotonic() + timeout
    while job.is_active and time.monotonic() < deadline:
        time.sleep(0.1)
        job.refresh_from_db()
    if job.is_active:
        raise CommandError(f"recompute job {job.pk} did not stop within {timeout:.0f} s")
