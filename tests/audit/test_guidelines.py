"""Coding guidelines: versions, the version a submitted feedback records, the export, the API."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.models import AuditLogEntry, GuidelineVersion
from audit.services import feedback_start, feedback_submit
from audit.services.errors import NotAllowed, WorkflowError, WrongState
from audit.services.exports import ground_truth_export
from audit.services.guidelines import MAX_GUIDELINES, guideline_current, guideline_save
from tests.api_fixtures import approve, make_discussion

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

URL = "/api/v1/guidelines/"


def test_each_save_is_a_new_immutable_version_and_logged(admin_user):
    first = guideline_save(text="# v1", admin=admin_user)
    second = guideline_save(text="# v2", note="clearer", admin=admin_user, base_number=1)
    assert (first.number, second.number) == (1, 2)
    assert guideline_current() == second
    first.refresh_from_db()
    assert first.text == "# v1"
    first.text = "changed"
    with pytest.raises(ValueError, match="immutable"):
        first.save()
    log = AuditLogEntry.objects.filter(action="guidelines").order_by("id")
    assert [e.details["number"] for e in log] == [1, 2]
    assert "clearer" in log.last().message


def test_saving_the_same_text_saves_nothing(admin_user):
    first = guideline_save(text="same", admin=admin_user)
    assert guideline_save(text="same", admin=admin_user) == first
    assert GuidelineVersion.objects.count() == 1


def test_a_save_based_on_an_old_version_is_refused(admin_user):
    guideline_save(text="one", admin=admin_user)
    guideline_save(text="two", admin=admin_user, base_number=1)
    with pytest.raises(WrongState, match="current version is v2"):
        guideline_save(text="three", admin=admin_user, base_number=1)
    assert GuidelineVersion.objects.count() == 2


def test_only_admins_write_guidelines(auditor):
    with pytest.raises(NotAllowed):
        guideline_save(text="x", admin=auditor)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "must not be empty"),
        ("   \n", "must not be empty"),
        ("a\x00b", "NUL"),
        ("a\ud800b", "lone surrogate"),
        ("x" * (MAX_GUIDELINES + 1), "at most"),
        (42, "expected the guidelines as a string"),
    ],
)
def test_bad_text_is_refused_naming_the_problem(admin_user, text, message):
    with pytest.raises(WorkflowError, match=message):
        guideline_save(text=text, admin=admin_user)
    assert not GuidelineVersion.objects.exists()


def test_a_submitted_feedback_records_the_version_in_force(auditor, admin_user):
    _, (_, subject, later) = make_discussion("Smith")
    assert (
        feedback_submit(
            feedback=feedback_start(statement=subject, auditor=auditor), user=auditor
        ).guideline_version
        is None
    )  # none saved yet
    v1 = guideline_save(text="v1", admin=admin_user)
    feedback = feedback_submit(
        feedback=feedback_start(statement=later, auditor=auditor), user=auditor
    )
    guideline_save(text="v2", admin=admin_user)
    feedback.refresh_from_db()
    assert feedback.guideline_version == v1  # a later version does not change it


def test_the_export_carries_every_version_and_each_feedbacks(auditor, admin_user):
    guideline_save(text="v1", admin=admin_user)
    discussion, (_, subject, _) = make_discussion("Smith")
    approve(subject, auditor=auditor, admin=admin_user)
    guideline_save(text="v2", note="n", admin=admin_user)
    exported = ground_truth_export(discussion_ids=[discussion.pk])
    assert [g["version"] for g in exported["guidelines"]] == [1, 2]
    assert exported["guidelines"][1]["note"] == "n"
    statement = next(s for s in exported["discussions"][0]["statements"] if s["id"] == subject.pk)
    assert statement["approved_feedback"]["guideline_version"] == 1


# --- API -------------------------------------------------------------------------------------


def test_api_admin_saves_and_everyone_reads(api, admin_user, auditor):
    response = api(admin_user).post(
        URL, {"text": "# G\n\n<b>x</b>", "note": "first"}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["version"] == 1
    assert "&lt;b&gt;" in response.json()["html"]
    again = api(admin_user).post(URL, {"text": "# G\n\n<b>x</b>"}, format="json")
    assert again.status_code == 200 and again.json()["version"] == 1
    listed = api(auditor).get(URL).json()
    assert [v["version"] for v in listed["results"]] == [1]
    assert api(auditor).get(URL + "current/").json()["text"].startswith("# G")
    assert api(auditor).get(URL + "1/").json()["note"] == "first"
    assert api(auditor).get(URL + "9/").status_code == 404


def test_api_current_is_404_before_the_first(api, auditor):
    assert api(auditor).get(URL + "current/").status_code == 404


def test_api_roles(api, auditor, outsider):
    assert api(auditor).post(URL, {"text": "x"}, format="json").status_code == 403
    assert api(outsider).get(URL).status_code == 403
    assert api().get(URL).status_code == 401
    assert not GuidelineVersion.objects.exists()


def test_api_stale_base_version_is_409(api, admin_user):
    guideline_save(text="one", admin=admin_user)
    response = api(admin_user).post(URL, {"text": "two", "base_version": 0}, format="json")
    assert response.status_code == 409
    assert "current version is v1" in response.json()["detail"]


def post_raw(client, body: str):
    return client.generic("POST", URL, body, content_type="application/json")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"text": 42}, "text"),
        ({"text": ["a"]}, "text"),
        ({"text": "x", "note": 1}, "note"),
        ({"text": "x", "base_version": "1"}, "base_version"),
        ({"text": "x", "base_version": -1}, "base_version"),
        ({"text": ""}, "text"),
        ({"text": "x" * (MAX_GUIDELINES + 1)}, "text"),
        ({"text": "x", "colour": "red"}, "colour"),
    ],
)
def test_api_bad_input_is_400_naming_the_field(api, admin_user, body, field):
    response = api(admin_user).post(URL, body, format="json")
    assert response.status_code == 400, response.json()
    assert field in json.dumps(response.json())
    assert not GuidelineVersion.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [
        '{"text": "a\\u0000b"}',
        '{"text": "a\\ud800b"}',
        '{"text": ' + "[" * 200 + "]" * 200 + "}",
        '{"text": "x",',
    ],
)
def test_api_nul_surrogates_deep_and_broken_json_are_400(api, admin_user, raw):
    response = post_raw(api(admin_user), raw)
    assert response.status_code == 400
    assert response.json()["detail"]
    assert not GuidelineVersion.objects.exists()


# --- pages -----------------------------------------------------------------------------------


def test_page_admin_previews_and_saves(admin_client):
    preview = admin_client.post(
        "/audit/guidelines/preview/", {"text": "**bold** <script>x</script>"}
    )
    assert b"<strong>bold</strong>" in preview.content
    assert b"<script>x" not in preview.content
    response = admin_client.post("/audit/guidelines/", {"text": "# Rules", "note": "n", "base": ""})
    assert response.status_code == 302
    page = admin_client.get("/audit/guidelines/")
    assert b"<h1>Rules</h1>" in page.content and b"Save as a new version" in page.content
    assert admin_client.get("/audit/guidelines/v1/").status_code == 200


def test_page_auditor_reads_but_cannot_save(auditor_client, admin_user):
    guideline_save(text="# Rules", admin=admin_user)
    page = auditor_client.get("/audit/guidelines/")
    assert b"<h1>Rules</h1>" in page.content and b"Save as a new version" not in page.content
    assert auditor_client.post("/audit/guidelines/", {"text": "x"}).status_code == 403
    assert auditor_client.post("/audit/guidelines/preview/", {"text": "x"}).status_code == 403
    assert GuidelineVersion.objects.count() == 1


def test_page_bad_text_is_a_4xx_naming_it(admin_client):
    response = admin_client.post("/audit/guidelines/", {"text": "  "})
    assert response.status_code == 400
    assert b"must not be empty" in response.content


def test_the_openapi_schema_lists_the_new_endpoints(client):
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    for path in (
        "/api/v1/guidelines/",
        "/api/v1/guidelines/current/",
        "/api/v1/guidelines/{number}/",
        "/api/v1/statements/{id}/comments/",
        "/api/v1/statements/{id}/comments/read/",
        "/api/v1/inbox/",
    ):
        assert path in paths, path
    assert (
        "post" in paths["/api/v1/guidelines/"]
        and "post" in paths["/api/v1/statements/{id}/comments/"]
    )


def test_api_feedback_names_its_guideline_version(api, auditor, admin_user):
    guideline_save(text="v1", admin=admin_user)
    _, (_, subject, _) = make_discussion("Smith")
    feedback = feedback_start(statement=subject, auditor=auditor)
    assert api(auditor).get(f"/api/v1/feedback/{feedback.pk}/").json()["guideline_version"] is None
    response = api(auditor).post(f"/api/v1/feedback/{feedback.pk}/submit/", {}, format="json")
    assert response.json()["guideline_version"] == 1


def test_a_page_with_the_guideline_panel_reads_the_version_in_force_once(
    auditor_client, admin_user
):
    guideline_save(text="# Code what is said\n\nNothing else.", admin=admin_user)
    discussion, _ = make_discussion("panel")
    url = reverse("audit:discussion", args=[discussion.pk])
    auditor_client.get(url)

    with CaptureQueriesContext(connection) as queries:
        html = auditor_client.get(url).content.decode()

    reads = [q["sql"] for q in queries.captured_queries if "audit_guidelineversion" in q["sql"]]
    assert len(reads) == 1, reads
    assert "<h1>Code what is said</h1>" in html and "v1" in html
    guideline_save(text="# Newer", admin=admin_user, base_number=1)
    assert "<h1>Newer</h1>" in auditor_client.get(url).content.decode()
