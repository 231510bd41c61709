"""The dashboards in headless Chromium: both dashboards, the run selector's htmx swap, the
run comparison, the sortable per-discussion table and the error analysis, with screenshots
saved under screenshots/ (gitignored) for a person to look at.

Drives Debian's /usr/bin/chromium (never a downloaded browser) against live_server.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from tests.bench.management.commands.benchmark_dashboard import dashboard_data_create
from tests.conftest import screenshot
from tests.factories import FeedbackFactory

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


@pytest.fixture
def data(db):
    """Real engine output for 8 discussions x 6 statements and three runs, all fresh."""
    return dashboard_data_create(discussions=8, statements=6, runs=3, prefix="gpt-demo")


def shot(page, name: str) -> None:
    screenshot(page, name)


def test_admin_dashboard_and_run_selector(open_as, live_server, admin_user, data) -> None:
    from playwright.sync_api import expect

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:dashboard"))
    cards = page.locator("#dashboard-cards")
    expect(cards.locator(".metric-card").first).to_contain_text(data.runs[-1].prompt_version)
    expect(page.get_by_role("link", name="Export all ground truth")).to_be_visible()
    page.get_by_text("How is this calculated?").click()
    expect(page.get_by_text("name similarity (name + last name) is above 0.8")).to_be_visible()
    expect(page.locator("svg.plot").first).to_be_visible()
    shot(page, "dashboard_admin")

    page.select_option("#run-select", str(data.runs[0].pk))
    expect(cards.locator(".metric-card").first).to_contain_text(data.runs[0].prompt_version)
    assert f"run={data.runs[0].pk}" in page.url  # the swap pushed a shareable URL


def test_auditor_dashboard_is_read_only(open_as, live_server, auditor, data) -> None:
    from playwright.sync_api import expect

    for status in ("approved", "submitted", "draft"):
        FeedbackFactory(auditor=auditor, status=status)
    page = open_as(auditor)
    page.goto(live_server.url + reverse("metrics:dashboard"))
    expect(page.locator("#dashboard-cards .metric-card").first).to_be_visible()
    progress = page.get_by_test_id("my-progress")
    expect(progress).to_contain_text("statements coded")
    expect(progress.locator(".metric").first).to_have_text("3")
    expect(page.get_by_text("Export all ground truth")).to_have_count(0)
    expect(page.get_by_test_id("admin-controls")).to_have_count(0)
    shot(page, "dashboard_auditor")
    assert Feedback.objects.filter(auditor=auditor).count() == 3


def test_runs_comparison_discussions_and_errors(open_as, live_server, admin_user, data) -> None:
    from playwright.sync_api import expect

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:runs"))
    expect(page.locator("table.runs-table tbody tr.replicate-row")).to_have_count(3)
    shot(page, "dashboard_runs")
    page.get_by_role("link", name="Compare a baseline and a candidate").click()
    page.select_option("select[name=baseline]", f"r{data.runs[0].pk}")
    page.select_option("select[name=candidate]", f"r{data.runs[-1].pk}")
    page.get_by_role("button", name="Compare").click()
    comparison = page.get_by_test_id("comparison")
    expect(comparison).to_contain_text("that every run extracted")
    expect(comparison.locator("svg.plot")).to_be_visible()
    shot(page, "dashboard_run_compare")

    page.goto(f"{live_server.url}{reverse('metrics:discussions')}?run={data.runs[-1].pk}")
    expect(page.get_by_test_id("weakest")).to_be_visible()
    page.locator("#discussion-table th a", has_text="Cumulative F1").click()
    expect(page.locator('#discussion-table th[aria-sort="ascending"]')).to_contain_text(
        "Cumulative"
    )
    shot(page, "dashboard_discussions")

    page.goto(f"{live_server.url}{reverse('metrics:errors')}?run={data.runs[-1].pk}")
    expect(page.locator("figure.confusion svg").first).to_be_visible()
    shot(page, "dashboard_errors")


def test_admin_sees_sarf_readings_and_the_settings_in_force(
    open_as, live_server, admin_user, data, settings
) -> None:
    from playwright.sync_api import expect

    settings.EXTRACTION_MATCH_SETTINGS = {"strategy": "greedy"}
    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:dashboard"))
    sarf = page.get_by_test_id("sarf-f1").first
    expect(sarf).to_contain_text("pooled")
    expect(sarf).to_contain_text("mean per statement")
    panel = page.get_by_test_id("match-settings")
    expect(panel).to_contain_text("EXTRACTION_MATCH_STRATEGY")
    expect(panel).to_contain_text("greedy")
    expect(panel).to_contain_text("computed with other settings or code")  # stored: optimal
    shot(page, "dashboard_admin_settings_1440")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(panel).to_be_visible()
    for part in (panel, sarf):
        box = part.bounding_box()
        assert box and box["x"] + box["width"] <= 390, "the card is wider than the screen"
    shot(page, "dashboard_admin_settings_390")
