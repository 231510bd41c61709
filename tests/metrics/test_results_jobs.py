"""Recompute-all jobs: progress, cancellation, and the admin-only job pages."""

from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse

from audit.services.jobs import compute_job_cancel
from metrics.engine.recompute import (
    compute_job_run,
    jobs,
    metrics_recompute_all,
    results_recompute_stale,
)
from metrics.models import ComputeJob, MetricResult
from tests.metrics.extraction_helpers import (
    run_row,
)

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("only_extraction_results", "one_item_batches"),
]
Job = ComputeJob.Status


def test_recompute_all_processes_every_result_and_reports_progress(approved, admin_user):
    seen = []
    job = metrics_recompute_all(user=admin_user, queue=False)
    job = compute_job_run(job_id=job.pk, progress=lambda done, total: seen.append((done, total)))

    # 6 statements, 2 discussions, 1 run, the system result.
    assert (job.status, job.done, job.total, job.percent) == (Job.DONE, 10, 10, 100)
    assert seen == [(n, 10) for n in range(1, 11)]
    assert job.started_at and job.finished_at and job.elapsed_seconds >= 0
    assert job.eta_seconds is None  # finished
    assert not MetricResult.objects.exclude(status=MetricResult.Status.FRESH).exists()
    assert run_row(approved.run).values["n_statements"] == 6


def test_queued_job_runs_on_the_worker_after_commit(approved, admin_user, run_committed):
    job = run_committed(metrics_recompute_all, user=admin_user)
    job.refresh_from_db()
    assert job.status == Job.DONE and job.created_by == admin_user


def test_an_active_job_is_returned_instead_of_starting_another(admin_user):
    first = metrics_recompute_all(user=admin_user)  # hooks not run: stays queued
    assert metrics_recompute_all(user=admin_user) == first


def test_eta_while_running():
    job = ComputeJob(kind=ComputeJob.Kind.RECOMPUTE, status=Job.RUNNING, total=10, done=4)
    job.started_at = job.created_at = None
    from django.utils import timezone

    job.started_at = timezone.now() - timezone.timedelta(seconds=8)
    assert job.percent == 40
    assert job.eta_seconds == pytest.approx(12, abs=0.5)


def test_cancelling_a_running_job_stops_it_between_items(approved, admin_user):
    job = metrics_recompute_all(user=admin_user, queue=False)
    real = jobs._batch_compute
    calls = []

    def compute_then_cancel(items, *, force, **kwargs):
        calls.extend(items)
        real(items, force=force, **kwargs)
        if len(calls) == 3:
            compute_job_cancel(job=ComputeJob.objects.get(pk=job.pk))

    with mock.patch.object(jobs, "_batch_compute", side_effect=compute_then_cancel):
        job = compute_job_run(job_id=job.pk)

    assert (job.status, job.done, len(calls)) == (Job.CANCELLED, 3, 3)
    # What it did not reach stays stale for the sweep.
    assert run_row(approved.run).status == MetricResult.Status.STALE
    results_recompute_stale()
    assert run_row(approved.run).status == MetricResult.Status.FRESH
    assert run_row(approved.run).values["n_statements"] == 6


def test_cancelling_a_queued_job_stops_it_before_it_starts(admin_user):
    job = metrics_recompute_all(user=admin_user)
    job = compute_job_cancel(job=job)
    assert job.status == Job.CANCELLED and job.finished_at
    assert compute_job_run(job_id=job.pk).done == 0  # a late delivery does nothing


def test_a_job_runs_once_even_if_delivered_twice(approved, admin_user):
    job = metrics_recompute_all(user=admin_user, queue=False)
    compute_job_run(job_id=job.pk)
    with mock.patch.object(jobs, "_batch_compute") as compute:
        compute_job_run(job_id=job.pk)
    compute.assert_not_called()


def test_a_job_that_crashes_is_recorded_as_failed(admin_user):
    job = metrics_recompute_all(user=admin_user, queue=False)
    with mock.patch.object(jobs, "_expected_items", side_effect=RuntimeError("no db")):
        job = compute_job_run(job_id=job.pk)
    assert job.status == Job.FAILED and "RuntimeError: no db" in job.error


def test_recompute_only_one_run(approved, admin_user):
    job = metrics_recompute_all(run_id=approved.run.pk, queue=False)
    job = compute_job_run(job_id=job.pk)
    assert job.status == Job.DONE and job.params["run_id"] == approved.run.pk


