"""Screenshots of the main audit pages at desktop size, into screenshots/ (gitignored).

Also a smoke test: every page loads without JavaScript errors. Look at the pictures after
changing templates or CSS: `pytest tests/audit/test_browser_screenshots.py`.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Speaker
from audit.services import (
    feedback_approve,
    feedback_reject,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from tests.conftest import SCREENSHOTS, screenshot
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    SpeakerFactory,
    StatementFactory,
    pdp,
)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

CONVERSATION = [
    (
        "subject",
        "My parents, Robert and Linda Hayes, married in 1978 in Ohio.",
        pdp(
            people=[
                {
                    "id": -1,
                    "name": "Robert",
                    "last_name": "Hayes",
                    "gender": "male",
                    "confidence": 0.92,
                },
                {
                    "id": -2,
                    "name": "Linda",
                    "last_name": "Hayes",
                    "gender": "female",
                    "confidence": 0.9,
                },
            ],
            events=[
                {
                    "id": -3,
                    "kind": "married",
                    "person": -1,
                    "spouse": -2,
                    "dateTime": "1978",
                    "dateCertainty": "approximate",
                    "description": "Married in Ohio",
                    "confidence": 0.8,
                }
            ],
            pair_bonds=[
                {"id": -4, "person_a": -1, "person_b": -2, "married": True, "confidence": 0.85}
            ],
        ),
    ),
    ("expert", "What was it like at home when you were little?", None),
    (
        "subject",
        "I was born in 1982. Dad drank a lot after he lost his job in 1990, "
        "and Mom and he fought constantly.",
        pdp(
            people=[
                {
                    "id": -5,
                    "name": "Sam",
                    "last_name": "Hayes",
                    "gender": "unknown",
                    "parents": -4,
                    "confidence": 0.7,
                }
            ],
            events=[
                {
                    "id": -6,
                    "kind": "birth",
                    "person": -5,
                    "dateTime": "1982",
                    "dateCertainty": "certain",
                    "confidence": 0.9,
                },
                {
                    "id": -7,
                    "kind": "shift",
                    "person": -1,
                    "dateTime": "1990",
                    "dateCertainty": "approximate",
                    "description": "Lost his job, started drinking",
                    "symptom": "up",
                    "anxiety": "up",
                    "functioning": "down",
                    "confidence": 0.6,
                },
                {
                    "id": -8,
                    "kind": "shift",
                    "person": -2,
                    "description": "Constant fights with Robert",
                    "relationship": "conflict",
                    "relationshipTargets": [-1],
                    "confidence": 0.55,
                },
            ],
        ),
    ),
    ("expert", "How did you cope with that?", None),
    (
        "subject",
        "I spent most evenings at my aunt Carol's place. She was the calm one.",
        pdp(
            people=[{"id": -9, "name": "Carol", "gender": "female", "confidence": 0.75}],
            events=[
                {
                    "id": -10,
                    "kind": "shift",
                    "person": -5,
                    "description": "Spent evenings at aunt's",
                    "relationship": "away",
                    "relationshipTargets": [-1, -2],
                    "relationshipTriangles": [-9],
                    "confidence": 0.5,
                }
            ],
        ),
    ),
    (
        "subject",
        "They divorced in 1995 and Dad moved to Denver.",
        pdp(
            events=[
                {
                    "id": -11,
                    "kind": "divorced",
                    "person": -1,
                    "spouse": -2,
                    "dateTime": "1995",
                    "dateCertainty": "certain",
                    "confidence": 0.85,
                },
                {
                    "id": -12,
                    "kind": "moved",
                    "person": -1,
                    "location": "Denver",
                    "dateTime": "1995",
                    "confidence": 0.7,
                },
            ],
        ),
    ),
]


def seed(auditor, second_auditor, admin_user):
    discussion = DiscussionFactory(
        summary="Hayes family: father's drinking after a job loss, "
        "parents' divorce, the aunt as a refuge"
    )
    for i in range(6):
        DiscussionFactory(summary=f"Intake interview {i + 2}: family of origin and recent moves")
    older = ExtractionRunFactory(model_name="gpt-4o", prompt_version="2025-03")
    run = ExtractionRunFactory(model_name="gpt-4o", prompt_version="2025-05")
    subject = SpeakerFactory(discussion=discussion, name="Sam", type=Speaker.Type.SUBJECT)
    coach = SpeakerFactory(discussion=discussion, name="Coach", type=Speaker.Type.EXPERT)
    statements = []
    for order, (kind, text, payload) in enumerate(CONVERSATION, start=1):
        speaker = subject if kind == "subject" else coach
        statement = StatementFactory(discussion=discussion, speaker=speaker, order=order, text=text)
        if payload is not None:
            ExtractionFactory(statement=statement, run=run, pdp_deltas=payload)
            ExtractionFactory(statement=statement, run=older, pdp_deltas=payload)
        statements.append(statement)
    first, _, third, _, fifth, sixth = statements
    # Statement 1: alice corrected the marriage date; approved (F1 computed on approval).
    mine = feedback_start(statement=first, auditor=auditor)
    payload = mine.edited_extraction
    payload["events"][0].update(dateTime="1978-06-10", dateCertainty="certain", confidence=1.0)
    mine = feedback_save(feedback=mine, user=auditor, edited_extraction=payload, base_version=1)
    feedback_approve(feedback=feedback_submit(feedback=mine, user=auditor), admin=admin_user)
    # Statement 3: alice and bob both submitted, with different corrections.
    mine = feedback_start(statement=third, auditor=auditor)
    payload = mine.edited_extraction
    payload["people"][0]["gender"] = "female"
    payload["events"][2]["relationshipTargets"] = [-1, -5]
    payload["pair_bonds"] = []
    mine = feedback_save(feedback=mine, user=auditor, edited_extraction=payload, base_version=1)
    feedback_submit(feedback=mine, user=auditor)
    theirs = feedback_start(statement=third, auditor=second_auditor)
    payload = theirs.edited_extraction
    payload["events"] = payload["events"][:2]
    payload["people"].append(
        {"id": -20, "name": "Grandpa", "last_name": "Hayes", "confidence": 1.0}
    )
    theirs = feedback_save(
        feedback=theirs, user=second_auditor, edited_extraction=payload, base_version=1
    )
    feedback_submit(feedback=theirs, user=second_auditor)
    # Statement 5: sent back to alice.
    rejected = feedback_submit(
        feedback=feedback_start(statement=fifth, auditor=auditor), user=auditor
    )
    feedback_reject(
        feedback=rejected, admin=admin_user, reason="Carol is Linda's sister: add the parents."
    )
    feedback_start(statement=sixth, auditor=auditor)
    return discussion, statements


def shot(page, name: str, *, full_page: bool = False) -> None:
    screenshot(page, f"audit/{name}", full_page=full_page)


def test_screenshots_of_the_main_pages(open_as, live_server, auditor, second_auditor, admin_user):
    discussion, statements = seed(auditor, second_auditor, admin_user)
    first, _, third, _, _, sixth = statements
    url = live_server.url

    page = open_as(auditor)
    shot(page, "01-queue")
    page.goto(url + reverse("audit:discussion", args=[discussion.pk]))
    page.locator(f"#f1-panel-{first.pk} summary").click()
    shot(page, "02-discussion", full_page=True)
    page.goto(url + reverse("audit:discussion", args=[discussion.pk]) + f"#stmt-{sixth.pk}")
    page.locator(f"#stmt-{sixth.pk} a[data-key=edit]").click()
    page.wait_for_selector(f"#stmt-{sixth.pk} .editor")
    page.locator(f"#stmt-{sixth.pk}").scroll_into_view_if_needed()
    shot(page, "03-editor")
    page.locator(f"#stmt-{sixth.pk} select[name=events-0-kind]").select_option("married")
    page.locator(f"#stmt-{sixth.pk} input[name=events-0-description]").fill("x" * 10)
    page.locator(f"#stmt-{sixth.pk} .json-editor summary").click()
    page.locator(f"#stmt-{sixth.pk} textarea[name=payload]").fill('{"events": [{"id": 1}]}')
    page.locator(f"#stmt-{sixth.pk}").get_by_role("button", name="Validate and save JSON").click()
    page.wait_for_selector(f"#stmt-{sixth.pk} .status-error")
    shot(page, "04-editor-errors", full_page=True)
    page.goto(url + reverse("audit:statement", args=[third.pk]))
    shot(page, "05-statement-page", full_page=True)
    page.goto(url + reverse("audit:discussion", args=[discussion.pk]))
    page.keyboard.press("?")
    shot(page, "06-shortcuts")

    admin = open_as(admin_user)
    admin.goto(url + reverse("audit:review_queue"))
    shot(admin, "07-review-queue")
    admin.goto(url + reverse("audit:statement_review", args=[third.pk]))
    shot(admin, "08-review", full_page=True)
    feedback = third.feedback.get(auditor=auditor)
    admin.goto(url + reverse("audit:feedback_history", args=[feedback.pk]))
    shot(admin, "09-history")
    admin.goto(url + reverse("audit:discussion", args=[discussion.pk]))
    shot(admin, "10-discussion-admin")
    assert len(list((SCREENSHOTS / "audit").glob("*.png"))) >= 10
