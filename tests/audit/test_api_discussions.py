"""API: discussions, extraction runs and extractions — permissions, pagination, filters, writes."""

import pytest

from audit.models import (
    BlindReview,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    Statement,
)
from tests.api_fixtures import approve, make_discussion
from tests.factories import SIMPLE_PDP, pdp

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

DISCUSSIONS = "/api/v1/discussions/"
RUNS = "/api/v1/extraction-runs/"


def new_discussion(external_id="pipe-1", **extra) -> dict:
    return {
        "discussion": {"summary": "Doe family", "external_id": external_id, "date": "2025-01-15"},
        "statements": [
            {"text": "Tell me about your parents.", "speaker_type": "expert", "speaker": "Coach"},
            {
                "text": "My father John married Mary.",
                "speaker_type": "subject",
                "pdp_deltas": SIMPLE_PDP,
            },
        ],
        **extra,
    }


# --- permissions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        DISCUSSIONS,
        RUNS,
        "/api/v1/extractions/",
        "/api/v1/feedback/",
        "/api/v1/metric-results/",
        "/api/v1/jobs/",
        "/api/v1/ground-truth/export?all=true",
    ],
)
def test_anonymous_gets_401_with_token_challenge(api, url):
    response = api().get(url)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["detail"]


@pytest.mark.parametrize("url", [DISCUSSIONS, RUNS, "/api/v1/feedback/", "/api/v1/metric-results/"])
def test_user_in_no_role_group_gets_403(api, outsider, url):
    response = api(outsider).get(url)
    assert response.status_code == 403
    assert "no role" in response.json()["detail"]


def test_invalid_token_is_401(api):
    client = api()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert api().get(DISCUSSIONS).status_code == 401
    assert client.get(DISCUSSIONS).status_code == 401


def test_session_auth_works_for_the_browser(client, auditor, world):
    client.force_login(auditor)
    response = client.get(DISCUSSIONS)
    assert response.status_code == 200
    assert response.json()["count"] == 2


