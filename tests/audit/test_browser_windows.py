"""In Chromium: a long discussion opens on its first window of statements; scrolling to the foot
loads the next one, j moves on across windows, and a link to a far statement lands on it. The
window and the review queue's pager pass axe-core and are photographed at 1440 and 390 px;
on a phone the queue shows each discussion as a card."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit.views.discussion import FULL_CARDS, LAZY_BATCH, WINDOW
from tests.bench.management.commands.benchmark_dashboard import (
    dashboard_data_create,
    pages_data_create,
)
from tests.conftest import TEST_PASSWORD, screenshot
from tests.site_pages import axe_serious

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

LONG = 2 * WINDOW + 10


def seeded():
    data = dashboard_data_create(discussions=12, statements=5, runs=2, long_statements=LONG)
    extras = pages_data_create(data)
    for user in (data.auditor, data.admin):
        user.set_password(TEST_PASSWORD)
        user.save()
    return data, extras


def test_scrolling_and_j_load_the_next_window_and_far_links_land(open_as, live_server):
    from playwright.sync_api import expect

    data, extras = seeded()
    page = open_as(data.auditor)
    url = live_server.url + reverse("audit:discussion", args=[data.long_discussion.pk])
    page.goto(url)
    cards = page.locator("article.stmt.subject")
    expect(cards).to_have_count(WINDOW)
    assert axe_serious(page) == []
    screenshot(page, "window_1440", full_page=False)

    # Scrolled through, the window's placeholders load in batches, each with one request.
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    batches = page.locator(".lazy-batch").evaluate_all("els => els.map(e => e.dataset.from)")
    assert len(batches) == round((WINDOW - FULL_CARDS) / LAZY_BATCH)
    for start in batches:
        selector = f'.lazy-batch[data-from="{start}"]'  # may have loaded with the one above
        page.evaluate("s => document.querySelector(s)?.scrollIntoView()", selector)
        expect(page.locator(selector)).to_have_count(0)
    expect(cards.nth(WINDOW - 1)).not_to_have_class(re.compile("lazy"))
    for start in batches:
        assert sum(f"from={start}&through=" in url for url in asked) == 1, start

    # Scrolling the sentinel into view loads the next window below.
    # (scrolling through the batches may have brought it into view already)
    page.evaluate("() => document.getElementById('load-more')?.scrollIntoView()")
    expect(cards).to_have_count(2 * WINDOW)

    # j past the last card of the loaded windows loads the third and moves into it.
    last = cards.nth(2 * WINDOW - 1)
    last.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.evaluate("id => document.getElementById(id).focus()", last.get_attribute("id"))
    for _ in range(2):
        page.keyboard.press("j")
    expect(cards).to_have_count(LONG)
    expect(page.locator("article.stmt.is-current")).to_have_count(1)
    assert page.locator("#load-more").count() == 0

    # A link to the rejected coding far down opens the window that holds it, scrolled to it.
    far = extras["rejected"].statement
    page.goto(live_server.url + reverse("home"))
    page.goto(f"{url}#stmt-{far.pk}")
    page.wait_for_url(re.compile(rf"at={far.pk}"))
    target = page.locator(f"#stmt-{far.pk}")
    expect(target).to_be_visible()
    expect(target).to_have_class(re.compile("is-current"))
    expect(page.locator("#load-earlier")).to_be_visible()
    assert axe_serious(page) == []

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(url)
    screenshot(page, "window_390", full_page=False)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_review_queue_pager_passes_axe_and_fits_a_phone(open_as, live_server):
    data, _ = seeded()
    page = open_as(data.admin)
    page.goto(live_server.url + reverse("audit:review_queue"))
    pager = page.locator("#review-queue nav.pager")
    pager.get_by_role("link", name="Next →").click()
    page.wait_for_url(re.compile(r"page=2"))
    assert axe_serious(page) == []
    screenshot(page, "review_queue_page2_1440")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    screenshot(page, "review_queue_page2_390")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_queue_on_a_phone_shows_each_discussion_whole(open_as, live_server):
    """At 390 px each discussion of the queue is a card: its summary, status, counts and
    button all inside the window, nothing to scroll sideways, the cells still labelled."""
    data, _ = seeded()
    page = open_as(data.auditor)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + reverse("home"))
    rows = page.locator("#queue tbody tr")
    assert rows.count() >= 10

    for index in range(rows.count()):
        row = rows.nth(index)
        row.scroll_into_view_if_needed()
        button = row.locator("td.actions a").bounding_box()
        summary = row.locator("td.summary a").bounding_box()
        assert button is not None and summary is not None
        assert summary["x"] >= 0 and button["x"] + button["width"] <= 390, index
    labels = page.evaluate(
        "() => [...document.querySelectorAll('#queue tbody tr:first-child td[data-label]')]"
        ".map(td => getComputedStyle(td, '::before').content)"
    )
    assert labels == ['"Mine: coded · sent · approved"', '"Overall"']
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert axe_serious(page) == []
    screenshot(page, "queue_390", full_page=False)
