"""Background jobs (audit.models.ComputeJob): starting one, at most one active per scope.

audit's export/import jobs and metrics' recompute jobs start through here; any job is cancelled
through here, and a job whose worker died is found here (``jobs_lease_expired``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings as django_settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from audit.models import ComputeJob

ACTIVE_JOB = (ComputeJob.Status.QUEUED, ComputeJob.Status.RUNNING)


def compute_job_start(*, kind: str, scope: str, params: dict[str, Any], user: Any) -> ComputeJob:
    """A new queued job, or the active job of the same scope (``job.created`` says which).

    The conditional unique constraint decides between simultaneous starts; the loser gets
    the winner's job back."""
    active = ComputeJob.objects.filter(scope=scope, status__in=ACTIVE_JOB).first()
    if active is None:
        try:
            with transaction.atomic():
                job = ComputeJob.objects.create(
                    kind=kind,
                    scope=scope,
                    params=params,
                    created_by=user if getattr(user, "is_authenticated", False) else None,
                )
            job.created = True
            return job
        except IntegrityError:
            active = ComputeJob.objects.filter(scope=scope, status__in=ACTIVE_JOB).first()
            if active is None:  # the other job already finished: try once more
                return compute_job_start(kind=kind, scope=scope, params=params, user=user)
    active.created = False
    return active


def compute_job_cancel(*, job: ComputeJob) -> ComputeJob:
    """Stop a job: a queued one (or one whose worker is gone) at once; a running one stops
    between two items, when its task next checks the flag."""
    now = timezone.now()
    ComputeJob.objects.filter(pk=job.pk, status=ComputeJob.Status.QUEUED).update(
        status=ComputeJob.Status.CANCELLED, cancel_requested=True, finished_at=now
    )
    ComputeJob.objects.filter(pk=job.pk, status=ComputeJob.Status.RUNNING).update(
        cancel_requested=True
    )
    jobs_lease_expired(ComputeJob.objects.filter(pk=job.pk)).update(
        status=ComputeJob.Status.CANCELLED, finished_at=now
    )
    job.refresh_from_db()
    return job


def jobs_lease_expired(jobs: Any) -> Any:
    """Running jobs whose task stopped writing its heartbeat (its worker died)."""
    cutoff = timezone.now() - timedelta(seconds=django_settings.JOB_LEASE_SECONDS)
    return jobs.filter(status=ComputeJob.Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
