"""The comparison and the trend pages in headless Chromium, on the loop's data (a configuration
of two replicates, a degraded candidate and, for the trend, a later configuration tried on one
discussion only): one page load each, axe-core finds nothing serious or critical, the page does
not scroll sideways at 390 px, and screenshots at 1,440 and 390 px go to screenshots/
(gitignored) for a person to look at."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evalsite.celery import app
from tests.conftest import require_service, screenshot
from tests.metrics.loop_data import (
    loop_data_create,
    loop_users,
    partial_run_create,
    summaries_compute,
)
from tests.site_pages import AXE_JS, axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

PHONE = {"width": 390, "height": 844}


def _on_a_phone(page, name: str) -> int:
    """The page's width at 390 px (screenshotted there), after its screenshot at 1,440 px."""
    screenshot(page, f"{name}_1440")
    page.set_viewport_size(PHONE)
    width = page.evaluate("document.documentElement.scrollWidth")
    screenshot(page, f"{name}_390")
    return width


def test_the_trend_draws_each_configuration_with_its_notes_and_the_break(open_as, live_server):
    from playwright.sync_api import expect

    require_service("axe-core", AXE_JS.exists(), "npm ci --prefix tests (make test does)")
    data = loop_data_create(*loop_users(), discussions=2, statements=6, replicates=2)
    partial_run_create(data)
    summaries_compute()
    page = open_as(data.admin)
    page.goto(f"{live_server.url}{reverse('metrics:trend')}")

    chart = page.get_by_test_id("trend").locator("svg")
    expect(chart).to_be_visible()
    expect(chart.locator("g.step")).to_have_count(3)
    expect(chart.locator("g.break")).to_have_count(1)
    expect(chart.locator("g.break")).to_contain_text("not comparable")
    rows = page.get_by_test_id("trend-table").locator("tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("replicate 2: replicate 2")
    expect(rows.nth(1)).to_contain_text("shorter prompt")
    expect(rows.nth(2)).to_contain_text("scored on different discussions")
    expect(page.get_by_test_id("trend-updating")).to_have_count(0)
    assert axe_serious(page) == [], describe(axe_serious(page))
    assert _on_a_phone(page, "trend") <= PHONE["width"]


def test_the_comparison_of_a_configuration_and_a_candidate_in_words(open_as, live_server):
    from playwright.sync_api import expect

    require_service("axe-core", AXE_JS.exists(), "npm ci --prefix tests (make test does)")
    data = loop_data_create(*loop_users(), discussions=3, statements=6, replicates=2)
    sides = {"baseline": f"c{data.configuration.pk}", "candidate": f"r{data.degraded.pk}"}
    app.tasks["metrics.tasks.compute_run_comparison"].apply(kwargs=sides, throw=True)
    page = open_as(data.admin)
    query = f"baseline={sides['baseline']}&candidate={sides['candidate']}"
    page.goto(f"{live_server.url}{reverse('metrics:run_compare')}?{query}")

    figures = page.get_by_test_id("comparison-figures")
    expect(figures.locator("tr[data-figure='pair_bonds']")).to_contain_text("worse")
    expect(page.get_by_test_id("comparison").locator("svg")).to_be_visible()
    changed = page.get_by_test_id("changed-statements-table")
    expect(changed).to_contain_text("pair bonds newly missed")
    assert axe_serious(page) == [], describe(axe_serious(page))
    assert _on_a_phone(page, "comparison") <= PHONE["width"]