# --- pages -----------------------------------------------------------------------------------


def test_admin_sees_the_page_and_starts_a_job(client, admin_user, approved, run_committed):
    client.force_login(admin_user)
    page = client.get(reverse("metrics:jobs"))
    assert page.status_code == 200 and b"Recompute all" in page.content
    assert b"hx-headers" in page.content and b"X-CSRFToken" in page.content

    response = run_committed(client.post, reverse("metrics:jobs"), {"run": ""})
    assert response.status_code == 302
    assert ComputeJob.objects.get().status == Job.DONE


@pytest.mark.parametrize("persona", ["auditor", "outsider"])
def test_job_pages_are_admin_only(client, request, persona, admin_user):
    job = metrics_recompute_all(user=admin_user)
    client.force_login(request.getfixturevalue(persona))
    assert client.get(reverse("metrics:jobs")).status_code == 403
    assert client.post(reverse("metrics:jobs")).status_code == 403
    assert client.get(reverse("audit:job_progress", args=[job.pk])).status_code == 403
    assert client.post(reverse("audit:job_cancel", args=[job.pk])).status_code == 403
    assert ComputeJob.objects.count() == 1
    assert not ComputeJob.objects.get().cancel_requested


def test_anonymous_users_are_sent_to_log_in(client, admin_user):
    job = metrics_recompute_all(user=admin_user)
    for url in (reverse("metrics:jobs"), reverse("audit:job_progress", args=[job.pk])):
        response = client.get(url)
        assert response.status_code == 302 and reverse("login") in response["Location"]
    assert client.post(reverse("audit:job_cancel", args=[job.pk])).status_code == 302
    assert ComputeJob.objects.get().status == Job.QUEUED


