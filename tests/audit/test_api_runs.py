"""Configurations and replicates over the API: registering a run, idempotency by external id,
notes, the configuration's replicates."""

from __future__ import annotations

import hashlib

import pytest

from audit.models import AuditLogEntry, ExtractionRun, RunConfiguration

pytest_plugins = ["tests.api_fixtures"]

RUNS = "/api/v1/extraction-runs/"
CONFIGURATIONS = "/api/v1/configurations/"


def test_registering_the_same_configuration_again_is_a_new_replicate_with_its_own_notes(
    api, admin_user
):
    # Before: the second registration answered 200 with the first run and dropped its notes.
    client = api(admin_user)
    body = {"model_name": "gpt-5", "prompt_version": "p8"}
    first = client.post(RUNS, {**body, "notes": "monday"}, format="json")
    second = client.post(RUNS, {**body, "notes": "tuesday, temperature drifted"}, format="json")
    assert (first.status_code, second.status_code) == (201, 201)
    one, two = first.json(), second.json()
    assert one["id"] != two["id"]
    assert one["configuration"] == two["configuration"]
    assert (one["replicate"], two["replicate"]) == (1, 2)
    assert (one["notes"], two["notes"]) == ("monday", "tuesday, temperature drifted")
    assert two["label"] == "gpt-5 · p8 · replicate 2"
    configuration = client.get(f"{CONFIGURATIONS}{one['configuration']}/").json()
    assert configuration["replicates"] == 2
    assert [run["notes"] for run in configuration["runs"]] == [
        "monday",
        "tuesday, temperature drifted",
    ]
    assert AuditLogEntry.objects.filter(action="run_register").count() == 2


def test_external_id_makes_a_retry_return_the_same_run(api, admin_user):
    client = api(admin_user)
    body = {"model_name": "gpt-5", "prompt_version": "p8", "external_id": "ci-417-r1"}
    first = client.post(RUNS, {**body, "notes": "first"}, format="json")
    retry = client.post(RUNS, {**body, "notes": "retried"}, format="json")
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json() == first.json()  # unchanged: the retry's notes are not merged in
    other = client.post(RUNS, {**body, "external_id": "ci-417-r2"}, format="json")
    assert other.status_code == 201 and other.json()["replicate"] == 2
    assert ExtractionRun.objects.count() == 2


def test_an_external_id_of_another_configuration_is_a_conflict(api, admin_user):
    client = api(admin_user)
    client.post(RUNS, {"model_name": "a", "prompt_version": "1", "external_id": "x"}, format="json")
    response = client.post(
        RUNS, {"model_name": "b", "prompt_version": "1", "external_id": "x"}, format="json"
    )
    assert response.status_code == 409
    assert "another configuration" in response.json()["detail"]
    assert ExtractionRun.objects.count() == 1


def test_parameters_prompt_and_unit_make_the_configuration(api, admin_user):
    client = api(admin_user)
    prompt = "Extract the people, events and pair bonds."
    base = {"model_name": "gpt-5", "prompt_version": "p8"}
    warm = client.post(RUNS, {**base, "parameters": {"temperature": 0.7}}, format="json").json()
    cold = client.post(RUNS, {**base, "parameters": {"temperature": 0}}, format="json").json()
    same = client.post(RUNS, {**base, "parameters": {"temperature": 0.0}}, format="json").json()
    texted = client.post(RUNS, {**base, "prompt_text": prompt}, format="json").json()
    hashed = client.post(
        RUNS,
        {**base, "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest()},
        format="json",
    ).json()
    whole = client.post(RUNS, {**base, "unit": "discussion"}, format="json").json()
    assert len({warm["configuration"], cold["configuration"], texted["configuration"]}) == 3
    assert same["configuration"] == cold["configuration"] and same["replicate"] == 2
    assert hashed["configuration"] == texted["configuration"]
    assert whole["unit"] == "discussion" and whole["configuration"] not in (
        warm["configuration"],
        texted["configuration"],
    )
    stored = RunConfiguration.objects.get(pk=texted["configuration"])
    assert stored.prompt_text == prompt
    assert warm["label"] == "gpt-5 · p8 (temperature=0.7)"
    replicate = client.post(
        RUNS, {"configuration": warm["configuration"], "notes": "again"}, format="json"
    ).json()
    assert (replicate["configuration"], replicate["replicate"]) == (warm["configuration"], 2)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"parameters": {"t": [1]}}, "parameters.t: expected a text, a number"),
        ({"parameters": {"t": 1e300}}, "parameters.t: expected a number within"),
        ({"parameters": "hot"}, "parameters: expected an object"),
        ({"prompt_hash": "ABC"}, "prompt_hash: expected 64 lowercase hex digits"),
        ({"prompt_text": "a", "prompt_hash": "0" * 64}, "prompt_hash: is not the SHA-256"),
        ({"unit": "paragraph"}, "unit:"),
        ({"configuration": 10**6}, "configuration: No configuration"),
        ({"external_id": 5}, "external_id: Not a valid string."),
    ],
)
def test_bad_registrations_name_the_field_and_store_nothing(api, admin_user, body, error):
    data = {"model_name": "gpt-5", "prompt_version": "p8", **body}
    if "configuration" in body:
        data = body
    response = api(admin_user).post(RUNS, data, format="json")
    assert 400 <= response.status_code < 500
    answer = response.json()
    assert any(error in e for e in [answer["detail"], *answer.get("errors", [])]), answer
    assert not ExtractionRun.objects.exists()


