"""Celery tasks of audit's background jobs: large ground-truth exports and imports, and the
team page's active time.

Each is named after its module (``audit.tasks.<name>``). The export and import jobs were first
published as ``metrics.tasks.*``: those names stay registered for one release, so a message
queued before an upgrade still runs.
"""

from __future__ import annotations

from celery import shared_task

from audit.derived.coding_times import team_times_refresh
from audit.services.export_jobs import ground_truth_export_job_run
from audit.services.import_jobs import ground_truth_import_job_run
from evalsite.queue import RETRYING


@shared_task(name="audit.tasks.export_ground_truth_job", **RETRYING)
def export_ground_truth_job(job_id: int) -> None:
    """A large ground-truth export (ComputeJob kind "export"): writes the file to the job."""
    ground_truth_export_job_run(job_id=job_id)


@shared_task(name="audit.tasks.import_ground_truth_job", **RETRYING)
def import_ground_truth_job(job_id: int) -> None:
    """A large ground-truth import (ComputeJob kind "import"): imports the stored file."""
    ground_truth_import_job_run(job_id=job_id)


# The first names, for messages queued before the upgrade (one release).
shared_task(name="metrics.tasks.export_ground_truth_job", **RETRYING)(export_ground_truth_job.run)
shared_task(name="metrics.tasks.import_ground_truth_job", **RETRYING)(import_ground_truth_job.run)


@shared_task(name="audit.tasks.team_times", **RETRYING)
def team_times() -> None:
    """Bring the team page's stored active time up to date with the recorded changes."""
    team_times_refresh()
