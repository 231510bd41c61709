"""The history page in headless Chromium at desktop and phone width: folded autosaves, field
changes, a restore naming its revision; screenshots into screenshots/audit/ to look at."""

from __future__ import annotations

import copy

import pytest
from django.urls import reverse

from audit.services import (
    feedback_record_conflict,
    feedback_reject,
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from tests.audit.test_views_support import make_scene
from tests.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def edit(feedback, user, change):
    payload = copy.deepcopy(feedback.edited_extraction)
    change(payload)
    return feedback_save(
        feedback=feedback, user=user, edited_extraction=payload, base_version=feedback.version
    )


def a_session(auditor, admin_user):
    feedback = feedback_start(statement=make_scene().first, auditor=auditor)
    start = feedback.revisions.get()
    for name in ("Jo", "Jon", "Jonathan"):
        feedback = edit(feedback, auditor, lambda p, n=name: p["people"][0].update(name=n))
    feedback = edit(feedback, auditor, lambda p: p["events"][0].update(dateTime="1985-06-02"))
    feedback = feedback_submit(feedback=feedback, user=auditor)
    feedback = feedback_reject(feedback=feedback, admin=admin_user, reason="Keep the AI's date")
    feedback = edit(feedback, auditor, lambda p: p.update(pair_bonds=[]))
    feedback_record_conflict(
        feedback=feedback, user=admin_user, attempted={**feedback.edited_extraction, "delete": [9]}
    )
    feedback = feedback_restore(
        feedback=feedback, revision=start, user=auditor, base_version=feedback.version
    )
    return feedback, start


def test_history_page_reads_as_field_changes_at_both_widths(
    open_as, live_server, auditor, admin_user
):
    from playwright.sync_api import expect

    feedback, _ = a_session(auditor, admin_user)
    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:feedback_history", args=[feedback.pk]))
    history = page.get_by_test_id("history")
    folded = history.locator("li.rev-edit", has_text="4 autosaves")
    expect(folded).to_have_count(1)
    expect(folded.locator(".ch-fields li", has_text="name")).to_have_text("name John → Jonathan")
    expect(folded.locator(".ch-fields li", has_text="dateTime")).to_have_text(
        "dateTime 1985-06-01 → 1985-06-02"
    )
    restored = history.locator("li.rev-restore")
    expect(restored.get_by_test_id("restored-from")).to_contain_text(
        "Restored from revision v1 (start by alice)"
    )
    expect(history.locator("li.rev-restore pre")).to_be_hidden()  # whole JSON on request
    screenshot(page, "audit/11-history-1440", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > 391)
            .map(e => e.tagName + '.' + e.className).slice(0, 5)"""
    )
    assert wide == [], f"the history page scrolls sideways at 390 px: {wide}"
    screenshot(page, "audit/12-history-390", full_page=True)
