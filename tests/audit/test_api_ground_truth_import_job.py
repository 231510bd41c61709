"""Ground-truth imports larger than IMPORT_SYNC_MAX_BYTES run as a background job."""

import json

import pytest

from audit.models import ComputeJob, Discussion, Feedback, Statement
from audit.services import feedback_approve
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