def test_session_auth_writes_need_csrf(admin_user, world):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(admin_user)
    response = browser.post(RUNS, {"model_name": "m", "prompt_version": "p"}, "application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_auditor_reads_discussions_but_cannot_create(api, auditor, world):
    client = api(auditor)
    assert client.get(DISCUSSIONS).status_code == 200
    assert client.get(f"{DISCUSSIONS}{world.discussion.pk}/").status_code == 200
    response = client.post(DISCUSSIONS, new_discussion(), format="json")
    assert response.status_code == 403
    assert not Discussion.objects.filter(external_id="pipe-1").exists()


def test_auditor_cannot_create_runs_or_extractions(api, auditor, world):
    client = api(auditor)
    assert client.get(RUNS).status_code == 200
    assert (
        client.post(RUNS, {"model_name": "m", "prompt_version": "p"}, format="json").status_code
        == 403
    )
    url = f"{RUNS}{world.run.pk}/extractions/"
    body = {"extractions": [{"statement": world.subject.pk, "pdp_deltas": pdp()}]}
    assert client.post(url, body, format="json").status_code == 403


def test_auditor_reads_the_ai_extractions_their_editor_shows(api, auditor, admin_user, world):
    """What the editor shows, without starting a draft; blind-sample statements stay hidden."""
    client = api(auditor)
    drafts = Feedback.objects.count()
    one = client.get("/api/v1/extractions/", {"statement": world.subject2.pk}).json()
    assert [e["pdp_deltas"] for e in one["results"]] == [
        world.subject2.extractions.get().pdp_deltas
    ]
    assert Feedback.objects.count() == drafts
    BlindReview.objects.create(statement=world.subject2, marked_by=admin_user)
    for url in ("/api/v1/extractions/", f"{RUNS}{world.run.pk}/extractions/"):
        shown = {e["statement"] for e in client.get(url).json()["results"]}
        assert shown == {world.subject.pk}, url
        everything = {e["statement"] for e in api(admin_user).get(url).json()["results"]}
        assert everything == {world.subject.pk, world.subject2.pk}, url


# --- discussions -------------------------------------------------------------------------------


def test_discussion_list_is_paginated_in_id_order(api, auditor):
    for index in range(5):
        make_discussion(f"family {index}", n_subject=1)
    client = api(auditor)
    first = client.get(DISCUSSIONS, {"page_size": 2}).json()
    assert first["count"] == 5
    assert len(first["results"]) == 2
    assert first["next"] and first["previous"] is None
    second = client.get(first["next"]).json()
    ids = [d["id"] for d in first["results"] + second["results"]]
    assert ids == sorted(ids)
    assert client.get(DISCUSSIONS, {"page": 99}).status_code == 404


def test_discussion_filters(api, auditor, admin_user, second_auditor, world):
    approve(world.subject2, auditor=second_auditor, admin=admin_user)
    client = api(auditor)
    with_gt = client.get(DISCUSSIONS, {"has_approved": "true"}).json()["results"]
    assert [d["id"] for d in with_gt] == [world.discussion.pk]
    assert with_gt[0]["n_approved"] == 1 and with_gt[0]["n_statements"] == 3
    without = client.get(DISCUSSIONS, {"has_approved": "false"}).json()["results"]
    assert [d["id"] for d in without] == [world.other_discussion.pk]
    by_external = client.get(DISCUSSIONS, {"external_id": world.other_discussion.external_id})
    assert [d["id"] for d in by_external.json()["results"]] == [world.other_discussion.pk]
    bad = client.get(DISCUSSIONS, {"has_approved": "maybe"})
    assert bad.status_code == 400
    assert "has_approved" in bad.json()["errors"][0]


def test_discussion_detail_has_statements_in_order(api, auditor, world):
    body = api(auditor).get(f"{DISCUSSIONS}{world.discussion.pk}/").json()
    assert [s["order"] for s in body["statements"]] == [0, 1, 2]
    assert body["statements"][0]["speaker_type"] == "expert"
    assert body["statements"][1]["speaker_type"] == "subject"
    assert "pdp_deltas" not in body["statements"][1]  # blind reviews must not see the AI
    assert api(auditor).get(f"{DISCUSSIONS}999999/").status_code == 404


def test_admin_creates_discussion_with_statements_and_extractions(api, admin_user):
    run = ExtractionRun.objects.create(model_name="gpt-5", prompt_version="p7")
    response = api(admin_user).post(DISCUSSIONS, new_discussion(run=run.pk), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["created"] is True
    assert body["external_id"] == "pipe-1"
    assert body["date"] == "2025-01-15"
    assert [s["speaker"] for s in body["statements"]] == ["Coach", "Subject"]
    discussion = Discussion.objects.get(pk=body["id"])
    extraction = Extraction.objects.get(statement__discussion=discussion)
    assert extraction.run == run
    assert extraction.pdp_deltas["people"][0]["name"] == "John"


def test_creating_the_same_discussion_again_is_idempotent(api, admin_user):
    client = api(admin_user)
    assert client.post(DISCUSSIONS, new_discussion(), format="json").status_code == 201
    again = client.post(DISCUSSIONS, new_discussion(), format="json")
    assert again.status_code == 200
    assert again.json()["created"] is False
    assert Discussion.objects.count() == 1
    assert Statement.objects.count() == 2


def test_discussion_without_external_id_gets_one(api, admin_user):
    data = new_discussion()
    del data["discussion"]["external_id"]
    body = api(admin_user).post(DISCUSSIONS, data, format="json").json()
    assert len(body["external_id"]) == 32


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["statements"][1].update(speaker_type="narrator"), "speaker_type"),
        (lambda d: d["statements"][1].update(text=5), "statements[1].text"),
        (lambda d: d["statements"][1].update(order=-1), "order"),
        (lambda d: d["discussion"].pop("summary"), "discussion.summary"),
        (lambda d: d["discussion"].update(date="2025-13-45"), "discussion.date"),
        (
            lambda d: d["statements"][1]["pdp_deltas"]["events"][0].update(kind="party"),
            "events[0].kind: 'party' is not one of",
        ),
    ],
)
def test_invalid_discussion_is_rejected_whole(api, admin_user, mutate, message):
    data = new_discussion()
    data["statements"][1]["pdp_deltas"] = {**SIMPLE_PDP, "events": [dict(SIMPLE_PDP["events"][0])]}
    mutate(data)
    response = api(admin_user).post(DISCUSSIONS, data, format="json")
    assert response.status_code == 400
    body = response.json()
    assert message in body["detail"] or any(message in e for e in body.get("errors", []))
    assert Discussion.objects.count() == 0
    assert Statement.objects.count() == 0


def test_repeated_orders_are_a_rule_not_a_malformed_body(api, admin_user):
    data = new_discussion()
    for statement in data["statements"]:
        statement["order"] = 1
    response = api(admin_user).post(DISCUSSIONS, data, format="json")
    assert response.status_code == 422
    assert response.json()["errors"] == ["statements: statement orders repeat"]
    assert Discussion.objects.count() == 0


def test_discussion_naming_an_unknown_run_is_404(api, admin_user):
    data = new_discussion()
    data["run"] = 999999
    response = api(admin_user).post(DISCUSSIONS, data, format="json")
    assert response.status_code == 404
    assert response.json()["errors"] == ["run: No extraction run 999999."]
    assert Discussion.objects.count() == 0


# --- extraction runs ---------------------------------------------------------------------------


def test_runs_list_filters_and_orders_by_id(api, auditor):
    a = ExtractionRun.objects.create(model_name="m1", prompt_version="p1")
    b = ExtractionRun.objects.create(model_name="m2", prompt_version="p1")
    client = api(auditor)
    assert [r["id"] for r in client.get(RUNS).json()["results"]] == [a.pk, b.pk]
    only = client.get(RUNS, {"model_name": "m2"}).json()["results"]
    assert [r["id"] for r in only] == [b.pk]
    assert client.get(f"{RUNS}{a.pk}/").json()["label"] == "m1 · p1"


