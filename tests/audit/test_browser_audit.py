"""End to end in headless Chromium: an auditor codes and submits, an admin approves, F1 shows.

Drives Debian's /usr/bin/chromium (never a downloaded browser) against pytest-django's
live_server. Celery runs eagerly in tests, so approval computes the statement F1 at once.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit.models import Feedback, FeedbackRevision
from metrics.models import MetricResult
from tests.audit.test_views_support import make_scene

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def test_auditor_codes_and_submits_admin_approves_and_f1_appears(
    open_as, live_server, auditor, admin_user
):
    from playwright.sync_api import expect

    scene = make_scene()
    page = open_as(auditor)
    page.click(f"text={scene.discussion.summary}")
    page.wait_for_url(f"**/audit/discussions/{scene.discussion.pk}/")
    page.wait_for_load_state()
    card = page.locator(f"#stmt-{scene.first.pk}")

    # Keyboard: j selects the first statement, e starts coding it from the AI extraction.
    page.keyboard.press("j")
    expect(card).to_have_class(re.compile("is-current"))
    page.keyboard.press("e")
    name = card.locator("input[name=people-0-name]")
    expect(name).to_have_value("John")

    # Each change saves as a draft in place.
    name.fill("Jonathan")
    name.press("Tab")
    status = card.locator(".editor-bar [id^=save-status]")
    expect(status).to_contain_text("Saved · v2")
    feedback = Feedback.objects.get()
    assert feedback.edited_extraction["people"][0]["name"] == "Jonathan"
    assert feedback.edited_extraction["people"][0]["confidence"] == 1.0

    # Add a person with the button, then code her gender with the select list.
    card.get_by_role("button", name="+ Person").click()
    new_name = card.locator("input[name=people-2-name]")
    expect(new_name).to_be_focused()
    new_name.fill("Rose")
    card.locator("select[name=people-2-gender]").select_option("female")
    expect(status).to_contain_text("Saved · v4")
    assert Feedback.objects.get().edited_extraction["people"][2] == {
        "id": -5, "name": "Rose", "last_name": None, "gender": "female", "confidence": 1.0,
    }  # fmt: skip

    # s shows what will be submitted, Enter confirms (Escape leaves the field first).
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(card.get_by_test_id("submit-confirm")).to_contain_text("from the AI's extraction")
    page.keyboard.press("Enter")
    expect(card.locator(".chip.status-submitted")).to_be_visible()
    assert Feedback.objects.get().status == Feedback.Status.SUBMITTED

    # The admin reviews the differences and approves with "a".
    admin = open_as(admin_user)
    admin.click("nav >> text=Review")
    admin.locator("#review-queue a.button", has_text="Review").first.click()
    admin.wait_for_url(f"**/statements/{scene.first.pk}/review/")
    admin.wait_for_load_state()
    expect(admin.locator(".review-col .diff-tag").first).to_be_visible()
    expect(admin.get_by_text("changed: name")).to_be_visible()
    expect(admin.locator(".item.is-added", has_text="Rose")).to_be_visible()
    admin.keyboard.press("a")
    expect(admin.locator(".notice.good")).to_contain_text("Approved alice's coding")
    assert Feedback.objects.get().status == Feedback.Status.APPROVED

    # Approval computed the stored statement F1; the page scores the same for badge and panel.
    result = MetricResult.objects.get(family="extraction", scope="statement", statement=scene.first)
    assert result.status == MetricResult.Status.FRESH
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    badge = page.locator(f"#f1-badge-{scene.first.pk}")
    expect(badge).to_have_text(f"F1 {result.values['aggregate_micro_f1']:.2f}")
    panel = page.locator(f"#f1-panel-{scene.first.pk}")
    panel.locator("summary").click()
    expect(panel.get_by_text("missed (FN): GT Rose")).to_be_visible()
    expect(panel.locator("tr.total")).to_be_visible()


def test_a_lost_update_is_refused_and_the_form_keeps_the_input(open_as, live_server, auditor):
    from playwright.sync_api import expect

    scene = make_scene()
    first_tab = open_as(auditor)
    second_tab = first_tab.context.new_page()
    url = live_server.url + reverse("audit:discussion", args=[scene.discussion.pk])
    first_tab.goto(url)
    first_tab.click(f"#stmt-{scene.first.pk} >> text=Start coding")
    expect(first_tab.locator(".editor-form")).to_be_visible()
    # Both tabs now edit version 1.
    second_tab.goto(url)
    second_tab.click(f"#stmt-{scene.first.pk} >> text=Edit")
    expect(second_tab.locator(".editor-form")).to_be_visible()
    # (The test database is in-memory SQLite, which refuses overlapping writes, so the two
    # saves go one after the other; the second is still based on version 1.)
    field = first_tab.locator("input[name=people-0-name]")
    field.fill("Mine")
    field.press("Tab")
    expect(first_tab.locator(".save-status.ok")).to_contain_text("v2")
    field = second_tab.locator("input[name=people-0-name]")
    field.fill("Theirs")
    field.press("Tab")
    conflict = second_tab.locator(".status-error.conflict")
    expect(conflict).to_contain_text("alice saved version 2 while you were editing")
    expect(second_tab.locator("input[name=people-0-name]")).to_have_value("Theirs")
    assert Feedback.objects.get().edited_extraction["people"][0]["name"] == "Mine"
    assert FeedbackRevision.objects.get(action="conflict").after["people"][0]["name"] == "Theirs"
    # Autosave is paused after a conflict: more typing adds no further conflict revisions.
    field = second_tab.locator("input[name=people-1-name]")
    field.fill("Again")
    field.press("Tab")
    second_tab.wait_for_timeout(500)
    assert FeedbackRevision.objects.filter(action="conflict").count() == 1


def _editing(page, live_server):
    """The auditor's page with the editor open on the scene's first statement."""
    from playwright.sync_api import expect

    scene = make_scene()
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    page.click(f"#stmt-{scene.first.pk} >> text=Start coding")
    expect(page.locator(".editor-form")).to_be_visible()
    return page, Feedback.objects.get()


def test_failed_saves_say_what_went_wrong_and_keep_the_input(open_as, live_server, auditor):
    from playwright.sync_api import expect

    page, feedback = _editing(open_as(auditor), live_server)

    # A network failure: the input stays, the status says so.
    page.route("**/save/", lambda route: route.abort())
    field = page.locator("input[name=people-0-name]")
    field.fill("Offline edit")
    field.press("Tab")
    expect(page.locator(f"#save-status-{feedback.pk}")).to_contain_text("could not be reached")
    expect(field).to_have_value("Offline edit")
    page.unroute("**/save/")

    # An invalid payload in the raw JSON editor: 422, the error is swapped in, text kept.
    page.click("summary:has-text('Raw JSON')")
    textarea = page.locator(f"#json-{feedback.pk}")
    textarea.fill('{"events": [{"id": 1, "kind": "party"}]}')
    page.click("text=Validate and save JSON")
    expect(page.locator(f"#json-status-{feedback.pk}")).to_contain_text(
        "kind: 'party' is not one of: bonded, married"
    )
    expect(textarea).to_have_value('{"events": [{"id": 1, "kind": "party"}]}')
    assert Feedback.objects.get().version == 1


def test_typing_raw_json_survives_an_autosave_of_the_form(open_as, live_server, auditor):
    from playwright.sync_api import expect

    page, feedback = _editing(open_as(auditor), live_server)
    page.click("summary:has-text('Raw JSON')")
    textarea = page.locator(f"#json-{feedback.pk}")
    typed = '{"events": [{"id": 1}]}'
    textarea.fill(typed)
    # The form's autosave lands while the JSON is being typed; its reply refreshes the
    # textarea out of band, which must not wipe the typing.
    field = page.locator("input[name=people-0-name]")
    field.fill("Renamed")
    with page.expect_response("**/save/"):
        field.press("Tab")
    expect(page.locator(".save-status.ok")).to_contain_text("v2")
    expect(textarea).to_have_value(typed)
    # The JSON's own save replies with the stored state: the textarea shows it again.
    textarea.fill('{"people": [], "events": [], "pair_bonds": []}')
    page.click("text=Validate and save JSON")
    expect(textarea).not_to_have_value('{"people": [], "events": [], "pair_bonds": []}')
    expect(textarea).to_contain_text('"people"')


def test_question_mark_shows_the_shortcuts(open_as, live_server, auditor):
    from playwright.sync_api import expect

    scene = make_scene()
    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    page.keyboard.press("?")
    dialog = page.locator("dialog#shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("next / previous statement")
    # It opens at its top, the main keys first, even after it was left scrolled down.
    assert dialog.locator("th").first.text_content() == "Main keys"
    expect(dialog.locator("#shortcuts-title")).to_be_focused()
    page.evaluate("() => { document.getElementById('shortcuts').scrollTop = 10000; }")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.keyboard.press("?")
    expect(dialog.locator("#shortcuts-title")).to_be_focused()
    assert page.evaluate("() => document.getElementById('shortcuts').scrollTop") == 0
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()


def test_family_so_far_loads_when_opened(open_as, live_server, auditor):
    from playwright.sync_api import expect

    scene = make_scene()
    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    state = page.locator(f"#stmt-{scene.second.pk} details.state")
    state.locator("summary").click()
    expect(state.locator(".item.is-here")).to_contain_text("Shift")
    expect(state).to_contain_text("John Smith")  # from statement 1


def test_a_placeholder_statement_loads_when_scrolled_to(open_as, live_server, auditor):
    from playwright.sync_api import expect

    from audit.views.discussion import FULL_CARDS
    from tests.factories import ExtractionFactory, StatementFactory

    scene = make_scene()
    for i in range(FULL_CARDS):
        statement = StatementFactory(
            discussion=scene.discussion, speaker=scene.first.speaker, order=10 + i
        )
        ExtractionFactory(statement=statement, run=scene.run)
    page = open_as(auditor)
    # The queue's "Continue" link points at an anchor like this one.
    url = reverse("audit:discussion", args=[scene.discussion.pk]) + f"#stmt-{statement.pk}"
    page.goto(live_server.url + url)
    card = page.locator(f"#stmt-{statement.pk}")
    expect(card).not_to_have_class(re.compile("lazy"))
    expect(card.get_by_text("Married in Boston")).to_be_visible()
    expect(card.locator("[data-key=edit]")).to_be_visible()
