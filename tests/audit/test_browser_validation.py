"""In Chromium: a problem shows at its field as soon as autosave stores the draft, submit is
refused with the list, an untouched save changes nothing, and the reviewer sees the note."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.services import feedback_start
from tests.audit.test_views_support import make_scene
from tests.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def open_editor(page, live_server, feedback: Feedback):
    page.goto(live_server.url + reverse("audit:feedback_edit", args=[feedback.pk]))
    page.wait_for_load_state()
    return page.locator(f"#editor-{feedback.pk}")


def test_a_bad_date_shows_at_its_field_and_submit_is_refused_with_the_list(
    open_as, live_server, auditor
):
    from playwright.sync_api import expect

    scene = make_scene()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    page = open_as(auditor)
    editor = open_editor(page, live_server, feedback)

    date = editor.locator("input[name=events-0-dateTime]")
    date.fill("2024-13-45")
    date.press("Tab")
    status = editor.locator(f"#save-status-{feedback.pk}")
    expect(status).to_contain_text("Saved · v2")
    expect(status).to_contain_text("1 problem to fix before submit")
    row_errors = editor.locator(f"#row-errors-{feedback.pk}-events-0")
    expect(row_errors).to_contain_text("Date: '2024-13-45' is not a date with a year")
    expect(date).to_have_attribute("aria-invalid", "true")
    assert Feedback.objects.get().edited_extraction["events"][0]["dateTime"] == "2024-13-45"
    screenshot(page, "editor-problem-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "editor-problem-390")
    page.set_viewport_size({"width": 1440, "height": 900})

    editor.get_by_role("button", name="Save and submit for review").click()
    page.get_by_test_id("submit-confirm").get_by_role("button", name="Submit", exact=True).click()
    refused = editor.locator(f"#save-status-{feedback.pk}.status-error")
    expect(refused).to_contain_text("not submitted. Fix these problems before you submit.")
    expect(refused).to_contain_text(
        "John Smith's married event, date: '2024-13-45' is not a date with a year"
    )
    assert Feedback.objects.get().status == Feedback.Status.DRAFT

    # Fixing the date clears the message at once; then submit goes through.
    date.fill("June 1985")
    date.press("Tab")
    expect(editor.locator(f"#save-status-{feedback.pk}")).to_contain_text("Saved · v3")
    expect(row_errors).to_be_empty()
    expect(date).not_to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Save and submit for review").click()
    page.get_by_test_id("submit-confirm").get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator(".chip.status-submitted").first).to_be_visible()
    assert Feedback.objects.get().status == Feedback.Status.SUBMITTED


def test_saving_an_untouched_form_changes_nothing(open_as, live_server, auditor):
    from playwright.sync_api import expect

    scene = make_scene()
    scene.extraction.pdp_deltas["events"][0].update(dateTime="May ", confidence=0.54)
    scene.extraction.save()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    page = open_as(auditor)
    editor = open_editor(page, live_server, feedback)

    editor.locator(".editor-actions button[value=save]").click()
    # The reply to the save: still version 1, stamped with the time of the save.
    status = editor.locator(f"#save-status-{feedback.pk}")
    expect(status).to_have_text(re.compile(r"Saved · v1 · \d\d:\d\d:\d\d"))
    feedback.refresh_from_db()
    assert feedback.version == 1
    assert feedback.edited_extraction["events"][0]["dateTime"] == "May "
    assert feedback.edited_extraction["events"][0]["confidence"] == 0.54
    assert list(feedback.revisions.values_list("action", flat=True)) == ["start"]


def test_the_note_for_the_reviewer_is_shown_beside_the_diff(
    open_as, live_server, auditor, admin_user
):
    from playwright.sync_api import expect

    scene = make_scene()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    page = open_as(auditor)
    editor = open_editor(page, live_server, feedback)
    note = editor.locator("textarea[name=comment]")
    note.fill("Not sure they married in Boston; she says Cambridge later.")
    note.press("Tab")
    expect(editor.locator(f"#save-status-{feedback.pk}")).to_contain_text("Saved · v2")
    page.get_by_role("button", name="Save and submit for review").click()
    page.keyboard.press("Enter")  # the confirm's Submit has the focus
    expect(page.locator(".chip.status-submitted").first).to_be_visible()

    admin = open_as(admin_user)
    admin.goto(live_server.url + reverse("audit:statement_review", args=[scene.first.pk]))
    column = admin.locator(".review-col", has_text=auditor.get_username())
    expect(column.get_by_test_id("reviewer-note")).to_contain_text(
        "Note from alice: Not sure they married in Boston; she says Cambridge later."
    )
    expect(column.locator(".item").first).to_be_visible()
    screenshot(admin, "review-note-1440")
