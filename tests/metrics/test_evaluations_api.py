"""POST/GET /api/v1/evaluations/: the same service as the upload page, behind the API roles."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from metrics.evaluations import services
from metrics.models import Evaluation
from tests.metrics.test_evaluations_fixtures import (
    EXAMPLE_UPLOADS,
    example_bytes,
    example_files,
    stored_files,
)

pytest_plugins = ["tests.api_fixtures", "tests.metrics.test_evaluations_fixtures"]
pytestmark = pytest.mark.django_db
URL = "/api/v1/evaluations/"


def _multipart(family: str, **extra) -> dict:
    roles, options = EXAMPLE_UPLOADS[family]
    body: dict = {"family": family, "options": json.dumps(options)}
    for role, names in roles.items():
        files = [SimpleUploadedFile(name, example_bytes(name)) for name in names]
        body[role] = files if len(files) > 1 else files[0]
    body.update(extra)
    return body


@pytest.mark.parametrize("family", list(EXAMPLE_UPLOADS))
def test_admin_uploads_and_reads_the_artifact(
    family, api, admin_user, auditor, media, run_on_commit
):
    with run_on_commit():
        response = api(admin_user).post(URL, _multipart(family, name="via api"), format="multipart")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["family"] == family and body["name"] == "via api"
    assert body["status"] == "queued"  # as answered, before the task ran on commit
    assert {f["role"] for f in body["files"]} == set(EXAMPLE_UPLOADS[family][0])

    detail = api(auditor).get(body["url"])
    assert detail.status_code == 200
    data = detail.json()
    assert data["status"] == "done", data["error"]
    assert data["artifact"] == Evaluation.objects.get(pk=body["id"]).artifact
    assert data["artifact_url"].endswith(f"/metrics/evaluations/{body['id']}/artifact.json")


def test_two_runs_in_one_role_field(api, admin_user, media, run_on_commit):
    data = example_bytes("selective_run.json")
    body = {
        "family": "selective_prediction",
        "options": json.dumps(
            {"mode": "zero_shot", "second_mode": "few_shot", "bootstrap_resamples": 50}
        ),
        "run": [SimpleUploadedFile("a.json", data), SimpleUploadedFile("b.json", data)],
    }
    with run_on_commit():
        response = api(admin_user).post(URL, body, format="multipart")
    assert response.status_code == 201, response.json()
    evaluation = Evaluation.objects.get()
    assert [f.original_name for f in evaluation.files.all()] == ["a.json", "b.json"]
    assert evaluation.artifact["comparison"]["enabled"] is True


def test_a_bad_file_answers_400_naming_it_and_stores_nothing(api, admin_user, media):
    body = _multipart("verdicts")
    body["ground_truth"] = SimpleUploadedFile("gt.json", b'{"restaurants": [1, 2]')
    response = api(admin_user).post(URL, body, format="multipart")
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert detail.startswith("gt.json (ground_truth) at line 1"), detail
    assert not Evaluation.objects.exists() and stored_files(media) == []


def test_oversized_file_answers_400(settings, api, admin_user, media):
    settings.EVALUATION_MAX_FILE_BYTES = 50
    response = api(admin_user).post(URL, _multipart("agreement"), format="multipart")
    assert response.status_code == 400
    assert (
        "agreement_tests.csv: file is 1,207 bytes; the limit is 50 bytes"
        in (response.json()["detail"])
    )
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ('{"speed": 3}', "option 'speed': unknown option for agreement"),
        ('{"composite_finding_ids": "perhaps"}', "option 'composite_finding_ids'"),
        ("[1]", "options: expected a JSON object"),
        ("{oops", "options: invalid JSON"),
    ],
)
def test_bad_options_answer_400(api, admin_user, media, options, message):
    response = api(admin_user).post(
        URL, _multipart("agreement", options=options), format="multipart"
    )
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not Evaluation.objects.exists()


def test_unknown_family_and_missing_file_answer_400(api, admin_user, media):
    response = api(admin_user).post(URL, {"family": "astrology"}, format="multipart")
    assert response.status_code == 400 and "family" in response.json()["detail"]
    response = api(admin_user).post(URL, {"family": "agreement"}, format="multipart")
    assert response.status_code == 400
    assert "tests: required file" in response.json()["detail"]


def test_permissions(api, auditor, outsider, media):
    assert api(auditor).post(URL, _multipart("agreement"), format="multipart").status_code == 403
    assert api().post(URL, _multipart("agreement"), format="multipart").status_code == 401
    assert api().get(URL).status_code == 401
    assert api(outsider).get(URL).status_code == 403
    assert api(auditor).get(URL).status_code == 200
    assert not Evaluation.objects.exists()


def test_list_filters(api, auditor, media, run_on_commit):
    with run_on_commit():
        services.evaluation_create(
            family="agreement", name="alpha", files=example_files("agreement"), options={}
        )
    services.evaluation_create(
        family="verdicts", name="beta", files=example_files("verdicts"), options={}
    )
    client = api(auditor)
    assert client.get(URL).json()["count"] == 2
    assert [e["name"] for e in client.get(URL, {"family": "verdicts"}).json()["results"]] == [
        "beta"
    ]
    assert [e["name"] for e in client.get(URL, {"status": "done"}).json()["results"]] == ["alpha"]
    assert [e["name"] for e in client.get(URL, {"q": "ALP"}).json()["results"]] == ["alpha"]
    assert "artifact" not in client.get(URL).json()["results"][0]
    assert client.get(URL, {"status": "lost"}).status_code == 400


def test_retry_through_the_api(api, admin_user, auditor, media, run_on_commit):
    evaluation = services.evaluation_create(
        family="agreement", name="x", files=example_files("agreement"), options={}
    )
    services.evaluation_record_failure(evaluation_id=evaluation.pk, error="boom")
    retry = f"{URL}{evaluation.pk}/retry/"
    assert api(auditor).post(retry).status_code == 403
    with run_on_commit():
        response = api(admin_user).post(retry)
    assert response.status_code == 202
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE
    again = api(admin_user).post(retry)
    assert (
        again.status_code == 400 and "Only a failed or queued evaluation" in again.json()["detail"]
    )


def test_the_example_run_uploads_with_default_options_as_on_the_page(api, admin_user, media):
    """One default for the page, the API and the command: no mode is the file's first."""
    body = {
        "family": "selective_prediction",
        "run": SimpleUploadedFile("selective_run.json", example_bytes("selective_run.json")),
    }
    response = api(admin_user).post(URL, body, format="multipart")
    assert response.status_code == 201, response.json()
    assert Evaluation.objects.get().options["mode"] == "zero_shot"