def test_configuration_fields_beside_a_configuration_id_are_refused(api, admin_user):
    client = api(admin_user)
    run = client.post(RUNS, {"model_name": "m", "prompt_version": "p"}, format="json").json()
    response = client.post(
        RUNS, {"configuration": run["configuration"], "model_name": "other"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == ["model_name: leave it out: the configuration says it"]


def test_configuration_notes_are_never_replaced_silently(api, admin_user):
    client = api(admin_user)
    body = {"model_name": "m", "prompt_version": "p", "configuration_notes": "few-shot, 3 examples"}
    first = client.post(RUNS, body, format="json").json()
    assert client.post(RUNS, body, format="json").status_code == 201  # same notes: fine
    changed = client.post(RUNS, {**body, "configuration_notes": "zero-shot"}, format="json")
    assert changed.status_code == 409
    url = f"{CONFIGURATIONS}{first['configuration']}/"
    assert client.patch(url, {"notes": "zero-shot"}, format="json").status_code == 200
    assert client.get(url).json()["notes"] == "zero-shot"
    run_url = f"{RUNS}{first['id']}/"
    assert client.patch(run_url, {"notes": "re-read"}, format="json").json()["notes"] == "re-read"


def test_auditors_read_configurations_but_do_not_register(api, auditor, admin_user):
    api(admin_user).post(RUNS, {"model_name": "m", "prompt_version": "p"}, format="json")
    client = api(auditor)
    listed = client.get(CONFIGURATIONS).json()["results"]
    assert [c["label"] for c in listed] == ["m · p"]
    assert (
        client.post(RUNS, {"model_name": "m", "prompt_version": "p"}, format="json").status_code
        == 403
    )
    assert (
        client.patch(
            f"{CONFIGURATIONS}{listed[0]['id']}/", {"notes": "x"}, format="json"
        ).status_code
        == 403
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"model_name": "m", "prompt_version": "p", "notes": "\\ud800"}', "surrogate"),
        ('{"model_name": "m\\u0000", "prompt_version": "p"}', "NUL"),
        ('{"model_name": "m", "prompt_version": "p", "parameters": {"t": 1e999}}', "number"),
        ('{"model_name": "m", "prompt_version": "p", "parameters": {"t": "²"}, "unit": 1}', "unit"),
        (
            '{"model_name": "m", "prompt_version": "p", "parameters": '
            + "[" * 200
            + "]" * 200
            + "}",
            "nest",
        ),
        ('{"model_name": "m", "prompt_version": "p", "configuration": 1.5}', "configuration"),
    ],
)
def test_hostile_json_is_a_clear_400(api, admin_user, text, error):
    response = api(admin_user).post(RUNS, text, content_type="application/json")
    assert response.status_code == 400
    answer = response.json()
    found = " ".join([answer["detail"], *answer.get("errors", [])])
    assert error in found, answer
    assert not ExtractionRun.objects.exists()
