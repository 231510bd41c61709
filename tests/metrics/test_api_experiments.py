"""Snapshots, figures on a ground truth, configurations' replicates and unit comparisons over
the API, as a script uses them."""

from __future__ import annotations

import pytest

from audit.models import AuditLogEntry, GroundTruthSnapshot
from audit.services import feedback_unapprove
from metrics.families.payload.items import cumulative
from tests.metrics.extraction_helpers import AI, approve

pytest_plugins = ["tests.metrics.extraction_helpers", "tests.api_fixtures"]
pytestmark = pytest.mark.usefixtures("only_extraction_results")

V1 = "/api/v1"


@pytest.fixture
def world(approved_but_the_last, db):
    """Two discussions of three statements; all approved but the last statement (made once for
    the module: extraction_helpers.approved_but_the_last)."""
    return approved_but_the_last.fresh()


@pytest.fixture
def auditor(approved_but_the_last, db, django_user_model):
    return django_user_model.objects.get(pk=approved_but_the_last.auditor_id)


@pytest.fixture
def admin_user(approved_but_the_last, db, django_user_model):
    return django_user_model.objects.get(pk=approved_but_the_last.admin_id)


def test_freeze_change_export_and_compare_with_the_export_at_freezing(
    api, admin_user, world, run_committed
):
    client = api(admin_user)
    created = client.post(f"{V1}/snapshots/", {"name": "GT v12", "note": "n"}, format="json")
    assert created.status_code == 201, created.json()
    snapshot = created.json()
    assert (snapshot["codings"], snapshot["complete_discussions"]) == (5, 1)
    assert snapshot["basis_label"] == "on GT v12" and snapshot["created_by"] == admin_user.username
    url = f"{V1}/snapshots/{snapshot['id']}/export"
    at_freezing = b"".join(client.get(url).streaming_content)
    run_committed(feedback_unapprove, feedback=world.fb(world.statements[0]), admin=admin_user)
    approve(run_committed, world, world.statements[5], admin_user)
    later = client.get(url)
    assert later["Content-Disposition"].startswith('attachment; filename="ground-truth-GT-v12')
    assert b"".join(later.streaming_content) == at_freezing
    again = client.post(f"{V1}/snapshots/", {"name": "GT v12"}, format="json")
    assert again.status_code == 409 and "exists already" in again.json()["detail"]


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"name": ""}, 400, "name"),
        ({"name": "x" * 101}, 400, "name"),
        ({"name": 12}, 400, "name"),
        ({"name": "ok", "note": ["a"]}, 400, "note"),
        ({"name": "ok", "extra": 1}, 400, "extra"),
    ],
)
def test_bad_freezes_are_named_and_store_nothing(api, admin_user, world, body, status, error):
    response = api(admin_user).post(f"{V1}/snapshots/", body, format="json")
    assert response.status_code == status
    assert any(e.startswith(error) for e in response.json()["errors"])
    assert not GroundTruthSnapshot.objects.exists()


def test_nul_in_a_name_and_roles(api, admin_user, auditor, world):
    text = '{"name": "GT\\u0000v1"}'
    response = api(admin_user).post(f"{V1}/snapshots/", text, content_type="application/json")
    assert response.status_code == 400
    client = api(auditor)
    assert client.post(f"{V1}/snapshots/", {"name": "a"}, format="json").status_code == 403
    snapshot = api(admin_user).post(f"{V1}/snapshots/", {"name": "v1"}, format="json").json()
    assert client.get(f"{V1}/snapshots/").json()["count"] == 1
    assert client.get(f"{V1}/snapshots/{snapshot['id']}/export").status_code == 403
    assert client.delete(f"{V1}/snapshots/{snapshot['id']}/").status_code == 403


def test_delete_is_logged_with_its_reason(api, admin_user, world):
    client = api(admin_user)
    snapshot = client.post(f"{V1}/snapshots/", {"name": "v1"}, format="json").json()
    response = client.delete(f"{V1}/snapshots/{snapshot['id']}/?reason=a+mistake")
    assert response.status_code == 204
    entry = AuditLogEntry.objects.get(action="snapshot_delete")
    assert "a mistake" in entry.message and entry.actor == admin_user
    assert client.get(f"{V1}/snapshots/{snapshot['id']}/").status_code == 404


