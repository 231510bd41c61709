"""In Chromium: replacing approved ground truth is explicit (the `a` key asks first, showing what
is replaced), and the review queue marks statements that already have approved ground truth."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.services import feedback_approve, feedback_start, feedback_submit
from tests.audit.test_views_support import make_scene
from tests.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]
S = Feedback.Status


def submitted(statement, user) -> Feedback:
    return feedback_submit(feedback=feedback_start(statement=statement, auditor=user), user=user)


@pytest.fixture
def replacing(auditor, second_auditor, admin_user):
    """alice's coding of the first statement is approved; bob's waits for review."""
    scene = make_scene()
    alice = submitted(scene.first, auditor)
    alice = feedback_approve(feedback=alice, admin=admin_user, base_version=alice.version)
    bob = submitted(scene.first, second_auditor)
    return scene, alice, bob


def test_the_a_key_asks_before_replacing_approved_ground_truth(
    open_as, live_server, admin_user, replacing
):
    from playwright.sync_api import expect

    scene, alice, bob = replacing
    page = open_as(admin_user)
    page.goto(live_server.url + reverse("audit:statement_review", args=[scene.first.pk]))
    expect(page.locator(f"#has-approved-{scene.first.pk}")).to_contain_text("alice's coding")

    page.keyboard.press("a")
    confirm = page.locator(f"#replace-{bob.pk}")
    expect(confirm).to_have_attribute("open", "")
    expect(confirm).to_contain_text("already has approved ground truth")
    expect(confirm).to_contain_text("alice's coding")
    screenshot(page, "review-replace-confirm-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "review-replace-confirm-390")
    page.set_viewport_size({"width": 1440, "height": 900})
    # Nothing was replaced by the key alone.
    assert Feedback.objects.get(pk=alice.pk).status == S.APPROVED
    assert Feedback.objects.get(pk=bob.pk).status == S.SUBMITTED

    confirm.get_by_role("button", name="Replace the approved ground truth").click()
    expect(page.locator(".notice.good")).to_contain_text("Approved bob's coding")
    assert Feedback.objects.get(pk=bob.pk).status == S.APPROVED
    assert Feedback.objects.get(pk=alice.pk).status == S.SUBMITTED


def test_the_review_queue_marks_statements_with_approved_ground_truth(
    open_as, live_server, admin_user, replacing
):
    from playwright.sync_api import expect

    _, _, bob = replacing
    page = open_as(admin_user)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(live_server.url + reverse("audit:review_queue"))
    marker = page.locator(".has-approved")
    expect(marker).to_have_count(1)
    expect(marker).to_contain_text("has approved GT")
    screenshot(page, "review-queue-marker-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "review-queue-marker-390")
    page.set_viewport_size({"width": 1440, "height": 900})

    # Bulk approval without ticking "replace" is refused and approves nothing.
    page.get_by_role("button", name="Approve all 1").click()
    expect(page.locator("#review-messages")).to_contain_text("Nothing was approved")
    assert Feedback.objects.get(pk=bob.pk).status == S.SUBMITTED

    page.get_by_label("replace the approved ground truth of 1 statement").check()
    page.get_by_role("button", name="Approve all 1").click()
    expect(page.locator("#review-queue")).to_contain_text("Approved 1 statements coded by bob")
    assert Feedback.objects.get(pk=bob.pk).status == S.APPROVED
