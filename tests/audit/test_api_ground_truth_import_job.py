"""Ground-truth imports larger than IMPORT_SYNC_MAX_BYTES run as a background job."""

import copy
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from audit.models import ComputeJob, Discussion, Feedback, Statement, history_purge
from audit.services import feedback_approve, import_jobs
from audit.services.jobs import compute_job_cancel
from tests.api_fixtures import approve
from tests.audit.test_api_ground_truth import EXPORT, IMPORT, download

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]


@pytest.fixture
def exported(api, world, auditor, second_auditor, admin_user):
    """An export of two approved ground truths, taken from a site then emptied."""
    feedback_approve(feedback=world.mine, admin=admin_user)
    approve(world.subject2, auditor=second_auditor, admin=admin_user)
    data = download(api(admin_user).get(EXPORT, {"all": "true"}))
    with history_purge():
        Feedback.objects.all().delete()
        Discussion.objects.all().delete()
    return data


@pytest.fixture
def large(settings):
    settings.IMPORT_SYNC_MAX_BYTES = 100


def test_a_large_import_answers_202_and_the_job_imports_it(
    api, admin_user, exported, large, django_capture_on_commit_callbacks
):
    client = api(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(IMPORT, exported, format="json")

    assert response.status_code == 202, response.content
    body = response.json()
    job = ComputeJob.objects.get(pk=body["job_id"])
    assert job.kind == ComputeJob.Kind.IMPORT and job.created_by == admin_user
    assert body["url"].endswith(f"/api/v1/jobs/{job.pk}/")
    status = client.get(body["url"]).json()
    assert (status["status"], status["done"], status["total"], status["percent"]) == (
        "done",
        1,
        1,
        100,
    )
    assert status["result"]["discussions_created"] == 1
    assert status["result"]["approved_created"] == 2
    assert Feedback.objects.approved().count() == 2


def test_a_small_import_is_done_in_the_request(api, admin_user, exported):
    response = api(admin_user).post(IMPORT, exported, format="json")
    assert response.status_code == 200 and response.json()["discussions_created"] == 1
    assert not ComputeJob.objects.filter(kind=ComputeJob.Kind.IMPORT).exists()


def test_the_same_file_sent_twice_gets_the_same_job(api, admin_user, exported, large):
    client = api(admin_user)
    first = client.post(IMPORT, exported, format="json").json()  # queued on commit: not run
    second = client.post(IMPORT, exported, format="json").json()
    assert first["job_id"] == second["job_id"]
    assert ComputeJob.objects.filter(kind=ComputeJob.Kind.IMPORT).count() == 1


def test_a_bad_large_file_fails_its_job_and_imports_nothing(
    api, admin_user, exported, large, django_capture_on_commit_callbacks
):
    exported["discussions"][0]["statements"][1]["approved_feedback"]["approved_at"] = "yesterday"
    client = api(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        body = client.post(IMPORT, exported, format="json").json()

    status = client.get(body["url"]).json()
    assert status["status"] == "failed" and status["result"] is None
    assert status["error"].startswith("Nothing imported")
    assert "approved_feedback.approved_at" in status["error"]
    assert Statement.objects.count() == 0


def test_malformed_json_is_refused_in_the_request(api, admin_user, large):
    response = api(admin_user).post(
        IMPORT, data=json.dumps({"a": 1})[:-1] + " " * 200, content_type="application/json"
    )
    assert response.status_code == 400
    assert not ComputeJob.objects.exists()


# --- the job reads the stored file a discussion at a time -------------------------------------


@pytest.fixture
def three(exported) -> dict:
    """The export with its discussion three times over (other ids), two approvals each."""
    [first] = exported["discussions"]
    exported["discussions"] = [
        {**copy.deepcopy(first), "id": 9000 + i, "external_id": f"copy-{i}"} for i in range(3)
    ]
    return exported


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Every value of the file crosses chunk boundaries."""
    monkeypatch.setattr(import_jobs, "IMPORT_CHUNK_BYTES", 7)


def _run_job(client, data, capture) -> dict:
    with capture(execute=True):
        body = client.post(IMPORT, data, format="json").json()
    return client.get(body["url"]).json()


def test_the_job_streams_a_file_of_many_discussions_in_tiny_chunks(
    api, admin_user, three, large, tiny_chunks, django_capture_on_commit_callbacks
):
    status = _run_job(api(admin_user), three, django_capture_on_commit_callbacks)
    assert (status["status"], status["done"], status["total"]) == ("done", 3, 3), status
    assert status["result"]["discussions_created"] == 3
    assert status["result"]["approved_created"] == 6
    assert sorted(Discussion.objects.values_list("external_id", flat=True)) == [
        "copy-0",
        "copy-1",
        "copy-2",
    ]


@pytest.mark.parametrize(
    ("spoil", "where"),
    [
        (
            lambda d: d["statements"][1]["approved_feedback"].update(approved_at="yesterday"),
            "discussions[2].statements[1].approved_feedback.approved_at",
        ),
        (lambda d: d.update(summary=5), "discussions[2].summary"),
    ],
)
def test_a_bad_third_discussion_fails_the_job_and_imports_nothing(
    api, admin_user, three, large, tiny_chunks, django_capture_on_commit_callbacks, spoil, where
):
    spoil(three["discussions"][2])
    status = _run_job(api(admin_user), three, django_capture_on_commit_callbacks)
    assert status["status"] == "failed" and status["result"] is None
    assert status["error"].startswith("Nothing imported") and where in status["error"]
    assert Discussion.objects.count() == 0 and Statement.objects.count() == 0


def test_a_stored_file_that_is_not_json_fails_its_job_saying_where(
    admin_user, large, django_capture_on_commit_callbacks
):
    body = b'{"schema_version": "1",\n "discussions": [\n  {"id": 1,, "summary": ""}]}'
    body += b" " * 200
    with django_capture_on_commit_callbacks(execute=False):
        outcome = import_jobs.ground_truth_import_start(user=admin_user, body=body)
    assert outcome.job is not None
    job = import_jobs.ground_truth_import_job_run(job_id=outcome.job.pk)
    assert job.status == ComputeJob.Status.FAILED
    assert job.error == (
        "Nothing imported: not valid JSON: "
        "Expecting property name enclosed in double quotes (line 3 column 12)"
    )


def test_the_import_page_shows_a_large_files_progress_and_then_its_summary(
    client, admin_user, three, large, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    upload = SimpleUploadedFile("three.json", json.dumps(three).encode())
    with django_capture_on_commit_callbacks(execute=False):
        page = client.post(reverse("audit:import"), {"file": upload})
    job = ComputeJob.objects.get(kind=ComputeJob.Kind.IMPORT)
    polled = reverse("audit:job_progress", args=[job.pk])
    html = page.content.decode()
    assert f'hx-get="{polled}"' in html and "Waiting for a worker" in html
    import_jobs.ground_truth_import_job_run(job_id=job.pk)
    done = client.get(polled).content.decode()
    assert "hx-get" not in done  # done: it stops polling
    assert "3/3 discussions imported · 100%" in done
    assert 'data-testid="import-summary"' in done and "3 discussions created" in done


@pytest.mark.django_db(transaction=True)  # the job's progress is written on a connection of its own
def test_an_import_job_cancelled_while_it_runs_imports_nothing(
    admin_user, three, large, monkeypatch
):
    monkeypatch.setattr(import_jobs, "_queue_import", lambda job_id: None)  # run below
    outcome = import_jobs.ground_truth_import_start(
        user=admin_user, body=json.dumps(three).encode()
    )
    assert outcome.job is not None
    checked = []
    real = import_jobs.discussions_import_file

    def cancelled_once_running(**kwargs):
        job = ComputeJob.objects.get(pk=outcome.job.pk)
        checked.append(job.status)
        compute_job_cancel(job=job)  # running: its task stops at its next progress
        return real(**kwargs)

    monkeypatch.setattr(import_jobs, "discussions_import_file", cancelled_once_running)
    job = import_jobs.ground_truth_import_job_run(job_id=outcome.job.pk)
    assert checked == [ComputeJob.Status.RUNNING]
    assert (job.status, job.error) == (ComputeJob.Status.CANCELLED, "Cancelled: nothing imported.")
    assert not Discussion.objects.exists()
