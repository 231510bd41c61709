"""On a phone the site's tables scroll sideways; one that holds nothing focusable (the jobs page
before any job) gets a tab stop, so the keyboard alone can scroll it (static/js/site.js)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.site_pages import axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def test_a_scrolling_table_without_links_takes_the_focus_on_a_phone(
    open_as, live_server, admin_user
):
    page = open_as(admin_user)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + reverse("metrics:jobs"))
    table = page.locator("main table")
    assert table.evaluate("t => t.scrollWidth > t.clientWidth")  # it does scroll
    assert table.get_attribute("tabindex") == "0"
    assert "Recent jobs" in table.get_attribute("aria-label")
    page.keyboard.press("Tab")
    for _ in range(40):  # tab from the top of the page until the table has the focus
        if page.evaluate("document.activeElement.tagName") == "TABLE":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "TABLE"
    for _ in range(50):  # the arrow key scrolls it (smoothly: wait until it has moved)
        page.keyboard.press("ArrowRight")
        if table.evaluate("t => t.scrollLeft") > 0:
            break
    assert table.evaluate("t => t.scrollLeft") > 0
    assert axe_serious(page) == [], describe(axe_serious(page))
