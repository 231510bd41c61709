"""The error analysis page offers a failure packet for each pattern, in headless Chromium: the
card passes axe-core, fits a phone, and its link downloads the packet. Screenshots go to
screenshots/ (gitignored) for a person to look at."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.conftest import SCREENSHOTS, require_service, screenshot
from tests.metrics.loop_data import loop_data_create, loop_users
from tests.site_pages import AXE_JS, axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def test_the_error_page_downloads_a_packet_of_missed_pair_bonds(open_as, live_server) -> None:
    from playwright.sync_api import expect

    require_service("axe-core", AXE_JS.exists(), "npm ci --prefix tests (make test does)")
    data = loop_data_create(*loop_users(), discussions=2, statements=6, replicates=1)
    run = data.replicates[0]
    page = open_as(data.admin)
    page.goto(f"{live_server.url}{reverse('metrics:errors')}?run={run.pk}")
    card = page.get_by_test_id("failure-packets")
    link = card.get_by_role("link", name="Failure packet of missed pair bonds, Markdown")
    expect(link).to_be_visible()
    assert axe_serious(page) == [], describe(axe_serious(page))
    card.scroll_into_view_if_needed()
    screenshot(page, "errors_failure_packets_1440")

    with page.expect_download() as download:
        link.click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.startswith("# Failure packet: missed pair bonds\n")
    assert download.value.suggested_filename == f"packet-run-{run.pk}-pair_bonds_fn.md"

    page.set_viewport_size({"width": 390, "height": 844})
    box = card.bounding_box()
    assert box and box["x"] + box["width"] <= 390, "the packets card is wider than the screen"
    screenshot(page, "errors_failure_packets_390")
    card.screenshot(path=str(SCREENSHOTS / "errors_failure_packets_card_390.png"))
