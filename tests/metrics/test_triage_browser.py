"""Review triage in headless Chromium: an admin turns triage on; the confident statements leave
the auditor's queue; a QA item is coded; a run with injected errors trips the monitor and the
admin sees triage suspended, and why."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.models import Feedback, TriageSettings, TriageStatement
from audit.services import feedback_approve
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
    pdp,
    person,
)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]


def _payload(name: str, confidence: float) -> dict:
    return pdp(people=[person(-1, name, confidence)])


def _calibrated_run(admin, n: int = 24):
    """A run right and confident on n approved discussions: enough to prove risk <= 10%."""
    run = ExtractionRunFactory()
    for i in range(n):
        statement = StatementFactory(discussion=DiscussionFactory())
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload(f"Ann{i}", 0.95))
        FeedbackFactory(
            statement=statement,
            edited_extraction=_payload(f"Ann{i}", 1.0),
            status=Feedback.Status.APPROVED,
            approved_by=admin,
            approved_at=timezone.now(),
        )
    return run


def _turn_on(page, live_server, run, *, qa_rate: str) -> None:
    page.goto(live_server.url + reverse("metrics:triage_settings", args=[run.pk]))
    page.check("input[name=enabled]")
    page.fill("input[name=alpha]", "0.1")
    page.fill("input[name=delta]", "0.1")
    page.fill("input[name=qa_rate]", qa_rate)
    page.click("button:has-text('Save')")
    page.wait_for_url("**/metrics/**")


def test_triage_takes_statements_out_of_the_queue_and_suspends_on_bad_qa(
    open_as, live_server, admin_user, auditor
):
    from playwright.sync_api import expect

    run = _calibrated_run(admin_user)
    fresh = DiscussionFactory(summary="A new family conversation")
    new = [StatementFactory(discussion=fresh) for _ in range(3)]
    for statement, confidence in zip(new, (0.97, 0.96, 0.30), strict=True):
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload("Bo", confidence))

    admin = open_as(admin_user)
    _turn_on(admin, live_server, run, qa_rate="0")
    card = admin.locator(f"#triage-{run.pk}")
    expect(card.get_by_test_id("triage-state")).to_have_text("active")
    expect(card.get_by_test_id("triage-provisional")).to_have_text("2")
    expect(card.get_by_test_id("triage-threshold")).to_contain_text("τ = 0.950")

    # The auditor: two of the three new statements left the queue, marked where they are shown.
    page = open_as(auditor)
    page.goto(live_server.url + reverse("home") + "?q=new+family")
    row = page.locator("td.summary", has_text="A new family conversation")
    expect(row.locator(".muted.small")).to_have_text("1 subject statement")
    page.goto(live_server.url + reverse("audit:discussion", args=[fresh.pk]))
    expect(page.get_by_test_id("ai-accepted")).to_have_count(2)
    expect(page.locator(f"#stmt-{new[2].pk} [data-testid=ai-accepted]")).to_have_count(0)

    # Injected errors: confident, wrong extractions in new discussions; every accepted one is
    # drawn for QA, so they stay in the queue and auditors code them.
    bad = [StatementFactory(discussion=DiscussionFactory()) for _ in range(3)]
    for statement in bad:
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload("Wrong", 0.99))
    _turn_on(admin, live_server, run, qa_rate="1")
    qa = set(TriageStatement.objects.qa().values_list("statement_id", flat=True))
    assert {s.pk for s in bad} <= qa

    # A QA item coded in the editor, as any statement: the auditor corrects the AI's name.
    page.goto(live_server.url + reverse("audit:discussion", args=[bad[0].discussion_id]))
    page.click(f"#stmt-{bad[0].pk} >> text=Start coding")
    field = page.locator("input[name=people-0-name]")
    field.fill("Right")
    field.press("Tab")
    expect(page.locator(".save-status.ok")).to_contain_text("v2")
    page.click(f"#stmt-{bad[0].pk} >> button:has-text('Submit')")
    # Submitting asks first (what will be submitted); the dialog's Submit confirms.
    confirm = page.locator(f"#stmt-{bad[0].pk} [data-testid=submit-confirm]")
    confirm.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator(f"#stmt-{bad[0].pk} .chip.status-submitted")).to_be_visible()

    # The admin approves the QA codings (the other two coded the same way) ...
    for statement in bad[1:]:
        FeedbackFactory(
            statement=statement,
            auditor=auditor,
            edited_extraction=_payload("Right", 1.0),
            status=Feedback.Status.SUBMITTED,
        )
    for feedback in Feedback.objects.filter(statement__in=bad):
        feedback_approve(feedback=feedback, admin=admin_user)

    # ... and the monitor, fed the QA losses, trips: triage suspends itself.
    admin.goto(live_server.url + reverse("metrics:dashboard") + f"?run={run.pk}")
    card = admin.locator(f"#triage-{run.pk}")
    expect(card.get_by_test_id("triage-state")).to_have_text("suspended")
    expect(card.get_by_test_id("triage-suspended")).to_contain_text("QA monitor")
    expect(card.get_by_test_id("triage-monitor")).to_contain_text("Tripped")
    assert TriageSettings.objects.get(run=run).state == "suspended"
    assert not TriageStatement.objects.provisional().exists()
