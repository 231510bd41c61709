"""Ground-truth imports too large for a request: a background job that imports the stored file.

``ground_truth_import_start`` decides: request bodies up to ``settings.IMPORT_SYNC_MAX_BYTES``
are imported in the request; larger ones are stored and become a job (kind "import") whose
Celery task (``audit.tasks.import_ground_truth_job``) calls ``ground_truth_import_job_run``.
The same file sent twice while its import is active gets the same job back (the job's scope
is the file's hash). The import itself is the one ``ground_truth_import``: same checks, all or
nothing; the job reads the stored file one discussion at a time (twice: check, then import),
so its memory stays flat in the file's size.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, fields
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from audit.models import ComputeJob, ExtractionRun
from audit.services.api_support import ground_truth_import
from audit.services.imports import ImportRun, ImportSummary, discussions_import_file
from audit.services.jobs import compute_job_start
from evalsite.post_commit import after_commit
from evalsite.queue import task_enqueue_named
from metrics.families.json_input import STREAM_CHUNK, JsonInputError, load_json
from metrics.families.payload.schema import PayloadError

log = logging.getLogger(__name__)

IMPORT_TASK = "audit.tasks.import_ground_truth_job"
IMPORT_CHUNK_BYTES = STREAM_CHUNK  # read from the stored file at a time


@dataclass
class ImportOutcome:
    """Either the import's summary (``summary``) or the job that will import (``job``)."""

    summary: ImportSummary | None = None
    job: ComputeJob | None = None


def ground_truth_import_start(
    *, user: User, body: bytes, data: Any = None, run: ImportRun | None = None
) -> ImportOutcome:
    """Import now (``data``: the parsed body; None: parse ``body``), or store a large body and
    queue a job; ``run``: where the file's extractions go (imports.ImportRun)."""
    run = run or ImportRun()
    if len(body) <= settings.IMPORT_SYNC_MAX_BYTES:
        if data is None:
            data = load_json(body, file="the file")
        return ImportOutcome(summary=ground_truth_import(data=data, by=user, run=run))
    digest = hashlib.sha256(body).hexdigest()
    job = compute_job_start(
        kind=ComputeJob.Kind.IMPORT,
        scope=f"import:{digest}",
        params={"bytes": len(body), "sha256": digest, "run": _run_params(run)},
        user=user,
    )
    if job.created:
        name = default_storage.save(f"imports/ground-truth-{job.pk}.json", ContentFile(body))
        job.params = {**job.params, "file": name}
        job.save(update_fields=["params"])
        after_commit(lambda: _queue_import(job.pk))
    return ImportOutcome(job=job)


def _run_params(run: ImportRun) -> dict[str, Any]:
    return {
        "run_id": run.run.pk if run.run is not None else None,
        "model_name": run.model_name,
        "prompt_version": run.prompt_version,
        "source": run.source,
        "unit": run.unit,
        "notes": run.notes,
        "external_id": run.external_id,
    }


def _run_from_params(params: dict[str, Any]) -> ImportRun:
    """The run choice a job was started with (an existing run gone since: its own run)."""
    run_id = params.pop("run_id", None)
    existing = ExtractionRun.objects.filter(pk=run_id).first() if run_id else None
    return ImportRun(run=existing, **params)


def _queue_import(job_id: int) -> None:
    if not task_enqueue_named(IMPORT_TASK, job_id=job_id):
        _finish(
            job_id,
            ComputeJob.Status.FAILED,
            "Could not queue the import (the task broker "
            "is unavailable); nothing was imported. Send the file again.",
        )


def ground_truth_import_job_run(*, job_id: int) -> ComputeJob:
    """Run an import job: read the stored file, import it, record the summary or the problems."""
    claimed = ComputeJob.objects.filter(pk=job_id, status=ComputeJob.Status.QUEUED).update(
        status=ComputeJob.Status.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    job = ComputeJob.objects.get(pk=job_id, kind=ComputeJob.Kind.IMPORT)
    if not claimed:  # delivered twice, or cancelled while queued
        return job
    try:
        with _ProgressWriter(job_id) as progress:
            summary = discussions_import_file(
                open_file=lambda: default_storage.open(job.params["file"], "rb"),
                by=job.created_by,
                run=_run_from_params(dict(job.params.get("run") or {})),
                progress=progress,
                chunk_size=IMPORT_CHUNK_BYTES,
            )
    except ImportCancelled:
        _finish(job_id, ComputeJob.Status.CANCELLED, "Cancelled: nothing imported.")
    except PayloadError as exc:
        _finish(job_id, ComputeJob.Status.FAILED, "Nothing imported: " + "; ".join(exc.messages()))
    except JsonInputError as exc:
        problem = str(exc).removeprefix("invalid JSON: ")
        _finish(job_id, ComputeJob.Status.FAILED, f"Nothing imported: not valid JSON: {problem}")
    except Exception as exc:  # the job must end in a visible state, whatever went wrong
        log.exception("ground-truth import job %s failed", job_id)
        _finish(job_id, ComputeJob.Status.FAILED, f"Nothing imported: {type(exc).__name__}: {exc}")
    else:
        result = summary_body(summary)
        count = summary.discussions_created + summary.discussions_existing
        ComputeJob.objects.filter(pk=job_id).update(
            params={**job.params, "result": result}, done=count, total=count
        )
        _finish(job_id, ComputeJob.Status.DONE, "")
    default_storage.delete(job.params["file"])
    job.refresh_from_db()
    return job


def summary_body(summary: ImportSummary) -> dict[str, Any]:
    """An import's summary as the API answers it and a job keeps it."""
    counts = {
        f.name: getattr(summary, f.name)
        for f in fields(summary)
        if f.name.endswith(("_created", "_existing", "_kept"))
    }
    return {**counts, "run": summary.run, "details": summary.details(), "message": summary.line()}


def _finish(job_id: int, status: str, error: str) -> None:
    ComputeJob.objects.filter(pk=job_id).update(
        status=status, error=error[:8000], finished_at=timezone.now()
    )


class _ProgressWriter:
    """Progress and heartbeat of an import, written on a connection of their own: the import
    runs in one transaction, whose writes nobody sees before it commits. (SQLite allows one
    writer at a time, so there progress shows at the end only.)"""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.connection: Any = None  # a connection of its own on a server database
        self.saved_at = 0.0

    def __enter__(self) -> _ProgressWriter:
        if connections[DEFAULT_DB_ALIAS].vendor != "sqlite":
            self.connection = connections.create_connection(DEFAULT_DB_ALIAS)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self.connection is not None:
            self.connection.close()

    def __call__(self, done: int, total: int) -> None:
        """``total`` 0: the file is being checked (the heartbeat goes on). Raises
        ImportCancelled once the job's cancel was asked for: the import rolls back."""
        last = total > 0 and done >= total
        if self.connection is None or (time.monotonic() - self.saved_at < 0.5 and not last):
            return
        table = ComputeJob._meta.db_table
        with self.connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET done = %s, total = %s, heartbeat_at = %s WHERE id = %s "
                "RETURNING cancel_requested",
                [done, total, timezone.now(), self.job_id],
            )
            cancelled = cursor.fetchone()
        self.saved_at = time.monotonic()
        if cancelled and cancelled[0]:
            raise ImportCancelled


class ImportCancelled(Exception):
    """The job's cancel was asked for while it imported."""
