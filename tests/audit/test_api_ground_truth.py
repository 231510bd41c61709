"""API: ground-truth export (sync and as a job), the published schema, import and round trip."""

import json

import jsonschema
import pytest

from audit.models import ComputeJob, Discussion, Feedback, Statement, history_purge
from metrics.families.payload.schema import GROUND_TRUTH_EXPORT_SCHEMA
from tests.api_fixtures import approve

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

EXPORT = "/api/v1/ground-truth/export"
IMPORT = "/api/v1/ground-truth/import"


@pytest.fixture
def approved(world, auditor, second_auditor, admin_user):
    """The world with the auditor's feedback on `subject` and one on `subject2` approved."""
    from audit.services import feedback_approve

    feedback_approve(feedback=world.mine, admin=admin_user)
    approve(world.subject2, auditor=second_auditor, admin=admin_user)
    return world


def download(response) -> dict:
    return json.loads(
        b"".join(response.streaming_content) if response.streaming else response.content
    )


# --- export ------------------------------------------------------------------------------------


def test_export_by_ids_is_an_attachment_that_follows_the_schema(api, admin_user, approved):
    response = api(admin_user).get(EXPORT, {"discussion_ids": f"{approved.discussion.pk}"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="ground-truth-')
    data = download(response)
    jsonschema.validate(data, GROUND_TRUTH_EXPORT_SCHEMA)
    assert data["schema_version"] == "1"
    [discussion] = data["discussions"]
    assert discussion["id"] == approved.discussion.pk
    by_order = {s["order"]: s for s in discussion["statements"]}
    assert by_order[0]["approved_feedback"] is None  # expert statement, for context
    assert by_order[1]["approved_feedback"]["auditor"] == "alice"
    assert by_order[1]["approved_feedback"]["approved_by"] == "carol"
    assert by_order[1]["pdp_deltas"] is not None
    run = approved.subject.extractions.get().run
    assert by_order[1]["extraction_run"] == {
        "model_name": "gpt-test",
        "prompt_version": "v1",
        "external_id": run.external_id,  # a re-import finds the run again by it
    }


def test_export_all(api, admin_user, approved):
    response = api(admin_user).get(EXPORT, {"all": "true"})
    assert response.status_code == 200
    # only discussions with approved ground truth
    assert [d["id"] for d in download(response)["discussions"]] == [approved.discussion.pk]


def test_export_with_run(api, admin_user, approved):
    from audit.models import Extraction, ExtractionRun
    from tests.factories import pdp

    other = ExtractionRun.objects.create(model_name="other", prompt_version="p2")
    Extraction.objects.create(statement=approved.subject, run=other, pdp_deltas=pdp())
    response = api(admin_user).get(EXPORT, {"all": "true", "run": other.pk})
    statements = download(response)["discussions"][0]["statements"]
    assert statements[1]["extraction_run"]["model_name"] == "other"
    assert statements[2]["pdp_deltas"] is None  # that run did not extract statement 2


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Choose what to export"),
        ({"all": "false"}, "Choose what to export"),
        ({"discussion_ids": "30,abc"}, "expected comma-separated integer ids"),
        ({"discussion_ids": ""}, "discussion_ids"),
        ({"discussion_ids": ",".join(map(str, range(1, 1500)))}, "at most 1000 ids"),
        ({"all": "yes please"}, "all"),
    ],
)
def test_export_bad_parameters_are_400_with_a_message(api, admin_user, approved, params, message):
    response = api(admin_user).get(EXPORT, params)
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_export_from_an_unknown_run_is_404(api, admin_user, approved):
    response = api(admin_user).get(EXPORT, {"all": "true", "run": "999999"})
    assert response.status_code == 404
    assert response.json()["errors"] == ["run: No extraction run 999999."]


def test_export_nothing_matching_is_404(api, admin_user, approved):
    response = api(admin_user).get(EXPORT, {"discussion_ids": str(approved.other_discussion.pk)})
    assert response.status_code == 404
    assert "No approved ground truth" in response.json()["detail"]
    assert api(admin_user).get(EXPORT, {"discussion_ids": "999999"}).status_code == 404


def test_export_is_admin_only(api, auditor, outsider, approved):
    assert api(auditor).get(EXPORT, {"all": "true"}).status_code == 403
    assert api(outsider).get(EXPORT, {"all": "true"}).status_code == 403
    assert api().get(EXPORT, {"all": "true"}).status_code == 401


