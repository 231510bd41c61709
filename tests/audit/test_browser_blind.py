"""Blind review in headless Chromium: the coder sees no F1 badge or panel before submitting,
and sees them once submitted (issue 15 §4)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import BlindReview, Feedback
from tests.audit.test_views_pages import approve_with_metric
from tests.audit.test_views_support import make_scene
from tests.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def test_blind_coder_sees_no_f1_until_submitting(
    open_as, live_server, auditor, second_auditor, admin_user
):
    from playwright.sync_api import expect

    scene = make_scene()
    _, result = approve_with_metric(scene, second_auditor, admin_user)
    BlindReview.objects.create(statement=scene.first, marked_by=admin_user)
    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:discussion", args=[scene.discussion.pk]))
    card = page.locator(f"#stmt-{scene.first.pk}")
    expect(card.get_by_test_id("blind-sealed")).to_be_visible()
    expect(card.locator(f"#f1-badge-{scene.first.pk}")).to_have_count(0)
    expect(card.locator(f"#f1-panel-{scene.first.pk}")).to_have_count(0)
    expect(card.get_by_text("Blind review: code this statement")).to_be_visible()
    card.scroll_into_view_if_needed()
    screenshot(page, "audit/13-blind-before-submit", full_page=False)

    card.click()
    page.keyboard.press("e")
    card.get_by_role("button", name="+ Person").click()
    name = card.locator("input[name=people-0-name]")
    name.fill("John")
    name.press("Tab")
    expect(card.locator(".editor-bar [id^=save-status]")).to_contain_text("Saved")
    expect(card.locator(f"#f1-badge-{scene.first.pk}")).to_have_count(0)

    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.keyboard.press("Enter")  # confirm
    expect(card.locator(".chip.status-submitted")).to_be_visible()
    assert Feedback.objects.get(auditor=auditor).blind
    badge = card.locator(f"#f1-badge-{scene.first.pk}")
    expect(badge).to_have_text(f"F1 {result.values['aggregate_micro_f1']:.2f}")
    expect(card.locator(f"#f1-panel-{scene.first.pk}")).to_be_visible()
    expect(card.get_by_test_id("blind-sealed")).to_have_count(0)
    screenshot(page, "audit/14-blind-after-submit", full_page=False)