def test_figures_say_which_ground_truth_they_are_on(api, admin_user, auditor, world, run_committed):
    admin = api(admin_user)
    snapshot = admin.post(f"{V1}/snapshots/", {"name": "GT v1"}, format="json").json()
    client = api(auditor)
    url = f"{V1}/extraction-runs/{world.run.pk}/figures/"
    live = client.get(url).json()
    assert live["ground_truth"] == {
        "kind": "live",
        "snapshot": None,
        "name": None,
        "label": "on live ground truth",
    }
    frozen = run_committed(client.get, url, {"snapshot": snapshot["id"]}).json()
    assert frozen["ground_truth"]["label"] == "on GT v1"
    frozen = client.get(url, {"snapshot": snapshot["id"]}).json()
    assert frozen["status"] == "fresh"
    assert frozen["statement"] == live["statement"]  # nothing changed since the freeze
    run_committed(feedback_unapprove, feedback=world.fb(world.statements[0]), admin=admin_user)
    assert client.get(url).json()["statement"] != live["statement"]
    assert client.get(url, {"snapshot": snapshot["id"]}).json()["statement"] == live["statement"]
    assert client.get(url, {"snapshot": 10**9}).status_code == 404
    results = client.get(f"{V1}/metric-results/", {"snapshot": snapshot["id"], "scope": "run"})
    [row] = results.json()["results"]
    assert row["ground_truth"] == "on GT v1" and row["family"] == "extraction_snapshot"
    live_rows = client.get(f"{V1}/metric-results/", {"family": "extraction", "scope": "run"})
    assert live_rows.json()["results"][0]["ground_truth"] == "on live ground truth"


def test_configuration_figures_and_a_discussion_unit_run_beside_it(
    api, admin_user, world, run_committed
):
    client = api(admin_user)
    replicate = client.post(
        f"{V1}/extraction-runs/", {"configuration": world.run.configuration_id}, format="json"
    ).json()
    items = [{"statement": s.pk, "pdp_deltas": AI} for s in world.statements[:3]]
    run_committed(
        client.post,
        f"{V1}/extraction-runs/{replicate['id']}/extractions/",
        {"extractions": items},
        format="json",
    )
    figures = client.get(f"{V1}/configurations/{world.run.configuration_id}/figures/").json()
    assert [r["replicate"] for r in figures["replicates"]] == [1, 2]
    spread = figures["statement"]["aggregate_micro_f1"]
    values = [r["statement"]["aggregate_micro_f1"] for r in figures["replicates"]]
    assert spread["n"] == 2 and spread["min"] == min(values) and spread["max"] == max(values)
    whole = client.post(
        f"{V1}/extraction-runs/",
        {"model_name": "gpt-x", "prompt_version": "full", "unit": "discussion"},
        format="json",
    ).json()
    pdp = {**cumulative([AI] * 3), "delete": []}
    body = {"extractions": [{"discussion": d.pk, "pdp": pdp} for d in world.discussions]}
    run_committed(
        client.post,
        f"{V1}/extraction-runs/{whole['id']}/discussion-extractions/",
        body,
        format="json",
    )
    figures = client.get(f"{V1}/extraction-runs/{whole['id']}/figures/").json()
    assert figures["statement"] is None and figures["statement_figures_applicable"] is False
    assert figures["n_statements"] is None and figures["n_left_out"] == 1
    compared = client.get(
        f"{V1}/cumulative-comparison/", {"left": world.run.pk, "right": whole["id"]}
    ).json()
    assert compared["n_shared"] == 1
    [pair] = compared["discussions"]
    assert pair["left"] == pair["right"]
    missing = client.get(f"{V1}/cumulative-comparison/", {"left": world.run.pk})
    assert missing.status_code == 400
