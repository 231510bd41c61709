"""The AI item and the auditor's item on the same row, in headless Chromium: on the big
statement the editor pairs them with the extraction matcher (audit.selectors.alignment), whatever
the order of the coding or the ids it gave; items only one side has say so. At 390 px the AI
item stacks above its row and the page does not scroll sideways."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.services import feedback_save, feedback_start
from tests.audit.test_browser_big_statement import big_pdp
from tests.conftest import screenshot
from tests.factories import ExtractionFactory, ExtractionRunFactory, StatementFactory
from tests.site_pages import axe_serious

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

NEW_ODA = -500  # Oda deleted and added again by the auditor: a new id, the same person


def _renumbered(payload: dict, old: int, new: int) -> dict:
    for person in payload["people"]:
        person["id"] = new if person["id"] == old else person["id"]
    for event in payload["events"]:
        event["person"] = new if event["person"] == old else event["person"]
        event["relationshipTargets"] = [
            new if t == old else t for t in event["relationshipTargets"]
        ]
    return payload


@pytest.fixture
def reordered_coding(auditor):
    statement = StatementFactory(text="A long story about the whole Hayes family.")
    ExtractionFactory(statement=statement, run=ExtractionRunFactory(), pdp_deltas=big_pdp())
    feedback = feedback_start(statement=statement, auditor=auditor)
    payload = _renumbered(feedback.edited_extraction, -15, NEW_ODA)
    payload["events"].reverse()  # the auditor's order is not the AI's
    payload["people"].append({"id": -600, "name": "Zed", "last_name": "Quill"})
    removed_bond = payload["pair_bonds"].pop()  # Ann & Ned: not a couple, says the auditor
    feedback_save(
        feedback=feedback, user=auditor, edited_extraction=payload, base_version=feedback.version
    )
    return feedback, removed_bond


def test_ai_item_sits_beside_the_coded_item_it_corresponds_to(
    open_as, live_server, auditor, reordered_coding
):
    from playwright.sync_api import expect

    feedback, removed_bond = reordered_coding
    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:feedback_edit", args=[feedback.pk]))
    editor = page.locator(".editor")
    for kind in ("people", "events", "pair_bonds"):
        editor.locator(f"details.ed-fold[data-kind={kind}] > summary").click()

    people = editor.locator("details[data-kind=people] .ed-pair")
    expect(people).to_have_count(16)
    for index in range(16):
        pair = people.nth(index)
        name = pair.locator("input[name$=-name]").input_value()
        last = pair.locator("input[name$=-last_name]").input_value()
        ai = pair.locator("[data-testid=ai-cell]")
        if name == "Zed":
            expect(ai).to_contain_text("Not in the AI's extraction")
        else:  # Oda under her new id too: the matcher pairs her by name
            expect(ai.locator(".item-title strong")).to_have_text(f"{name} {last}")

    events = editor.locator("details[data-kind=events] .ed-pair")
    expect(events).to_have_count(30)
    for index in (0, 7, 29):  # reversed: the first row is the AI's last event
        pair = events.nth(index)
        description = pair.locator("input[name$=-description]").input_value()
        expect(pair.locator("[data-testid=ai-cell]")).to_contain_text(description)
    assert events.nth(0).locator("input[name$=-description]").input_value() == "Event 29 of Oda"

    only = editor.locator("details[data-kind=pair_bonds] [data-testid=ai-only]")
    expect(only).to_contain_text("Ann Hayes & Ned Hayes")
    expect(only.locator(".item")).to_have_count(1)
    assert removed_bond["person_b"] == -14
    # Aligned rows and their AI item are one line on the page.
    first = people.nth(0)
    ai_box = first.locator("[data-testid=ai-cell]").bounding_box()
    row_box = first.locator(".ed-row").bounding_box()
    assert abs(ai_box["y"] - row_box["y"]) < 12 and ai_box["x"] < row_box["x"]
    screenshot(page, "editor_aligned_1440", full_page=False)
    assert axe_serious(page) == []

    # The filter hides a row with its AI item.
    editor.locator("input[data-editor-filter]").fill("Oda")
    expect(editor.locator("details[data-kind=people] .ed-pair:visible")).to_have_count(1)
    editor.locator("input[data-editor-filter]").fill("")

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    ai_box = first.locator("[data-testid=ai-cell]").bounding_box()
    row_box = first.locator(".ed-row").bounding_box()
    assert ai_box["y"] < row_box["y"]  # stacked: the AI item above its row
    screenshot(page, "editor_aligned_390", full_page=False)
