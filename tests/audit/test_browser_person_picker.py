"""Person pickers search as you type, in headless Chromium: on the big statement (15 people)
typing part of a name narrows the list, the keyboard alone picks a person and the pick saves
like any edit; without JavaScript the picker is the plain select."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from tests.audit.test_browser_big_statement import big_pdp
from tests.conftest import TEST_PASSWORD, screenshot
from tests.factories import ExtractionFactory, ExtractionRunFactory, StatementFactory
from tests.site_pages import axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


@pytest.fixture
def big_statement():
    statement = StatementFactory(text="A long story about the whole Hayes family.")
    ExtractionFactory(statement=statement, run=ExtractionRunFactory(), pdp_deltas=big_pdp())
    return statement


def _open_editor(page, live_server, statement):
    from playwright.sync_api import expect

    page.goto(live_server.url + reverse("audit:statement", args=[statement.pk]))
    page.keyboard.press("e")
    editor = page.locator(".editor")
    expect(editor.locator("input[name=people-14-name]")).to_have_value("Oda")
    editor.locator("details.ed-fold[data-kind=events] > summary").click()
    return editor


def test_person_picker_filters_as_you_type_and_picks_with_the_keyboard(
    open_as, live_server, auditor, big_statement
):
    from playwright.sync_api import expect

    page = open_as(auditor)
    editor = _open_editor(page, live_server, big_statement)
    who = editor.get_by_role("combobox", name="Who").first
    expect(who).to_have_value("Ann Hayes")  # events[0].person is -1: a name, no id
    # The select that is posted is still there, hidden, and every person picker has a box.
    assert editor.locator("select[name=events-0-person]").is_hidden()
    assert (
        editor.locator("select[data-person-picker]").count()
        == editor.locator("input[data-person-combo]").count()
    )

    who.click()
    who.fill("da")  # Oda, and nobody else
    listbox = page.locator("#" + who.get_attribute("aria-controls"))
    expect(listbox.get_by_role("option")).to_have_count(1)
    expect(listbox).to_contain_text("Oda Hayes")
    screenshot(page, "editor_person_picker", full_page=False)
    # The editor is checked whole elsewhere (its 10,000 elements take axe seconds): here the
    # open list and its box, at both widths.
    opened = [f"#{who.get_attribute('id')}", f"#{who.get_attribute('aria-controls')}"]
    assert axe_serious(page, within=opened) == [], describe(axe_serious(page, within=opened))
    assert who.get_attribute("aria-expanded") == "true"
    who.press("ArrowDown")
    expect(listbox.locator("li.active")).to_have_text("Oda Hayes")
    assert who.get_attribute("aria-activedescendant")
    who.press("Enter")
    expect(who).to_have_value("Oda Hayes")
    assert who.get_attribute("aria-expanded") == "false"
    expect(editor.locator(".editor-bar [id^=save-status]")).to_contain_text("Saved · v2")
    assert Feedback.objects.get().edited_extraction["events"][0]["person"] == -15

    # Escape closes the list and keeps the person; typing alone saves nothing.
    who.fill("ned")
    expect(listbox.get_by_role("option")).to_have_count(1)  # Ned
    who.press("Escape")
    expect(who).to_have_value("Oda Hayes")
    page.set_viewport_size({"width": 390, "height": 844})
    who.fill("a")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "editor_person_picker_390", full_page=False)
    assert who.get_attribute("aria-expanded") == "true"
    assert axe_serious(page, within=opened) == [], describe(axe_serious(page, within=opened))
    who.press("Escape")
    # Leaving the box picks the one person its text names; emptied, it picks no one.
    spouse = editor.get_by_role("combobox", name="Spouse").first
    spouse.fill("max hayes")
    spouse.press("Tab")
    expect(spouse).to_have_value("Max Hayes")
    expect(editor.locator(".editor-bar [id^=save-status]")).to_contain_text("Saved · v3")
    spouse.fill("")
    spouse.press("Tab")
    expect(editor.locator(".editor-bar [id^=save-status]")).to_contain_text("Saved · v4")
    event = Feedback.objects.get().edited_extraction["events"][0]
    assert event["person"] == -15 and event.get("spouse") is None


def test_person_picker_is_the_plain_select_without_javascript(
    browser, live_server, auditor, big_statement
):
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1440, "height": 900}
    )
    page = context.new_page()
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", auditor.get_username())
    page.fill("input[name=password]", TEST_PASSWORD)
    page.click("button[type=submit]")
    page.goto(live_server.url + reverse("audit:statement", args=[big_statement.pk]))
    page.click("text=Start coding")
    feedback = Feedback.objects.get()
    page.goto(live_server.url + reverse("audit:feedback_edit", args=[feedback.pk]))
    # The plain select (a <noscript>'s, read as elements here) is the one shown and sent; the
    # picker's own select, holding the person chosen only, is hidden and disabled.
    select = page.locator("select[name=events-0-person]:not([disabled])")
    assert select.count() == 1 and page.locator("input[data-person-combo]").count() == 0
    page.locator("details.ed-fold[data-kind=events] > summary").click()  # 30 events: folded
    assert select.is_visible()
    assert select.locator("option").count() == 16  # no one, and the 15 people
    assert page.locator("select[name=events-0-person][disabled]").is_hidden()
    # Picked and saved without JavaScript: the form sends that person, once.
    select.select_option(label="Oda Hayes")
    page.locator(".editor-actions button[value=save]").click()
    page.wait_for_load_state()
    assert Feedback.objects.get().edited_extraction["events"][0]["person"] == -15
    context.close()