def test_admin_registers_runs_and_bad_fields_are_named(api, admin_user):
    client = api(admin_user)
    created = client.post(RUNS, {"model_name": "gpt-5", "prompt_version": "p8"}, format="json")
    assert created.status_code == 201
    bad = client.post(RUNS, {"model_name": "", "prompt_version": 8}, format="json")
    assert bad.status_code == 400
    assert {e.split(":")[0] for e in bad.json()["errors"]} == {"model_name", "prompt_version"}


# --- extractions -------------------------------------------------------------------------------


def test_bulk_extractions_for_a_whole_discussion(api, admin_user, world):
    run = ExtractionRun.objects.create(model_name="gpt-5", prompt_version="p9")
    items = [
        {"statement": world.subject.pk, "pdp_deltas": SIMPLE_PDP},
        {"statement": world.subject2.pk, "pdp_deltas": pdp()},
    ]
    response = api(admin_user).post(
        f"{RUNS}{run.pk}/extractions/", {"extractions": items}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["count"] == 2
    assert Extraction.objects.filter(run=run).count() == 2
    listed = api(admin_user).get(f"{RUNS}{run.pk}/extractions/").json()
    assert listed["count"] == 2
    assert listed["results"][0]["discussion"] == world.discussion.pk


def test_bulk_extractions_are_all_or_nothing(api, admin_user, world):
    run = ExtractionRun.objects.create(model_name="gpt-5", prompt_version="p9")
    items = [
        {"statement": world.subject.pk, "pdp_deltas": SIMPLE_PDP},
        {"statement": world.expert.pk, "pdp_deltas": pdp()},
        {"statement": 999999, "pdp_deltas": pdp()},
        {"statement": world.subject2.pk, "pdp_deltas": {"people": [{"name": "no id"}]}},
    ]
    response = api(admin_user).post(
        f"{RUNS}{run.pk}/extractions/", {"extractions": items}, format="json"
    )
    assert response.status_code == 400  # the malformed item decides the status; all are named
    errors = response.json()["errors"]
    assert any("[1].statement: only subject statements" in e for e in errors)
    assert any("[2].statement: no statement 999999" in e for e in errors)
    assert any("[3].pdp_deltas.people[0]: missing required field 'id'" in e for e in errors)
    assert not Extraction.objects.filter(run=run).exists()


@pytest.mark.parametrize(
    ("statement", "status", "message"),
    [("expert", 409, "[0].statement: only subject statements"), (None, 404, "no statement 999999")],
)
def test_well_formed_extractions_naming_the_wrong_statement(
    api, admin_user, world, statement, status, message
):
    run = ExtractionRun.objects.create(model_name="gpt-5", prompt_version="p9")
    target = getattr(world, statement).pk if statement else 999999
    body = {"extractions": [{"statement": target, "pdp_deltas": pdp()}]}
    response = api(admin_user).post(f"{RUNS}{run.pk}/extractions/", body, format="json")
    assert response.status_code == status
    assert any(message in e for e in response.json()["errors"])
    assert not Extraction.objects.filter(run=run).exists()


def test_repeated_ids_with_an_expert_statement_answer_409_naming_both(api, admin_user, world):
    run = ExtractionRun.objects.create(model_name="gpt-5", prompt_version="p9")
    payload = {"people": [{"id": -1, "name": "Ann"}, {"id": -1, "name": "Bob"}]}
    body = {"extractions": [{"statement": world.expert.pk, "pdp_deltas": payload}]}
    response = api(admin_user).post(f"{RUNS}{run.pk}/extractions/", body, format="json")
    assert response.status_code == 409
    errors = response.json()["errors"]
    assert any("people[1].id: duplicate id -1" in e for e in errors)
    assert any("[0].statement: only subject statements" in e for e in errors)
    body = {"extractions": [{"statement": world.subject.pk, "pdp_deltas": payload}]}
    response = api(admin_user).post(f"{RUNS}{run.pk}/extractions/", body, format="json")
    assert response.status_code == 422


def test_bulk_extractions_for_unknown_run_is_404(api, admin_user, world):
    body = {"extractions": [{"statement": world.subject.pk, "pdp_deltas": pdp()}]}
    assert (
        api(admin_user).post(f"{RUNS}999999/extractions/", body, format="json").status_code == 404
    )


def test_extractions_filters(api, admin_user, world):
    other_run = ExtractionRun.objects.create(model_name="other", prompt_version="x")
    Extraction.objects.create(statement=world.subject, run=other_run, pdp_deltas=pdp())
    client = api(admin_user)
    assert client.get("/api/v1/extractions/").json()["count"] == 3
    by_run = client.get("/api/v1/extractions/", {"run": other_run.pk}).json()
    assert by_run["count"] == 1
    by_statement = client.get("/api/v1/extractions/", {"statement": world.subject2.pk}).json()
    assert by_statement["count"] == 1
    by_discussion = client.get("/api/v1/extractions/", {"discussion": world.other_discussion.pk})
    assert by_discussion.json()["count"] == 0
    bad = client.get("/api/v1/extractions/", {"run": "abc"})
    assert bad.status_code == 400 and "run" in bad.json()["errors"][0]
