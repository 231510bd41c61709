"""In Chromium: two auditors' codings with one disagreement are adjudicated — the agreed items
merged automatically, the reviewer picks the disputed one by key — and another admin approves
the result. The screen passes axe-core at 1440 and 390 px."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Adjudication, Feedback
from tests.audit.adjudication_fixtures import alice_resubmits_the_move_as_a_new_event
from tests.conftest import screenshot
from tests.site_pages import axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]
pytest_plugins = ["tests.audit.adjudication_fixtures"]


def test_adjudicate_by_keys_then_another_admin_approves(
    open_as, live_server, admin_user, second_admin, two_codings
):
    from playwright.sync_api import expect

    statement = two_codings.statement
    page = open_as(admin_user)
    # From the review page, where the codings are side by side.
    page.goto(live_server.url + reverse("audit:statement_review", args=[statement.pk]))
    page.get_by_test_id("adjudicate-link").click()
    page.wait_for_url(f"**{reverse('audit:adjudicate', args=[statement.pk])}")
    summary = page.get_by_test_id("adj-summary")
    expect(summary).to_contain_text("4 items unanimous")
    expect(summary).to_contain_text("1 disputed")
    disputed = page.locator("[data-adj-item]")
    expect(disputed).to_have_count(1)
    expect(disputed.locator(".differs dt")).to_have_text(["dateTime", "dateTime"])
    expect(disputed).to_have_class("adj-item is-disputed is-current")
    screenshot(page, "adjudication-1440")
    assert axe_serious(page) == [], describe(axe_serious(page))
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "adjudication-390")
    assert axe_serious(page) == [], describe(axe_serious(page))
    page.set_viewport_size({"width": 1440, "height": 900})
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = false; })")

    page.keyboard.press("2")  # bob's version of the focused disputed item
    expect(page.get_by_test_id("adj-unresolved")).to_have_text("0")
    expect(page.locator(".adj-version.is-chosen h4")).to_contain_text("bob")
    page.keyboard.press("s")
    expect(page.get_by_test_id("adj-feedback")).to_contain_text("submitted")
    screenshot(page, "adjudication-submitted-1440")

    produced = Adjudication.objects.get(statement=statement).feedback
    assert produced.auditor == admin_user and produced.status == Feedback.Status.SUBMITTED
    assert [e["dateTime"] for e in produced.edited_extraction["events"]] == ["1985-06-01", "1991"]

    # Four eyes: the adjudicator cannot approve it; another admin does, on the review page.
    page.goto(live_server.url + reverse("audit:statement_review", args=[statement.pk]))
    expect(page.get_by_test_id("adjudicated-credit")).to_contain_text("alice, bob")
    expect(page.get_by_test_id("adjudicated-credit")).to_contain_text("4 items unanimous, 1 adj")
    expect(page.get_by_text("Four eyes: you coded this")).to_be_visible()
    other = open_as(second_admin)
    other.goto(live_server.url + reverse("audit:statement_review", args=[statement.pk]))
    column = other.locator("section.review-col", has=other.get_by_test_id("adjudicated-credit"))
    column.get_by_role("button", name="Approve and next").click()
    expect(other.get_by_text("Approved carol's coding as ground truth.")).to_be_visible()
    produced.refresh_from_db()
    assert produced.status == Feedback.Status.APPROVED and produced.approved_by == second_admin


def test_edit_and_remerge_in_the_browser(open_as, live_server, admin_user, two_codings):
    from playwright.sync_api import expect

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("audit:adjudicate", args=[two_codings.statement.pk]))
    page.keyboard.press("e")
    box = page.locator("[data-adj-item] textarea")
    expect(box).to_be_focused()
    box.fill('{"kind": "moved", "person": -1, "description": "Moved", "dateTime": "1992"}')
    page.get_by_role("button", name="Use this version").click()
    expect(page.locator(".adj-edited")).to_contain_text("1992")
    page.get_by_role("button", name="Re-merge").click()
    expect(page.get_by_test_id("adj-unresolved")).to_have_text("1")
    assert Adjudication.objects.get().choices == {}


def test_a_choice_reset_by_a_resubmission_is_announced(
    open_as, live_server, admin_user, second_admin, two_codings
):
    from playwright.sync_api import expect

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("audit:adjudicate", args=[two_codings.statement.pk]))
    page.keyboard.press("2")
    expect(page.get_by_test_id("adj-unresolved")).to_have_text("0")
    alice_resubmits_the_move_as_a_new_event(two_codings, second_admin)
    page.reload()
    notice = page.get_by_test_id("adj-reset")
    expect(notice).to_contain_text("1 earlier choice was reset: alice changed their coding")
    expect(notice).to_contain_text("events:0:-5 (coder 2's version)")
    screenshot(page, "adjudication-reset-1440")
    assert axe_serious(page) == [], describe(axe_serious(page))
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "adjudication-reset-390")
    assert axe_serious(page) == [], describe(axe_serious(page))
