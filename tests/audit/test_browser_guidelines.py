"""In Chromium: an admin writes the guidelines and an auditor reads them beside the editor
(key g), with the codes' definitions in the shortcut help; a reviewer sends a coding back with
a reason, the auditor replies in the thread and resubmits. axe-core finds nothing serious on
the new pages."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit.models import Comment, Feedback, GuidelineVersion
from audit.services import feedback_start, feedback_submit
from tests.audit.test_views_support import make_scene
from tests.conftest import screenshot
from tests.site_pages import axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def shots(page, name: str) -> None:
    screenshot(page, f"{name}-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, f"{name}-390")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, name
    page.set_viewport_size({"width": 1440, "height": 900})


def test_admin_writes_guidelines_and_the_auditor_reads_them_in_the_editor(
    open_as, live_server, admin_user, auditor
):
    from playwright.sync_api import expect

    scene = make_scene()
    feedback_start(statement=scene.first, auditor=auditor)
    admin = open_as(admin_user)
    admin.goto(live_server.url + reverse("audit:guidelines"))
    source = admin.locator("#guidelines-source")
    expect(source).to_contain_text("## SARF variables")  # the first draft: the definitions
    source.fill(
        "# House rules\n\nCreate a person only when **named**.\n\n- one\n- <script>x</script>"
    )
    admin.get_by_role("button", name="Preview").click()
    expect(admin.locator("#guidelines-preview strong")).to_have_text("named")
    expect(admin.locator("#guidelines-preview")).to_contain_text("<script>x</script>")
    admin.fill("input[name=note]", "first rules")
    admin.get_by_role("button", name="Save as a new version").click()
    expect(admin.get_by_test_id("guidelines-version")).to_have_text("v1")
    expect(admin.get_by_test_id("guidelines-text").locator("h1")).to_have_text("House rules")
    assert axe_serious(admin) == [], describe(axe_serious(admin))
    shots(admin, "guidelines-admin")
    assert GuidelineVersion.objects.get().note == "first rules"

    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    panel = page.get_by_test_id("guide-panel")
    expect(panel).to_be_hidden()
    page.keyboard.press("g")
    expect(panel).to_be_visible()
    expect(panel.locator("h1")).to_have_text("House rules")
    expect(panel).to_contain_text("v1")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "guide-panel-390-viewport", full_page=False)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator(f"#stmt-{scene.first.pk}").click()
    page.keyboard.press("e")  # the editor opens beside the panel
    expect(page.locator(".editor-form")).to_be_visible()
    symptom = page.locator('label[title^="Symptom:"]').first
    expect(symptom).to_have_attribute("title", re.compile("physical, emotional or social"))
    cutoff = page.locator('select[name$="-relationship"] option', has_text="cutoff").first
    expect(cutoff).to_have_attribute("title", re.compile("breaking off contact"))
    assert axe_serious(page) == [], describe(axe_serious(page))
    shots(page, "editor-guidelines-panel")
    page.keyboard.press("Escape")
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("g")
    expect(panel).to_be_hidden()
    page.keyboard.press("?")
    help_dialog = page.get_by_test_id("shortcut-definitions")
    expect(help_dialog).to_contain_text("cutoff")
    expect(page.locator("#shortcuts")).to_contain_text("show or hide the coding guidelines")


def test_reviewer_rejects_with_a_comment_the_auditor_replies_and_resubmits(
    open_as, live_server, admin_user, auditor
):
    from playwright.sync_api import expect

    scene = make_scene()
    feedback = feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )
    admin = open_as(admin_user)
    admin.goto(live_server.url + reverse("audit:statement_review", args=[scene.first.pk]))
    admin.locator("details.reject summary").first.click()
    admin.fill("textarea[name=reason]", "Add the wedding date, @alice")
    admin.get_by_role("button", name="Send back as needs changes").click()
    expect(admin.get_by_test_id("thread")).to_contain_text("Add the wedding date")
    assert Comment.objects.get().kind == "rejection"

    page = open_as(auditor)
    expect(page.get_by_test_id("inbox")).to_contain_text("1")
    expect(page.get_by_test_id("unread-threads")).to_contain_text("#1")
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    card = page.locator(f"#stmt-{scene.first.pk}")
    card.locator("details.thread-fold summary").click()
    thread = card.get_by_test_id("thread")
    expect(thread).to_contain_text("Add the wedding date")
    expect(thread).to_contain_text("sent back")
    thread.locator("textarea[name=body]").fill("Added it, thanks @carol")
    thread.get_by_role("button", name="Comment").click()
    expect(card.get_by_test_id("comment")).to_have_count(2)
    reply = Comment.objects.order_by("id").last()
    assert (reply.author, reply.feedback_id) == (auditor, feedback.pk)  # about my coding
    assert axe_serious(page) == [], describe(axe_serious(page))
    shots(page, "thread-reply")
    page.reload()  # the header's badge counts on the next page: the thread was read
    expect(page.get_by_test_id("inbox")).to_have_text("Inbox")
    card = page.locator(f"#stmt-{scene.first.pk}")

    card.get_by_role("button", name="Submit").first.click()
    card.get_by_test_id("submit-confirm").get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator(f"#stmt-{scene.first.pk} .chip.status-submitted")).to_be_visible()
    assert Feedback.objects.get(pk=feedback.pk).status == Feedback.Status.SUBMITTED

    admin.goto(live_server.url + "/")
    expect(admin.get_by_test_id("unread-threads")).to_contain_text("#1")
    expect(admin.get_by_test_id("inbox")).to_contain_text("1")  # mentioned and unread
    admin.goto(live_server.url + reverse("audit:inbox"))
    expect(admin.get_by_test_id("mentions")).to_contain_text("Added it")
    shots(admin, "inbox")
    admin.goto(live_server.url + reverse("audit:statement_review", args=[scene.first.pk]))
    expect(admin.get_by_test_id("thread")).to_contain_text("Added it, thanks")
