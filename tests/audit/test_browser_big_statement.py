"""A big statement in the editor (15 people, 30 events, 10 pair bonds), in headless Chromium:
sections fold, a filter box narrows people and events, multi-person fields are checkbox lists
with chips; folded, the editor is about one screen tall."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from tests.factories import ExtractionFactory, ExtractionRunFactory, StatementFactory, pdp

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

FIRST_NAMES = [
    "Ann",
    "Bob",
    "Cid",
    "Dee",
    "Eve",
    "Fay",
    "Gus",
    "Hal",
    "Ivy",
    "Jon",
    "Kim",
    "Lee",
    "Max",
    "Ned",
    "Oda",
]


def big_pdp() -> dict:
    people = [
        {
            "id": -(i + 1),
            "name": name,
            "last_name": "Hayes",
            "gender": "female" if i % 2 else "male",
        }
        for i, name in enumerate(FIRST_NAMES)
    ]
    bonds = [
        {"id": -(100 + i), "person_a": -(2 * i + 1), "person_b": -(2 * i + 2), "married": True}
        for i in range(7)
    ] + [{"id": -(100 + i), "person_a": -1, "person_b": -(i + 5)} for i in range(7, 10)]
    events = [
        {
            "id": -(200 + i),
            "kind": "shift",
            "person": -(i % 15 + 1),
            "description": f"Event {i} of {FIRST_NAMES[i % 15]}",
            "dateTime": f"{1960 + i}",
            "relationship": "conflict",
            "relationshipTargets": [-((i + 1) % 15 + 1), -((i + 2) % 15 + 1)],
        }
        for i in range(30)
    ]
    return pdp(people=people, events=events, pair_bonds=bonds)


@pytest.fixture
def big_statement():
    statement = StatementFactory(text="A long story about the whole Hayes family.")
    ExtractionFactory(statement=statement, run=ExtractionRunFactory(), pdp_deltas=big_pdp())
    return statement


def measure(page, editor) -> dict:
    return page.evaluate(
        """(el) => {
          const visible = (c) => c.checkVisibility();
          const controls = [...el.querySelectorAll('input:not([type=hidden]), select, textarea, button')];
          return {height: Math.round(el.getBoundingClientRect().height),
                  controls: controls.length, visible_controls: controls.filter(visible).length,
                  options: el.querySelectorAll('option').length};
        }""",
        editor.element_handle(),
    )


def test_big_statement_editor_folds_filters_and_uses_checkbox_lists(
    open_as, live_server, auditor, big_statement
):
    from playwright.sync_api import expect

    page = open_as(auditor)
    page.goto(live_server.url + reverse("audit:statement", args=[big_statement.pk]))
    page.keyboard.press("e")
    editor = page.locator(".editor")
    expect(editor.locator("input[name=people-14-name]")).to_have_value("Oda")
    # Folded, the editor of 55 items is about one screen with a few dozen controls in sight
    # (unfolded, every row's fields made it over 7,000 px with hundreds of controls).
    figures = measure(page, editor)
    assert figures["height"] < 1500, figures
    assert figures["visible_controls"] < 80, figures

    # Sections fold; the big ones start folded with their counts in the heading.
    events_summary = editor.locator("details.ed-fold[data-kind=events] > summary")
    expect(events_summary).to_contain_text("Events · 30")
    events_summary.click()
    expect(editor.locator("input[name=events-29-description]")).to_be_visible()

    # The filter box narrows people and events to those that mention the text.
    editor.locator("input[data-editor-filter]").fill("Oda")
    # Her two events, and four where she is a relationship target.
    expect(editor.locator(".ed-row.ed-event:visible")).to_have_count(6)
    expect(editor.locator(".ed-row.ed-person:visible")).to_have_count(1)
    editor.locator("input[data-editor-filter]").fill("")
    expect(editor.locator(".ed-row.ed-event:visible")).to_have_count(30)

    # R targets: a checkbox list with chips; ticking one saves it like any change.
    targets = editor.locator("[data-multi='events-0-relationshipTargets']")
    expect(targets.locator(".chips")).to_contain_text("Cid Hayes")
    targets.locator("> summary").click()
    targets.locator("input[data-multi-search]").fill("max")
    expect(targets.locator("label.opt:visible")).to_have_count(1)
    targets.locator("label.opt:visible input").check()
    expect(targets.locator(".chips")).to_contain_text("Max Hayes")
    status = editor.locator(".editor-bar [id^=save-status]")
    expect(status).to_contain_text("Saved · v2")
    saved = Feedback.objects.get().edited_extraction["events"][0]["relationshipTargets"]
    assert sorted(saved) == [-13, -3, -2]
    # The local search boxes are not part of the coding: nothing else changed.
    assert Feedback.objects.get().version == 2
