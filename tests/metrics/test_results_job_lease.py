"""Jobs can't get stuck: a heartbeat lease, resume or fail after the worker is lost, cancel
that works on a dead job, and at most one active job per scope in the database."""

from datetime import timedelta
from unittest import mock

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.services.jobs import compute_job_cancel
from metrics.engine.recompute import (
    MAX_JOB_ATTEMPTS,
    compute_job_run,
    compute_jobs_recover,
    jobs,
    metrics_recompute_all,
)
from metrics.models import ComputeJob, MetricResult

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("only_extraction_results", "one_item_batches"),
]
Job = ComputeJob.Status


@pytest.fixture
def short_lease(settings):
    settings.JOB_LEASE_SECONDS = 5


def killed_after(job: ComputeJob, items: int) -> ComputeJob:
    """Run the job until ``items`` are done, then lose the worker: no more heartbeats."""

    class WorkerKilled(BaseException):  # not an Exception: nothing records it, like SIGKILL
        pass

    real, calls = jobs._batch_compute, []

    def compute_then_die(batch, *, force, **kwargs):
        if len(calls) == items:
            raise WorkerKilled
        calls.extend(batch)
        real(batch, force=force, **kwargs)

    with (
        mock.patch.object(jobs, "_batch_compute", side_effect=compute_then_die),
        pytest.raises(WorkerKilled),
    ):
        compute_job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def expire_lease(job: ComputeJob) -> None:
    ComputeJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=60))


def test_a_running_job_writes_heartbeats_and_progress(approved, admin_user, short_lease):
    job = killed_after(metrics_recompute_all(user=admin_user, queue=False), items=4)
    assert (job.status, job.done, job.attempt) == (Job.RUNNING, 4, 1)
    assert timezone.now() - job.heartbeat_at < timedelta(seconds=5)
    assert compute_jobs_recover() == {}  # lease still valid: left alone


def test_a_job_whose_worker_died_is_resumed_from_what_is_done(approved, admin_user, short_lease):
    job = killed_after(metrics_recompute_all(user=admin_user, queue=False), items=4)
    expire_lease(job)
    computed = []
    real_batch, real_item = jobs._batch_compute, jobs._item_compute

    def spy_batch(batch, *, force, **kwargs):
        computed.extend(batch)
        real_batch(batch, force=force, **kwargs)

    def spy_item(item, *, force):
        computed.append(item)
        real_item(item, force=force)

    with (
        mock.patch.object(jobs, "_batch_compute", side_effect=spy_batch),
        mock.patch.object(jobs, "_item_compute", side_effect=spy_item),
    ):
        counts = compute_jobs_recover()  # eager: the resumed job runs now

    job.refresh_from_db()
    assert counts == {"job_resumed": 1}
    assert (job.status, job.attempt, job.done, job.total) == (Job.DONE, 2, 10, 10)
    assert len(computed) == 6  # only what the first run had not done
    assert not MetricResult.objects.exclude(status=MetricResult.Status.FRESH).exists()


def test_a_job_losing_its_worker_again_and_again_is_marked_failed(admin_user, short_lease):
    job = metrics_recompute_all(user=admin_user, queue=False)
    ComputeJob.objects.filter(pk=job.pk).update(status=Job.RUNNING, attempt=MAX_JOB_ATTEMPTS)
    expire_lease(job)

    assert compute_jobs_recover() == {"job_failed": 1}
    job.refresh_from_db()
    assert job.status == Job.FAILED and "worker running this job stopped" in job.error
    assert metrics_recompute_all(user=admin_user, queue=False).pk != job.pk


def test_an_export_whose_worker_died_is_marked_failed(admin_user, short_lease):
    job = ComputeJob.objects.create(
        kind=ComputeJob.Kind.EXPORT, status=Job.RUNNING, started_at=timezone.now(), attempt=1
    )
    expire_lease(job)
    assert compute_jobs_recover() == {"job_failed": 1}
    job.refresh_from_db()
    assert job.status == Job.FAILED and job.finished_at


