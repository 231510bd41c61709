"""Background jobs (audit.models.ComputeJob): starting one, at most one active per scope.

audit's export/import jobs and metrics' recompute jobs start through here.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

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