def test_browser_session_can_download_the_export(client, admin_user, approved):
    client.force_login(admin_user)
    response = client.get(EXPORT + "?all=true", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")


# --- export as a background job ------------------------------------------------------------------


def test_large_export_runs_as_a_job(
    api, admin_user, approved, settings, django_capture_on_commit_callbacks
):
    settings.EXPORT_SYNC_MAX_STATEMENTS = 1
    client = api(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.get(EXPORT, {"all": "true"})
    assert response.status_code == 202
    body = response.json()
    job = ComputeJob.objects.get(pk=body["job_id"])
    assert job.kind == ComputeJob.Kind.EXPORT
    assert body["url"].endswith(f"/api/v1/jobs/{job.pk}/")
    assert body["download_url"].endswith(f"/api/v1/jobs/{job.pk}/download")

    status = client.get(body["url"]).json()
    assert status["status"] == "done"
    assert status["percent"] == 100
    assert status["download_url"] == body["download_url"]

    file = client.get(body["download_url"])
    assert file.status_code == 200
    assert file["Content-Disposition"].startswith("attachment")
    data = download(file)
    jsonschema.validate(data, GROUND_TRUTH_EXPORT_SCHEMA)
    assert len(data["discussions"]) == 1


def test_download_before_the_job_is_done_is_409(api, admin_user, approved, settings):
    settings.EXPORT_SYNC_MAX_STATEMENTS = 1
    client = api(admin_user)
    body = client.get(EXPORT, {"all": "true"}).json()  # the task is queued on commit: not run
    response = client.get(body["download_url"])
    assert response.status_code == 409
    assert "not ready" in response.json()["detail"]
    assert client.get(body["url"]).json()["status"] == "queued"
    assert client.get("/api/v1/jobs/999999/download").status_code == 404


def test_export_job_records_failure(admin_user, approved):
    from audit.services.export_jobs import ground_truth_export_job_run

    job = ComputeJob.objects.create(
        kind=ComputeJob.Kind.EXPORT, params={"discussion_ids": [999999]}, created_by=admin_user
    )
    job = ground_truth_export_job_run(job_id=job.pk)
    assert job.status == ComputeJob.Status.FAILED
    assert "No approved ground truth" in job.error
    assert not job.result_file


# --- schema, import, round trip ------------------------------------------------------------------


def test_ground_truth_schema_is_published(api):
    response = api().get("/api/schema/ground-truth.json")
    assert response.status_code == 200
    assert response.json() == GROUND_TRUTH_EXPORT_SCHEMA
    jsonschema.Draft202012Validator.check_schema(response.json())


def test_api_round_trip_export_then_import(api, admin_user, approved):
    client = api(admin_user)
    exported = download(client.get(EXPORT, {"all": "true"}))
    # Re-importing into the same site changes nothing (idempotent by external id).
    response = client.post(IMPORT, exported, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["discussions_existing"] == 1
    assert response.json()["discussions_created"] == 0

    # Into an empty site: the same ground truth comes back out.
    with history_purge():
        Feedback.objects.all().delete()
        Discussion.objects.all().delete()
    response = client.post(IMPORT, exported, format="json")
    assert response.status_code == 200
    summary = response.json()
    assert summary["discussions_created"] == 1
    assert summary["approved_created"] == 2
    again = download(client.get(EXPORT, {"all": "true"}))

    def essentials(data):
        return [
            (
                d["external_id"],
                d["summary"],
                [
                    (
                        s["order"],
                        s["text"],
                        s["speaker_type"],
                        s["pdp_deltas"],
                        s["approved_feedback"] and s["approved_feedback"]["edited_extraction"],
                        s["approved_feedback"] and s["approved_feedback"]["auditor"],
                    )
                    for s in d["statements"]
                ],
            )
            for d in data["discussions"]
        ]

    assert essentials(again) == essentials(exported)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["discussions"][0]["statements"][1].update(text=5), "text"),
        (lambda d: d["discussions"][0]["statements"][1].update(order=-5), "order"),
        (lambda d: d["discussions"][0].update(date="2025-02-30"), "discussions[0].date"),
        (
            lambda d: d["discussions"][0]["statements"][1]["approved_feedback"].update(
                approved_at="yesterday"
            ),
            "approved_feedback.approved_at",
        ),
        (
            lambda d: d["discussions"][0]["statements"][1]["approved_feedback"][
                "edited_extraction"
            ].update(people=[{"id": "x"}]),
            "edited_extraction.people[0].id",
        ),
    ],
)
def test_import_rejects_invalid_files_whole(api, admin_user, approved, mutate, message):
    client = api(admin_user)
    exported = download(client.get(EXPORT, {"all": "true"}))
    exported["discussions"][0]["external_id"] = "brand-new"
    mutate(exported)
    response = client.post(IMPORT, exported, format="json")
    assert response.status_code == 400
    assert any(message in e for e in response.json()["errors"]), response.json()
    assert not Discussion.objects.filter(external_id="brand-new").exists()
    assert Statement.objects.count() == 5


def test_import_is_admin_only(api, auditor):
    response = api(auditor).post(IMPORT, {"schema_version": "1"}, format="json")
    assert response.status_code == 403


def test_browser_gets_a_page_with_the_job_links_for_a_large_export(
    client, admin_user, approved, settings
):
    settings.EXPORT_SYNC_MAX_STATEMENTS = 1
    client.force_login(admin_user)
    response = client.get(EXPORT + "?all=true", HTTP_ACCEPT="text/html")
    assert response.status_code == 202
    assert response["Content-Type"].startswith("text/html")
    job = ComputeJob.objects.get()
    html = response.content.decode()
    assert f"/api/v1/jobs/{job.pk}/download" in html
