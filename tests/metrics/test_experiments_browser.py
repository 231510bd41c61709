"""The issue's reproductions in headless Chromium, one page each: a replicate registered over the
API shows as a new replicate of its configuration; a whole-discussion run's figures say "not
applicable" for statement figures and give its cumulative F1; an admin freezes a snapshot on
its page. axe-core finds nothing serious on any of them; screenshots go to screenshots/.

Drives Debian's /usr/bin/chromium (never a downloaded browser) against live_server.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import GroundTruthSnapshot
from audit.services import feedback_approve
from audit.services.runs import ConfigurationSpec, discussion_extractions_import, run_register
from metrics.families.payload.items import cumulative
from tests.conftest import screenshot
from tests.metrics.extraction_helpers import AI, make_world
from tests.site_pages import AXE_JS, axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


@pytest.fixture
def world(auditor, admin_user):
    """Two discussions of two statements, all approved (their results computed as they
    commit), extracted by one statement-unit run."""
    world = make_world(auditor, discussions=2, statements=2)
    for statement in world.statements:
        feedback_approve(feedback=world.fb(statement), admin=admin_user)
    return world


def _accessible(page, name: str) -> None:
    assert AXE_JS.exists(), "npm ci --prefix tests"
    violations = axe_serious(page)
    assert violations == [], describe(violations)
    screenshot(page, name)


def test_a_replicate_registered_over_the_api_shows_on_the_runs_page(
    open_as, live_server, admin_user, world
):
    from playwright.sync_api import expect

    client = APIClient()
    client.force_authenticate(admin_user)
    body = {
        "model_name": world.run.model_name,
        "prompt_version": world.run.prompt_version,
        "notes": "the same prompt again",
    }
    answer = client.post("/api/v1/extraction-runs/", body, format="json")
    assert answer.status_code == 201 and answer.json()["replicate"] == 2  # not the first run
    replicate = answer.json()["id"]
    items = [{"statement": s.pk, "pdp_deltas": AI} for s in world.statements]
    posted = client.post(
        f"/api/v1/extraction-runs/{replicate}/extractions/", {"extractions": items}, format="json"
    )
    assert posted.status_code == 201

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:runs"))
    group = page.get_by_test_id(f"configuration-{world.run.configuration_id}")
    expect(group.locator("tr.configuration-row")).to_contain_text("2 replicates")
    row = page.get_by_test_id(f"run-{replicate}")
    expect(row).to_contain_text("replicate 2")
    expect(row).to_contain_text("the same prompt again")
    expect(row.locator(".chip")).to_have_text("fresh")
    expect(page.get_by_test_id(f"run-{world.run.pk}")).to_contain_text("replicate 1")
    expect(group.locator("tr.configuration-row .spread").first).to_contain_text("SD")
    _accessible(page, "experiments_replicates")


def test_a_whole_discussion_runs_figures(open_as, live_server, admin_user, world):
    from playwright.sync_api import expect

    spec = ConfigurationSpec(model_name="gpt-x", prompt_version="extract_full", unit="discussion")
    whole, _ = run_register(spec=spec)
    pdp = {**cumulative([AI]), "delete": []}
    discussion_extractions_import(
        run=whole, items=[{"discussion": d.pk, "pdp": pdp} for d in world.discussions]
    )

    page = open_as(admin_user)
    page.goto(f"{live_server.url}{reverse('metrics:dashboard')}?run={whole.pk}")
    card = page.locator(f"#extraction-f1-{whole.pk}")
    expect(card.get_by_test_id("not-applicable")).to_contain_text("not applicable")
    expect(card.locator(".metric", has_text="Overall F1")).to_contain_text("not applicable")
    expect(card.locator(".metric", has_text="Cumulative F1")).not_to_contain_text("n/a")
    expect(card).to_contain_text("2 discussions scored")
    expect(card.get_by_test_id("basis")).to_have_text("on live ground truth")
    expect(page.locator(f"#cumulative-f1-{whole.pk} .metric").first).not_to_have_text("0.000")
    _accessible(page, "experiments_whole_discussion_run")


def test_an_admin_freezes_a_snapshot_on_its_page(open_as, live_server, admin_user, world):
    from playwright.sync_api import expect

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("audit:snapshots"))
    page.get_by_label("Name").fill("GT v12")
    page.get_by_label("Note").fill("before the new date rules")
    page.get_by_role("button", name="Freeze now").click()
    expect(page.locator(".messages")).to_contain_text(
        "Froze 4 approved codings of 2 discussions as GT v12."
    )
    snapshot = GroundTruthSnapshot.objects.get()
    row = page.get_by_test_id(f"snapshot-{snapshot.pk}")
    expect(row).to_contain_text("GT v12")
    expect(row).to_contain_text("before the new date rules")
    expect(row.get_by_role("link", name="runs on it")).to_have_attribute(
        "href", f"{reverse('metrics:runs')}?snapshot={snapshot.pk}"
    )
    _accessible(page, "experiments_snapshot_frozen")
