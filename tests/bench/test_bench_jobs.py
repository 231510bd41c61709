"""The recompute jobs a benchmark starts (tests/bench/jobs.py): never another job handed back in
place of its own, a job that did not end done said, a job left running stopped; and a
benchmark's data deleted again when a worker wrote a row into it meanwhile."""

from __future__ import annotations

import pytest
from django.core.management import CommandError
from django.db import IntegrityError

from metrics.models import ComputeJob
from tests.bench import data
from tests.bench.jobs import recompute_job_done, recompute_job_start, recompute_job_stop
from tests.factories import ExtractionRunFactory

pytestmark = pytest.mark.django_db


def test_a_benchmark_does_not_time_a_job_left_active_by_another():
    left = recompute_job_start(ExtractionRunFactory().pk, queue=False)
    assert left.created

    with pytest.raises(CommandError, match=f"recompute job {left.pk} .* still active"):
        recompute_job_start(ExtractionRunFactory().pk, queue=False)

    recompute_job_stop(left)  # queued: cancelled at once
    assert ComputeJob.objects.get(pk=left.pk).status == ComputeJob.Status.CANCELLED
    assert recompute_job_start(ExtractionRunFactory().pk, queue=False).created


def test_a_job_that_did_not_end_done_is_said():
    job = recompute_job_start(ExtractionRunFactory().pk, queue=False)
    job.status, job.error = ComputeJob.Status.FAILED, "Traceback ...\nValueError: batch lost\n"
    with pytest.raises(CommandError, match=f"job {job.pk} ended failed: ValueError: batch lost"):
        recompute_job_done(job)
    job.status = ComputeJob.Status.DONE
    assert recompute_job_done(job) is job


def test_a_running_job_that_no_worker_stops_is_said():
    job = recompute_job_start(ExtractionRunFactory().pk, queue=False)
    ComputeJob.objects.filter(pk=job.pk).update(status=ComputeJob.Status.RUNNING)
    job.refresh_from_db()
    with pytest.raises(CommandError, match="did not stop"):
        recompute_job_stop(job, timeout=0.2)
    assert ComputeJob.objects.get(pk=job.pk).cancel_requested


def test_a_chunk_of_discussions_refused_by_a_row_written_meanwhile_is_deleted_again(
    monkeypatch,
):
    attempts: list[list[int]] = []

    class Discussions:
        refused = 1  # attempts the foreign key refuses

        def filter(self, pk__in):
            attempts.append(pk__in)
            return self

        def delete(self):
            if len(attempts) <= self.refused:
                raise IntegrityError("still referenced from table metrics_statementpiece")

    monkeypatch.setattr(data.Discussion, "objects", Discussions())
    monkeypatch.setattr(data.time, "sleep", lambda seconds: None)
    data._discussions_delete([1, 2])
    assert attempts == [[1, 2], [1, 2]]

    attempts.clear()
    Discussions.refused = 5
    with pytest.raises(IntegrityError):
        data._discussions_delete([3], attempts=2)
    assert len(attempts) == 2
