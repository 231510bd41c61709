"""In Chromium, a team's coding round: an admin assigns two discussions to two auditors with a
50% overlap sample; each auditor skips one statement and codes the rest with submit-and-next;
the admin reviews with approve-and-next; the team page shows the right counts."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Assignment, Feedback
from tests.api_fixtures import make_discussion
from tests.conftest import screenshot
from tests.factories import ExtractionFactory, ExtractionRunFactory
from tests.site_pages import axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


@pytest.fixture
def two_discussions():
    run = ExtractionRunFactory()
    found = []
    for summary in ("The Smith family", "The Jones family"):
        discussion, statements = make_discussion(summary, n_subject=3)
        for statement in statements[1:]:
            ExtractionFactory(statement=statement, run=run)
        found.append(discussion)
    return found


def assign_with_overlap(page, live_server, discussions, auditors):
    from playwright.sync_api import expect

    page.goto(live_server.url + reverse("audit:assignments"))
    form = page.get_by_test_id("assign-form")
    for discussion in discussions:
        form.get_by_label(f"#{discussion.pk} ").check()
    for auditor in auditors:
        form.get_by_label(auditor.get_username(), exact=True).check()
    form.get_by_label("Round-robin").check()
    form.get_by_label("Overlap sample (%)").fill("50")
    screenshot(page, "team-assign-1440")
    form.get_by_role("button", name="Assign").click()
    expect(page.locator(".messages")).to_contain_text("Assigned 9 statement(s), 3 of them")


def code_my_round(page, live_server, *, skip_reason: str):
    """From the queue: n opens the first statement; x skips it with a reason; then n submits
    and opens the next, until nothing is left."""
    from playwright.sync_api import expect

    page.goto(live_server.url + reverse("home"))
    expect(page.get_by_test_id("my-assignments")).to_contain_text("to code")
    page.keyboard.press("n")
    page.wait_for_url("**/audit/feedback/*/edit/")
    page.keyboard.press("x")
    skip = page.locator("details.skip[open]")
    skip.get_by_label("Why").select_option(label=skip_reason)
    skip.get_by_role("button", name="Skip and next").click()
    expect(page.locator(".messages")).to_contain_text("Skipped statement")
    for _ in range(10):
        if "/edit/" not in page.url:
            break
        current = page.url
        page.keyboard.press("n")
        page.keyboard.press("Enter")  # confirm the submit
        page.wait_for_url(lambda url, current=current: url != current)
    expect(page.locator(".messages")).to_contain_text("Nothing left that needs you")


def review_all(page, live_server) -> int:
    """From the review home: approve-and-next until nothing waits; `a` where one coding waits,
    the first column's button where two auditors coded the statement (the overlap sample)."""
    from playwright.sync_api import expect

    page.goto(live_server.url + reverse("home"))
    page.get_by_test_id("start-review").click()
    page.wait_for_url("**/review/")
    approved = 0
    for _ in range(12):
        current = page.url
        quick = page.locator('[data-key="approve"]')
        if quick.count():
            page.keyboard.press("a")
        else:
            page.get_by_role("button", name="Approve and next").first.click()
        approved += 1
        done = page.locator(".notice.good", has_text="Nothing else waits for review")
        page.wait_for_function(
            "([url]) => location.href !== url || document.querySelector('.notice.good')",
            arg=[current],
        )
        if done.count():
            break
    expect(page.locator(".notice.good")).to_contain_text("Nothing else waits for review")
    return approved


def test_a_team_coding_round(
    open_as, live_server, admin_user, auditor, second_auditor, two_discussions
):
    from playwright.sync_api import expect

    admin = open_as(admin_user)
    assign_with_overlap(admin, live_server, two_discussions, [auditor, second_auditor])
    overlap = set(Assignment.objects.filter(overlap=True).values_list("statement_id", flat=True))
    assert len(overlap) == 3  # half of six statements, rounded

    alice = open_as(auditor)
    screenshot(alice, "team-my-queue-1440")
    assert_accessible(alice)
    code_my_round(alice, live_server, skip_reason="Unclear")
    bob = open_as(second_auditor)
    code_my_round(bob, live_server, skip_reason="Needs context")

    counts = {}
    for user in (auditor, second_auditor):
        mine = Assignment.objects.filter(auditor=user)
        counts[user.get_username()] = {
            "assigned": mine.count(),
            "skipped": mine.filter(status="skipped").count(),
            "submitted": mine.filter(status="submitted").count(),
        }
        assert counts[user.get_username()]["skipped"] == 1
        assert counts[user.get_username()]["submitted"] == mine.count() - 1
        sent = Feedback.objects.filter(auditor=user, status="submitted").count()
        assert sent == mine.count() - 1

    admin.goto(live_server.url + reverse("home"))
    expect(admin.get_by_role("heading", name="Review home")).to_be_visible()
    screenshot(admin, "team-review-home-1440")
    approved = review_all(admin, live_server)
    coded = Feedback.objects.exclude(status="draft").values("statement").distinct().count()
    assert approved == coded == Feedback.objects.filter(status="approved").count()

    admin.goto(live_server.url + reverse("audit:team"))
    table = admin.get_by_test_id("team-auditors")
    for name, expected in counts.items():
        row = table.locator(f'tr[data-row="{name}"]')
        approved_here = Feedback.objects.filter(auditor__username=name, status="approved").count()
        expect(row.locator('[data-col="assigned"]')).to_have_text(str(expected["assigned"]))
        expect(row.locator('[data-col="submitted"]')).to_have_text(str(expected["submitted"]))
        expect(row.locator('[data-col="skipped"]')).to_have_text("1")
        expect(row.locator('[data-col="approved"]')).to_have_text(str(approved_here))
    screenshot(admin, "team-page-1440")
    assert_accessible(admin)
    admin.set_viewport_size({"width": 390, "height": 844})
    screenshot(admin, "team-page-390")
    admin.goto(live_server.url + reverse("audit:skipped"))
    expect(admin.get_by_test_id("skipped")).to_contain_text("Needs context")
    assert_accessible(admin)


def assert_accessible(page) -> None:
    violations = axe_serious(page)
    assert violations == [], describe(violations)
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.viewport_size["width"]
    assert width <= viewport, f"{page.url} is {width} px wide at {viewport} px"
