"""Ground-truth exports too large for a request: a background job that writes the file.

``ground_truth_export_start`` decides: small selections are exported in the request, large ones
(more approved statements than ``settings.EXPORT_SYNC_MAX_STATEMENTS``) become a job whose
Celery task (``audit.tasks.export_ground_truth_job``) calls ``ground_truth_export_job_run``.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files import File
from django.utils import timezone

from audit.models import ComputeJob, ExtractionRun, Feedback
from audit.services.exports import (
    ExportOptionError,
    NothingToExport,
    ground_truth_export,
    ground_truth_export_text,
)
from evalsite.post_commit import after_commit
from evalsite.queue import task_enqueue_named

log = logging.getLogger(__name__)

EXPORT_TASK = "audit.tasks.export_ground_truth_job"


@dataclass
class ExportOutcome:
    """Either the export itself (``data``) or the job that will write it (``job``)."""

    data: dict[str, Any] | None = None
    job: ComputeJob | None = None


def ground_truth_export_size(*, discussion_ids: list[int] | None, all_discussions: bool) -> int:
    """How many approved statements the selection holds."""
    approved = Feedback.objects.approved()
    if not all_discussions:
        approved = approved.filter(statement__discussion_id__in=discussion_ids or [])
    return approved.count()


def ground_truth_export_start(
    *,
    user: User,
    discussion_ids: list[int] | None = None,
    all_discussions: bool = False,
    run: ExtractionRun | None = None,
    include_provisional: bool = False,
    include_notes: bool = False,
    include_f1: bool = False,
) -> ExportOutcome:
    """Export now, or queue a background job when the selection is large (the options:
    ``ground_truth_export``).

    Raises ``NothingToExport`` when no approved ground truth matches, ``ExportOptionError``
    for F1 figures without a run.
    """
    if include_f1 and run is None:
        raise ExportOptionError("include_f1: choose the run whose F1 figures are exported (run).")
    size = ground_truth_export_size(discussion_ids=discussion_ids, all_discussions=all_discussions)
    if size == 0:
        raise NothingToExport("No approved ground truth matches the request.")
    if size <= settings.EXPORT_SYNC_MAX_STATEMENTS:
        data = ground_truth_export(
            discussion_ids=discussion_ids,
            all_discussions=all_discussions,
            run=run,
            include_provisional=include_provisional,
            include_notes=include_notes,
            include_f1=include_f1,
        )
        return ExportOutcome(data=data)
    job = ComputeJob.objects.create(
        kind=ComputeJob.Kind.EXPORT,
        params={
            "discussion_ids": sorted(discussion_ids or []),
            "all": all_discussions,
            "run": run.pk if run else None,
            "include_provisional": include_provisional,
            "include_notes": include_notes,
            "include_f1": include_f1,
            "approved_statements": size,
        },
        created_by=user,
    )
    after_commit(lambda: _queue_export(job.pk))
    return ExportOutcome(job=job)


def _queue_export(job_id: int) -> None:
    if not task_enqueue_named(EXPORT_TASK, job_id=job_id):
        _fail(job_id, "Could not queue the export (the task broker is unavailable); try again.")


def _set_progress(job_id: int, done: int, total: int) -> None:
    ComputeJob.objects.filter(pk=job_id).update(done=done, total=total)


def ground_truth_export_job_run(*, job_id: int) -> ComputeJob:
    """Run an export job: write the JSON file to ``result_file``, recording progress."""
    job = ComputeJob.objects.get(pk=job_id, kind=ComputeJob.Kind.EXPORT)
    if job.cancel_requested and job.status == ComputeJob.Status.QUEUED:
        ComputeJob.objects.filter(pk=job_id).update(
            status=ComputeJob.Status.CANCELLED, finished_at=timezone.now()
        )
        job.refresh_from_db()
        return job
    # Only one worker runs a job, even if its task was delivered twice.
    claimed = ComputeJob.objects.filter(pk=job_id, status=ComputeJob.Status.QUEUED).update(
        status=ComputeJob.Status.RUNNING, started_at=timezone.now(), error=""
    )
    if not claimed:
        return job
    params = job.params or {}
    try:
        run = ExtractionRun.objects.filter(pk=params["run"]).first() if params.get("run") else None
        pieces = ground_truth_export_text(
            discussion_ids=params.get("discussion_ids") or None,
            all_discussions=bool(params.get("all")),
            run=run,
            progress=lambda done, total: _set_progress(job_id, done, total),
            include_provisional=bool(params.get("include_provisional")),
            include_notes=bool(params.get("include_notes")),
            include_f1=bool(params.get("include_f1")),
        )
        job.refresh_from_db()
        _save_pieces(job, f"ground-truth-job-{job_id}.json", pieces)
        job.status = ComputeJob.Status.DONE
        job.finished_at = timezone.now()
        job.save(update_fields=["result_file", "status", "finished_at"])
    except (NothingToExport, ExportOptionError, ValueError) as exc:
        _fail(job_id, str(exc))
    except Exception as exc:  # the job must end in a visible state, whatever went wrong
        log.exception("ground-truth export job %s failed", job_id)
        _fail(job_id, f"{type(exc).__name__}: {exc}")
    job.refresh_from_db()
    return job


def _save_pieces(job: ComputeJob, name: str, pieces: Iterator[str]) -> None:
    """Write the export to a temporary file as it is produced, then hand the file to the
    storage (local or S3, which uploads it in parts): memory stays flat in its size."""
    with tempfile.TemporaryFile() as spool:
        for piece in pieces:
            spool.write(piece.encode("utf-8"))
        spool.seek(0)
        job.result_file.save(name, File(spool), save=False)


def _fail(job_id: int, message: str) -> None:
    ComputeJob.objects.filter(pk=job_id).update(
        status=ComputeJob.Status.FAILED, error=message, finished_at=timezone.now()
    )
