"""Every bad input a client can send gets a specific 4xx and stores nothing (never a 500).

One parametrised test per entry point: the REST API, the HTML JSON editor, the form editor,
integer parameters of the pages, evaluation uploads, the CLI import, and /api/ plumbing.
Each asserts the status, a message naming the problem, and unchanged row counts.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from audit.models import Discussion, Extraction, Feedback, FeedbackRevision, Speaker, Statement
from audit.services import feedback_start, feedback_submit
from metrics.models import ComputeJob, Evaluation, EvaluationFile
from tests.api_fixtures import make_discussion
from tests.audit.test_views_support import HX, make_scene
from tests.factories import SIMPLE_PDP

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures", "tests.metrics.test_evaluations_fixtures"]

MODELS = [
    Discussion,
    Speaker,
    Statement,
    Extraction,
    Feedback,
    FeedbackRevision,
    ComputeJob,
    Evaluation,
    EvaluationFile,
]
DEEP = "[" * 10_000 + "]" * 10_000
HUGE = "1" * 5000
WRONG_CONTAINERS = [{"events": 5}, {"people": True}, {"pair_bonds": {"a": 1}}]
CONTAINER_MESSAGES = [
    "events: expected array, got number 5",
    "people: expected array, got boolean True",
    "pair_bonds: expected array, got object",
]


CONTAINER_CASES = list(zip(WRONG_CONTAINERS, CONTAINER_MESSAGES, strict=True))


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS}


@pytest.fixture
def unchanged():
    """Yields nothing; fails if any row was added or removed meanwhile."""
    before = counts()
    yield
    assert counts() == before


def raw_json(client, method: str, url: str, body: str):
    return client.generic(method, url, body, content_type="application/json")


# --- PDP payloads: wrong containers, lone surrogates -------------------------------------------

SURROGATE_PAYLOADS = [
    ('{"people": [{"id": 1, "name": "\\ud800"}]}', "lone surrogate"),
    ('{"people": [{"id": 1, "\\udc00": "x"}]}', "lone surrogate"),
]


@pytest.fixture
def draft(world, auditor):
    return feedback_start(statement=world.subject2, auditor=auditor)


@pytest.mark.parametrize(("payload", "message"), CONTAINER_CASES)
def test_api_feedback_put_refuses_wrong_containers(api, auditor, draft, payload, message):
    body = {"edited_extraction": payload, "version": draft.version}
    with_counts = counts()
    response = api(auditor).put(f"/api/v1/feedback/{draft.pk}/", body, format="json")
    assert response.status_code == 400
    assert any(message in error for error in response.json()["errors"]), response.json()
    assert counts() == with_counts
    draft.refresh_from_db()
    assert draft.version == 1


@pytest.mark.parametrize(("text", "message"), SURROGATE_PAYLOADS)
def test_api_feedback_put_refuses_lone_surrogates(api, auditor, draft, unchanged, text, message):
    body = f'{{"edited_extraction": {text}, "version": 1}}'
    response = raw_json(api(auditor), "PUT", f"/api/v1/feedback/{draft.pk}/", body)
    assert response.status_code == 400
    assert message in response.json()["detail"]


@pytest.mark.parametrize(("payload", "message"), CONTAINER_CASES)
def test_api_discussion_post_refuses_wrong_containers(api, admin_user, payload, message):
    body = {
        "discussion": {"summary": "Doe", "external_id": "doe"},
        "statements": [{"text": "Hi.", "speaker_type": "subject", "pdp_deltas": payload}],
    }
    before = counts()
    response = api(admin_user).post("/api/v1/discussions/", body, format="json")
    assert response.status_code == 400
    assert any(message in error for error in response.json()["errors"]), response.json()
    assert counts() == before


@pytest.mark.parametrize(("payload", "message"), CONTAINER_CASES)
def test_api_extractions_post_refuses_wrong_containers(api, admin_user, world, payload, message):
    body = {"extractions": [{"statement": world.subject2.pk, "pdp_deltas": payload}]}
    before = counts()
    url = f"/api/v1/extraction-runs/{world.run.pk}/extractions/"
    response = api(admin_user).post(url, body, format="json")
    assert response.status_code == 400
    assert any(message in error for error in response.json()["errors"]), response.json()
    assert counts() == before


def _export_file(**statement_fields) -> dict:
    statement = {"id": 1, "order": 0, "text": "Hello.", "speaker_type": "Subject"}
    statement.update(statement_fields)
    return {
        "schema_version": "1",
        "exported_at": "2025-01-01T00:00:00Z",
        "discussions": [{"id": 5, "summary": "S", "statements": [statement]}],
    }


@pytest.mark.parametrize(
    "field",
    ["text", "speaker", "auditor"],
)
def test_ground_truth_import_refuses_lone_surrogates(api, admin_user, unchanged, field):
    if field == "auditor":
        data = _export_file(
            approved_feedback={"auditor": "SURROGATE", "edited_extraction": {}, "approved": True}
        )
    else:
        data = _export_file(**{field: "SURROGATE"})
    body = json.dumps(data).replace("SURROGATE", "a\\ud800b")
    response = raw_json(api(admin_user), "POST", "/api/v1/ground-truth/import", body)
    assert response.status_code == 400
    assert "lone surrogate (\\ud800)" in response.json()["detail"]


# --- the HTML JSON editor and the form editor ----------------------------------------------------


@pytest.fixture
def scene():
    return make_scene()


@pytest.fixture
def mine(scene, auditor):
    return feedback_start(statement=scene.first, auditor=auditor)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"people": ' + DEEP + "}", "nested deeper than 64 levels"),
        ('{"people": [{"id": ' + HUGE + "}]}", "(5000 digits) is out of range"),
        ('{"people": [{"id": 1, "confidence": NaN}]}', "NaN is not a JSON number"),
        ('{"people": [{"id": 1, "confidence": Infinity}]}', "Infinity is not a JSON number"),
        ('{"people": [{"id": 1, "confidence": 1e400}]}', "number 1e400 is out of range"),
        ('{"people": [{"id": 1, "name": "a\\u0000b"}]}', "NUL"),
        *SURROGATE_PAYLOADS,
        *[(json.dumps(p), m) for p, m in CONTAINER_CASES],
    ],
)
def test_json_editor_refuses_with_a_message(auditor_client, mine, unchanged, text, message):
    url = reverse("audit:feedback_json", args=[mine.pk])
    response = auditor_client.post(url, {"payload": text, "version": 1}, **HX)
    assert response.status_code == 422
    assert message in response.content.decode()
    mine.refresh_from_db()
    assert mine.version == 1


@pytest.mark.parametrize("field", ["people-0-name", "people-0-id", "events-0-description"])
def test_form_editor_refuses_nul_characters(auditor_client, mine, unchanged, field):
    data = {"version": 1, "people-0-id": "-1", "events-0-id": "-3", "events-0-kind": "shift"}
    data[field] = "Jo\x00hn"
    url = reverse("audit:feedback_save", args=[mine.pk])
    response = auditor_client.post(url, data, **HX)
    assert response.status_code == 422
    assert "NUL" in response.content.decode()
    mine.refresh_from_db()
    assert mine.version == 1


# --- integer parameters: one parser for every id and version ----------------------------------

BAD_IDS = ["²", "-1", "1.5", "\x00", "abc", "9" * 30]


WHOLE_NUMBER = "expected a positive whole number"
# The comparison takes a run (r12 or 12) or a configuration (c3) on either side.
RUN_OR_CONFIGURATION = "expected a run id (r12 or 12) or a configuration id (c3)"


@pytest.mark.parametrize("value", BAD_IDS)
@pytest.mark.parametrize(
    ("url", "name", "expected"),
    [
        ("/metrics/", "run", WHOLE_NUMBER),
        ("/audit/review/", "auditor", WHOLE_NUMBER),
        ("/metrics/runs/compare/", "left", RUN_OR_CONFIGURATION),
        ("/metrics/discussions/", "run", WHOLE_NUMBER),
        ("/metrics/errors/", "run", WHOLE_NUMBER),
        ("/metrics/evaluations/compare", "left", WHOLE_NUMBER),
    ],
)
def test_bad_id_in_a_query_is_400(admin_client, url, name, expected, value):
    response = admin_client.get(url, {name: value})
    assert response.status_code == 400
    assert f"{name}: {expected}" in response.content.decode()


@pytest.fixture
def submitted(scene, auditor):
    return feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )


@pytest.mark.parametrize("value", BAD_IDS)
def test_approve_with_a_bad_version_is_400(admin_client, submitted, unchanged, value):
    url = reverse("audit:feedback_approve", args=[submitted.pk])
    response = admin_client.post(url, {"version": value})
    assert response.status_code == 400
    assert "version: expected a positive whole number" in response.content.decode()
    submitted.refresh_from_db()
    assert submitted.status == Feedback.Status.SUBMITTED


@pytest.mark.parametrize("value", BAD_IDS)
def test_recompute_with_a_bad_run_is_400(admin_client, unchanged, value):
    response = admin_client.post(reverse("metrics:jobs"), {"run": value})
    assert response.status_code == 400
    assert "run: expected a positive whole number" in response.content.decode()


@pytest.mark.parametrize("value", ["abc", "²", ""])
def test_bulk_approve_with_a_bad_auditor_is_400(admin_client, submitted, unchanged, value):
    url = reverse("audit:bulk_approve", args=[submitted.statement.discussion_id])
    response = admin_client.post(url, {"auditor": value})
    assert response.status_code == 400
    assert "auditor: expected a positive whole number" in response.content.decode()
    submitted.refresh_from_db()
    assert submitted.status == Feedback.Status.SUBMITTED


# --- evaluation uploads ------------------------------------------------------------------------


def _agreement_upload(**extra) -> dict:
    from tests.metrics.test_evaluations_fixtures import example_bytes

    body = {
        "family": "agreement",
        "tests": SimpleUploadedFile("t.csv", example_bytes("agreement_tests.csv")),
    }
    body.update(extra)
    return body


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ('{"x": ' + DEEP + "}", "nested deeper than 64 levels"),
        ('{"seed": ' + HUGE + "}", "(5000 digits) is out of range"),
        ('{"seed": NaN}', "NaN is not a JSON number"),
    ],
)
def test_evaluation_api_refuses_absurd_options(api, admin_user, media, unchanged, options, message):
    response = api(admin_user).post(
        "/api/v1/evaluations/", _agreement_upload(options=options), format="multipart"
    )
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_evaluation_form_refuses_a_huge_seed(admin_client, media, unchanged):
    from tests.metrics.test_evaluations_fixtures import example_bytes

    data = {
        "family": "selective_prediction",
        "file_run": SimpleUploadedFile("run.json", example_bytes("selective_run.json")),
        "option_seed": HUGE,
    }
    response = admin_client.post(reverse("metrics:evaluation_upload"), data)
    assert response.status_code == 400
    assert "option &#x27;seed&#x27;: expected an integer" in response.content.decode()


@pytest.mark.parametrize(
    ("family", "role", "name", "data", "message"),
    [
        ("selective_prediction", "run", "deep.json", DEEP.encode(), "nested deeper than 64"),
        ("reasoning", "generations", "deep.jsonl", DEEP.encode(), "nested deeper than 64"),
        ("agreement", "tests", "nul.csv", b"Study,Effect\n1,\x002\n", "contains a NUL byte"),
    ],
)
def test_evaluation_upload_refuses_bad_files(
    api, admin_user, media, unchanged, family, role, name, data, message
):
    from tests.metrics.test_evaluations_fixtures import EXAMPLE_UPLOADS, example_bytes

    roles, options = EXAMPLE_UPLOADS[family]
    body: dict = {"family": family, "options": json.dumps(options)}
    for other, names in roles.items():
        files = [SimpleUploadedFile(n, example_bytes(n)) for n in names]
        body[other] = files if len(files) > 1 else files[0]
    body[role] = SimpleUploadedFile(name, data)
    response = api(admin_user).post("/api/v1/evaluations/", body, format="multipart")
    assert response.status_code == 400
    assert name in response.json()["detail"] and message in response.json()["detail"]


# --- the CLI import ------------------------------------------------------------------------------


def _file(**statement_fields) -> dict:
    statement = {"text": "My father John married Mary.", "speaker_type": "Subject"}
    statement.update(statement_fields)
    return {"discussion": {"external_id": "cli-1", "summary": "S"}, "statements": [statement]}


CLI_BAD_FILES = [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not UTF-8 text"),
    (b"[1, 2]", "expected a JSON object at the top level"),
    (b'{"discussions": 5}', "discussions: expected a list"),
    (json.dumps({"discussion": 5}).encode(), "expected an object"),
    (json.dumps({"discussion": {}, "statements": {"a": 1}}).encode(), "statements: expected a list"),
    (json.dumps(_file(pdp_deltas={"events": 5})).encode(), "pdp_deltas.events: expected array"),
    (json.dumps(_file(order=[1])).encode(), "order: expected an integer"),
    (json.dumps(_file(order=2**40)).encode(), "order: expected an integer from 0"),
    (json.dumps(_file(speaker={"n": 1})).encode(), "speaker: expected a string"),
    (json.dumps(_file(speaker="x" * 300)).encode(), "speaker: longer than 200"),
    (json.dumps(_file(approved_feedback={"auditor": 5, "edited_extraction": SIMPLE_PDP})).encode(),
     "approved_feedback.auditor: expected a string"),
    (json.dumps(_file(text="a\u0000b")).encode(), "NUL"),
    (json.dumps(_file(text="SUR")).replace("SUR", "\\ud800").encode(), "lone surrogate"),
    (("[" * 10_000).encode(), "nested deeper than 64"),
    (json.dumps({"discussion": {"external_id": {"a": 1}}}).encode(), "external_id: expected a text"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "message"), CLI_BAD_FILES)
def test_cli_import_names_the_problem_and_imports_nothing(
    tmp_path, admin_user, unchanged, content, message
):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(CommandError) as caught:
        call_command("import_discussions", str(path), "--by", admin_user.username)
    text = str(caught.value)
    assert "nothing imported" in text and message in text, text


def test_cli_import_refuses_a_run_name_too_long(tmp_path, admin_user, unchanged):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(_file()))
    with pytest.raises(CommandError, match=r"run\.model_name: longer than 200"):
        call_command(
            "import_discussions", str(path), "--run-model", "m" * 300, "--by", admin_user.username
        )


# --- JSON everywhere under /api/ -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/api/v1/feedback/1%0A/", "/api/v1/%0A", "/api/v1/discussions/x/"]
)
def test_unknown_api_paths_answer_json_404(api, admin_user, path):
    response = api(admin_user).get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert "No API endpoint" in response.json()["detail"]


def test_an_over_long_api_query_string_is_json_414(api, admin_user, settings):
    response = api(admin_user).get("/api/v1/discussions/?q=" + "x" * 20_000)
    assert response.status_code == 414
    assert response.json()["detail"].startswith("Query string too long")


def test_bad_id_under_api_answers_json(api, admin_user):
    make_discussion("Any")
    response = api(admin_user).get("/api/v1/discussions/", {"page": "²"})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
