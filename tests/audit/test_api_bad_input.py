"""API: malformed input gets a specific 4xx, never a 500, and a rejected request stores nothing."""

import json

import pytest

from audit.models import Discussion, Extraction, ExtractionRun
from metrics.families.payload.schema import PayloadError, PayloadIssue
from tests.factories import pdp

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

RUNS = "/api/v1/extraction-runs/"


def post_raw(client, url, body: bytes | str, content_type="application/json"):
    return client.generic("POST", url, body, content_type=content_type)


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/discussions/",
        RUNS,
        "/api/v1/feedback/",
        "/api/v1/ground-truth/import",
        "/api/v1/recompute/",
    ],
)
def test_malformed_json_is_400_naming_the_problem(api, admin_user, url):
    response = post_raw(api(admin_user), url, '{"model_name": "m", ')
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")


def test_non_utf8_body_is_400(api, admin_user):
    response = post_raw(api(admin_user), RUNS, b'{"model_name": "\xff"}')
    assert response.status_code == 400


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', "null", "42"])
def test_json_that_is_not_an_object_is_400(api, admin_user, body):
    response = post_raw(api(admin_user), RUNS, body)
    assert response.status_code == 400
    assert "detail" in response.json()


def test_form_encoded_body_is_415(api, admin_user):
    response = post_raw(api(admin_user), RUNS, "model_name=m", "application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert "Unsupported media type" in response.json()["detail"]


def test_oversized_body_is_413_with_a_message(api, admin_user, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"model_name": "m", "prompt_version": "p", "notes": "x" * 2000})
    response = post_raw(api(admin_user), RUNS, body)
    assert response.status_code == 413
    assert "too large" in response.json()["detail"]
    assert not ExtractionRun.objects.exists()


def test_nul_characters_are_refused(api, admin_user):
    body = json.dumps({"model_name": "m\u0000", "prompt_version": "p"})
    response = post_raw(api(admin_user), RUNS, body)
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]


@pytest.mark.parametrize("depth", [100, 100_000])
def test_absurdly_nested_json_is_400(api, admin_user, depth):
    body = '{"model_name": "m", "prompt_version": "p", "notes": ' + "[" * depth + "]" * depth + "}"
    response = post_raw(api(admin_user), RUNS, body)
    assert response.status_code == 400
    assert "nested deeper than 64 levels" in response.json()["detail"]


def test_nan_is_refused(api, admin_user):
    response = post_raw(api(admin_user), RUNS, '{"model_name": NaN, "prompt_version": "p"}')
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model_name": 5, "prompt_version": "p"}, "model_name: Not a valid string."),
        ({"model_name": ["m"], "prompt_version": "p"}, "model_name: Not a valid string."),
        ({"model_name": "m"}, "prompt_version: This field is required"),
        (
            {"model_name": "m", "prompt_version": None},
            "prompt_version: This field may not be null.",
        ),
        ({"model_name": "m" * 201, "prompt_version": "p"}, "no more than 200 characters"),
    ],
)
def test_wrong_types_and_missing_fields_are_named(api, admin_user, body, message):
    response = api(admin_user).post(RUNS, body, format="json")
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not ExtractionRun.objects.exists()


@pytest.mark.parametrize("value", [True, 1.5, "3", 0, -4])
def test_ids_must_be_positive_json_integers(api, auditor, world, value):
    response = api(auditor).post("/api/v1/feedback/", {"statement": value}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0].startswith("statement:")


def test_integers_beyond_64_bits_are_refused_while_parsing(api, auditor, world):
    response = api(auditor).post("/api/v1/feedback/", {"statement": 2**70}, format="json")
    assert response.status_code == 400
    assert "1180591620717411303424 is out of range" in response.json()["detail"]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/discussions/99999999999999999999999/",
        "/api/v1/feedback/?statement=99999999999999999999999",
        "/api/v1/extractions/?run=1e3",
    ],
)
def test_out_of_range_ids_are_4xx(api, admin_user, url):
    assert api(admin_user).get(url).status_code in (400, 404)


def test_bulk_payload_must_be_a_list_of_objects(api, admin_user, world):
    url = f"{RUNS}{world.run.pk}/extractions/"
    for body, message in [
        ({"extractions": {"statement": 1}}, "extractions: Expected a list of items"),
        ({"extractions": []}, "extractions: Ensure this field has at least 1 elements."),
        ({"extractions": ["x"]}, "extractions[0]: Invalid data."),
        ({"extractions": [{"statement": world.subject.pk}]}, "extractions[0].pdp_deltas"),
    ]:
        response = api(admin_user).post(url, body, format="json")
        assert response.status_code == 400, body
        assert message in response.json()["detail"], response.json()


def test_a_rejected_request_stores_nothing(api, admin_user, world, monkeypatch):
    """The view's transaction rolls back whatever a service wrote before refusing."""
    import audit.api.discussions

    def writes_then_refuses(*, run, items):
        Extraction.objects.create(statement=world.subject, run=run, pdp_deltas=pdp())
        raise PayloadError([PayloadIssue("[0]", "refused late")])

    run = ExtractionRun.objects.create(model_name="m", prompt_version="p")
    monkeypatch.setattr(audit.api.discussions, "extractions_import", writes_then_refuses)
    body = {"extractions": [{"statement": world.subject.pk, "pdp_deltas": pdp()}]}
    response = api(admin_user).post(f"{RUNS}{run.pk}/extractions/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == ["[0]: refused late"]
    assert not Extraction.objects.filter(run=run).exists()


def test_unknown_methods_are_405(api, admin_user, world):
    client = api(admin_user)
    assert client.delete(f"/api/v1/discussions/{world.discussion.pk}/").status_code == 405
    assert client.patch(f"/api/v1/feedback/{world.mine.pk}/", {}, format="json").status_code == 405
    assert Discussion.objects.filter(pk=world.discussion.pk).exists()