def test_a_task_that_lost_its_lease_stops_and_leaves_the_job_alone(
    approved, admin_user, short_lease
):
    job = metrics_recompute_all(user=admin_user, queue=False)
    real = jobs._batch_compute

    def taken_over_after_two(batch, *, force, **kwargs):
        real(batch, force=force, **kwargs)
        if ComputeJob.objects.get(pk=job.pk).done >= 2:
            # The sweep took it for dead and another worker claimed it.
            ComputeJob.objects.filter(pk=job.pk).update(attempt=2)

    with mock.patch.object(jobs, "_batch_compute", side_effect=taken_over_after_two):
        compute_job_run(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.attempt) == (Job.RUNNING, 2)  # not marked done by the old task
    assert job.done < 10


def test_cancel_stops_a_job_whose_worker_is_gone(approved, admin_user, short_lease):
    job = killed_after(metrics_recompute_all(user=admin_user, queue=False), items=2)
    compute_job_cancel(job=job)
    job.refresh_from_db()
    assert job.status == Job.RUNNING and job.cancel_requested  # alive for all we know

    expire_lease(job)
    job = compute_job_cancel(job=job)
    assert job.status == Job.CANCELLED and job.finished_at
    assert metrics_recompute_all(user=admin_user, queue=False).pk != job.pk


def test_the_database_refuses_a_second_active_job_in_one_scope(admin_user):
    metrics_recompute_all(user=admin_user, queue=False)
    with pytest.raises(IntegrityError), transaction.atomic():
        ComputeJob.objects.create(kind=ComputeJob.Kind.RECOMPUTE, scope="recompute")
    # Finished jobs and unscoped jobs (exports) are not limited.
    ComputeJob.objects.create(kind=ComputeJob.Kind.RECOMPUTE, scope="recompute", status=Job.DONE)
    ComputeJob.objects.create(kind=ComputeJob.Kind.EXPORT)
    ComputeJob.objects.create(kind=ComputeJob.Kind.EXPORT)


def test_a_start_racing_another_gets_the_other_job_back(admin_user):
    first = metrics_recompute_all(user=admin_user, queue=False)
    # The second start checked before the first committed: it saw no active job.
    real_filter, calls = ComputeJob.objects.filter, []

    def first_check_sees_nothing(*args, **kwargs):
        calls.append(kwargs)
        return ComputeJob.objects.none() if len(calls) == 1 else real_filter(*args, **kwargs)

    with mock.patch.object(ComputeJob.objects, "filter", side_effect=first_check_sees_nothing):
        second = metrics_recompute_all(user=admin_user, queue=False)
    assert second.pk == first.pk and not second.created
    assert ComputeJob.objects.filter(status__in=[Job.QUEUED, Job.RUNNING]).count() == 1


def test_the_job_page_and_api_say_a_job_was_resumed(admin_client, admin_user):
    job = metrics_recompute_all(user=admin_user, queue=False)
    ComputeJob.objects.filter(pk=job.pk).update(status=Job.RUNNING, attempt=2)
    page = admin_client.get(f"/audit/jobs/{job.pk}/progress/").content.decode()
    assert "resumed after its worker was lost (attempt 2)" in page
    assert admin_client.get(f"/api/v1/jobs/{job.pk}/").json()["attempt"] == 2


def test_the_command_refuses_to_start_beside_a_running_job(admin_user):
    from django.core.management import CommandError, call_command

    job = metrics_recompute_all(user=admin_user, queue=False)
    ComputeJob.objects.filter(pk=job.pk).update(status=Job.RUNNING, heartbeat_at=timezone.now())
    with pytest.raises(CommandError, match=f"job {job.pk} is already running"):
        call_command("recompute_metrics")
    assert ComputeJob.objects.count() == 1