def test_progress_partial_polls_every_second_while_active(admin_client, admin_user):
    job = metrics_recompute_all(user=admin_user)
    ComputeJob.objects.filter(pk=job.pk).update(status=Job.RUNNING, total=8, done=2)
    html = admin_client.get(reverse("audit:job_progress", args=[job.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in html and "2/8" in html and "25%" in html
    assert "<html" not in html and "Cancel" in html

    ComputeJob.objects.filter(pk=job.pk).update(status=Job.DONE, done=8)
    html = admin_client.get(reverse("audit:job_progress", args=[job.pk])).content.decode()
    assert "hx-trigger" not in html and "Cancel" not in html


def test_the_page_shows_the_running_job_after_a_reload(admin_client, admin_user):
    job = metrics_recompute_all(user=admin_user)
    ComputeJob.objects.filter(pk=job.pk).update(status=Job.RUNNING, total=4, done=1)
    html = admin_client.get(reverse("metrics:jobs")).content.decode()
    assert f'id="job-{job.pk}"' in html and 'hx-trigger="every 1s"' in html
    assert "Recompute all</button>" not in html  # no second job while one runs


def test_htmx_start_returns_the_panel_and_cancel_returns_the_progress(admin_client):
    response = admin_client.post(reverse("metrics:jobs"), {"run": ""}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and 'id="jobs-panel"' in html and "<html" not in html
    job = ComputeJob.objects.get()  # hooks not run: still queued, so the panel polls it
    assert f'id="job-{job.pk}"' in html

    cancelled = admin_client.post(
        reverse("audit:job_cancel", args=[job.pk]), HTTP_HX_REQUEST="true"
    )
    assert "Cancelled" in cancelled.content.decode()
    assert admin_client.get(reverse("audit:job_cancel", args=[job.pk])).status_code == 405


def test_posts_need_the_csrf_token(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    assert client.post(reverse("metrics:jobs"), {"run": ""}).status_code == 403
    client.get(reverse("metrics:jobs"))  # sets the CSRF cookie, as the page does
    token = client.cookies["csrftoken"].value
    response = client.post(reverse("metrics:jobs"), {"run": ""}, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 302


def test_a_queued_job_shows_no_progress_yet(admin_client, admin_user):
    """Nothing counted yet is 0 %, not 100 % of nothing; done with nothing to do is 100 %."""
    job = metrics_recompute_all(user=admin_user)
    assert (job.status, job.total, job.percent) == (Job.QUEUED, 0, 0)
    html = admin_client.get(reverse("audit:job_progress", args=[job.pk])).content.decode()
    assert "0/0" not in html and "100%" not in html and "Waiting for a worker" in html
    job.status = Job.DONE
    assert job.percent == 100


def test_progress_card_and_recent_jobs_come_from_one_poll(admin_client, admin_user):
    """On the jobs page the panel (card and table) polls as one, so both say the same."""
    job = metrics_recompute_all(user=admin_user)
    ComputeJob.objects.filter(pk=job.pk).update(status=Job.RUNNING, total=235, done=226)
    page = admin_client.get(reverse("metrics:jobs")).content.decode()
    panel = page[page.index('id="jobs-panel"') :]
    assert panel.count("hx-trigger") == 1  # the panel's own, not a second one on the card
    html = admin_client.get(reverse("metrics:jobs"), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in html and 'id="jobs-panel"' in html
    assert html.count("226/235") == 2 and html.count("Running") == 2
    assert "Queued" not in html


def test_the_old_job_addresses_redirect_to_audit_keeping_the_method(admin_client, admin_user):
    job = metrics_recompute_all(user=admin_user)
    answer = admin_client.get(f"/metrics/jobs/{job.pk}/progress/")
    assert answer.status_code == 308
    assert answer["Location"] == reverse("audit:job_progress", args=[job.pk])
    answer = admin_client.post(f"/metrics/jobs/{job.pk}/cancel/", follow=True)
    assert answer.redirect_chain[0] == (reverse("audit:job_cancel", args=[job.pk]), 308)
    assert ComputeJob.objects.get().status == Job.CANCELLED


def test_the_page_lists_imports_and_exports_and_follows_a_running_import(admin_client, admin_user):
    """The import page sends a large file's job here: it shows with its progress and polls."""
    running = ComputeJob.objects.create(
        kind=ComputeJob.Kind.IMPORT, status=Job.RUNNING, total=40, done=10, created_by=admin_user
    )
    exported = ComputeJob.objects.create(kind=ComputeJob.Kind.EXPORT, status=Job.DONE, total=3)
    html = admin_client.get(reverse("metrics:jobs")).content.decode()
    assert f'id="job-{running.pk}"' in html and "10/40 discussions imported" in html
    assert 'hx-trigger="every 1s"' in html and "Recompute all</button>" in html
    assert "Ground-truth export" in html
    assert reverse("api-job-download", args=[exported.pk]) in html

    ComputeJob.objects.filter(pk=running.pk).update(status=Job.DONE, done=40)
    html = admin_client.get(reverse("metrics:jobs"), HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in html and "Ground-truth import" in html


def test_an_active_job_older_than_the_recent_ones_still_shows_with_them(admin_client, admin_user):
    """The page reads the recent jobs and the active ones together: a running export older
    than the ten newest jobs keeps its progress card, and the table lists the ten newest."""
    old = ComputeJob.objects.create(kind=ComputeJob.Kind.EXPORT, status=Job.RUNNING, total=9)
    ComputeJob.objects.filter(pk=old.pk).update(done=4)
    for _ in range(12):
        ComputeJob.objects.create(kind=ComputeJob.Kind.RECOMPUTE, status=Job.DONE)
    html = admin_client.get(reverse("metrics:jobs")).content.decode()
    assert f'id="job-{old.pk}"' in html and "4/9" in html
    table = html[html.index("Recent jobs") :]
    assert table.count("<tr><td>") == 10 and f"<tr><td>{old.pk}</td>" not in table


def test_the_active_jobs_name_who_started_them_read_together(admin_client, admin_user):
    """Only an active job's card names who started it: their users are read in one query
    when there are active jobs, none when there are none."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ComputeJob.objects.create(
        kind=ComputeJob.Kind.RECOMPUTE, status=Job.DONE, created_by=admin_user
    )
    with CaptureQueriesContext(connection) as idle:
        admin_client.get(reverse("metrics:jobs"))
    for kind in (ComputeJob.Kind.IMPORT, ComputeJob.Kind.EXPORT):
        ComputeJob.objects.create(kind=kind, status=Job.RUNNING, total=9, created_by=admin_user)
    with CaptureQueriesContext(connection) as busy:
        html = admin_client.get(reverse("metrics:jobs")).content.decode()
    assert html.count(f"started by {admin_user.get_username()}") == 2
    assert len(busy) == len(idle) + 1
    assert not [
        q
        for q in idle.captured_queries
        if '"auth_user"' in q["sql"] and "metrics_computejob" in q["sql"]
    ]
