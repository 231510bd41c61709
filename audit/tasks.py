"""Celery tasks of audit's background jobs: large ground-truth exports and imports, and the
team page's active time.

They keep the names they were first published under (``metrics.tasks.*``): routes
(settings.CELERY_TASK_ROUTES) and messages already queued refer to these names.
"""

from __future__ import annotations

from celery import shared_task

from audit.derived.coding_times import team_times_refresh
from audit.services.export_jobs import ground_truth_export_job_run
from audit.services.import_jobs import ground_truth_import_job_run
from evalsite.queue import RETRYING


@shared_task(name="metrics.tasks.export_ground_truth_job", **RETRYING)
def export_ground_truth_job(job_id: int) -> None:
    """A large ground-truth export (ComputeJob kind "export"): writes the file to the job."""
    ground_truth_export_job_run(job_id=job_id)


@shared_task(name="metrics.tasks.import_ground_truth_job", **RETRYING)
def import_ground_truth_job(job_id: int) -> None:
    """A large ground-truth import (ComputeJob kind "import"): imports the stored file."""
    ground_truth_import_job_run(job_id=job_id)


@shared_task(name="audit.tasks.team_times", **RETRYING)
def team_times() -> None:
    """Bring the team page's stored active time up to date with the recorded changes."""
    team_times_refresh()
