"""In Chromium: the coder's seat. Nothing a slip of the keyboard does reaches ground truth
(the clumsy coder; the focus goes into whatever opens, 10 of 10 times; a refused submit stays
refused; submit asks first and can be undone), dates mean what was typed, and edits keep the
coding whole (removing what others point at, renames, the family so far)."""

from __future__ import annotations

import copy

import pytest
from django.urls import reverse

from audit.models import Feedback, FeedbackRevision
from audit.services import feedback_start
from tests.audit.test_views_support import make_scene
from tests.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

# Letters, digits, spaces and every single-key shortcut, typed where a coder's fingers slip.
CLUMSY = "Needs the previous answer s n x e + 1 2 9 0 j k g a ssnn 1957"

FAMILY = {
    "people": [
        {"id": -1, "name": "John", "last_name": "Walker", "gender": "male", "confidence": 0.9},
        {"id": -2, "name": "Mary", "last_name": "Walker", "gender": "female", "confidence": 0.8},
        {"id": -5, "name": "Emily", "last_name": "Walker", "parents": -4, "confidence": 0.8},
        {"id": -6, "name": "Tom", "last_name": "Walker", "parents": -4, "confidence": 0.8},
        {"id": -7, "name": "Ann", "last_name": "Walker", "parents": -4, "confidence": 0.8},
    ],
    "events": [
        {
            "id": -3,
            "kind": "shift",
            "person": -1,
            "description": "started drinking",
            "dateTime": "1985-06-01",
            "dateCertainty": "certain",
            "symptom": "up",
            "relationshipTargets": [-2],
            "confidence": 0.7,
        },
        {"id": -8, "kind": "shift", "person": -2, "dateTime": "1990", "confidence": 0.6},
    ],
    "pair_bonds": [{"id": -4, "person_a": -1, "person_b": -2, "married": True}],
    "delete": [],
}


@pytest.fixture
def coding(auditor):
    """A statement whose AI extraction has people (three children of one pair bond), events
    and the bond; the auditor has started coding it."""
    scene = make_scene()
    scene.extraction.pdp_deltas = copy.deepcopy(FAMILY)
    scene.extraction.save()
    return feedback_start(statement=scene.first, auditor=auditor)


def open_editor(page, live_server, feedback: Feedback):
    page.goto(live_server.url + reverse("audit:feedback_edit", args=[feedback.pk]))
    page.wait_for_selector(f"#editor-{feedback.pk}")
    return page.locator(f"#editor-{feedback.pk}")


def settle(page, feedback: Feedback):
    """Every request of the form answered (the save indicator gone)."""
    page.wait_for_function(
        "(pk) => !document.querySelector('#saving-' + pk + '.htmx-request')", arg=feedback.pk
    )


def type_into_body(page, text: str = CLUMSY) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")


def ids(payload: dict) -> set:
    return {item["id"] for kind in ("people", "events", "pair_bonds") for item in payload[kind]}


def test_the_clumsy_coder_reaches_no_ground_truth(open_as, live_server, auditor, coding):
    from playwright.sync_api import expect

    page = open_as(auditor)
    editor = open_editor(page, live_server, coding)
    card = page.locator(f"#stmt-{coding.statement_id}")
    type_into_body(page)

    # The skip form: the cursor goes to its reason.
    card.get_by_text("Skip…").click()
    expect(card.locator("details.skip select[name=reason]")).to_be_focused()
    page.keyboard.type(CLUMSY)
    page.keyboard.press("Escape")
    card.get_by_text("Skip…").click()  # closed again
    type_into_body(page)

    # The "for whom" picker beside + Event, then a new event (a click the test makes).
    picker = editor.locator(".ed-add input[data-person-combo]").first
    picker.click()
    page.keyboard.type(CLUMSY)
    page.keyboard.press("Escape")
    type_into_body(page)
    editor.get_by_role("button", name="+ Event").click()
    expect(editor.locator(".ed-event")).to_have_count(3)
    page.keyboard.type(CLUMSY)  # into the new event's first field
    settle(page, coding)
    type_into_body(page)

    # A checklist of people (R targets): typing filters, never ticks without Enter.
    first_event = editor.locator(".ed-event").first
    first_event.locator("details.multi > summary").first.click()
    expect(first_event.locator("[data-multi-search]").first).to_be_focused()
    page.keyboard.type(CLUMSY)
    page.keyboard.press("Escape")
    type_into_body(page)

    # The help dialog, and the submit confirm: typing there sends nothing.
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.type(CLUMSY)
    page.keyboard.press("Escape")
    editor.get_by_role("button", name="Save and submit for review").click()
    confirm = editor.get_by_test_id("submit-confirm")
    expect(confirm).to_be_visible()
    page.keyboard.type(CLUMSY)
    page.keyboard.press("Escape")
    expect(confirm).to_be_hidden()
    type_into_body(page)

    # Removing what others point at asks first; typing there removes nothing.
    bond = editor.locator(".ed-bond").first
    bond.get_by_role("button", name="Remove").click()
    question = bond.get_by_test_id("remove-confirm")
    expect(question).to_be_visible()
    page.keyboard.type(CLUMSY)
    page.keyboard.press("Escape")
    expect(question).to_be_hidden()
    # A plain remove (Mary's shift, which nothing points at), then typing on.
    editor.locator(".ed-event").nth(1).get_by_role("button", name="Remove").click()
    expect(editor.locator(".ed-event")).to_have_count(2)
    type_into_body(page)
    settle(page, coding)

    saved = Feedback.objects.get(pk=coding.pk)
    assert saved.status == Feedback.Status.DRAFT
    assert not FeedbackRevision.objects.filter(feedback=saved, action="submit").exists()
    created = ids(saved.edited_extraction) - ids(FAMILY)
    assert len(created) == 1  # the one event the test added with + Event
    assert ids(FAMILY) - ids(saved.edited_extraction) == {-8}  # the one it removed
    dates = {e.get("dateTime") for e in saved.edited_extraction["events"]}
    assert dates <= {"1985-06-01", None}, dates  # no date the test did not type as one
    parents = {p["id"]: p.get("parents") for p in saved.edited_extraction["people"]}
    assert parents[-5] == parents[-6] == parents[-7] == -4


def focused_name(page) -> str:
    return page.evaluate(
        "() => (document.activeElement.getAttribute('name') || '') + '|' +"
        " (document.activeElement.closest('.ed-row') ? document.activeElement.closest('.ed-row')"
        ".querySelector('input[type=hidden]').value : '')"
    )


def test_whatever_opens_takes_the_focus_ten_of_ten(open_as, live_server, auditor, coding):
    """x: the skip reason; + then a name and Enter: the new event's date; Enter on ✕: the next
    item. Each ten times, waiting for elements, never for a fixed time."""
    from playwright.sync_api import expect

    page = open_as(auditor)
    editor = open_editor(page, live_server, coding)
    hits = {"skip": 0, "new event": 0, "remove": 0}
    for _ in range(10):
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.keyboard.press("x")
        skip = editor.locator("details.skip[open]")
        expect(skip).to_have_count(1)
        page.wait_for_function("() => document.activeElement.name === 'reason'")
        hits["skip"] += focused_name(page).startswith("reason|")
        page.keyboard.press("Escape")
        editor.locator("details.skip > summary").click()  # closed again
        expect(skip).to_have_count(0)

        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        events = editor.locator(".ed-event").count()
        page.keyboard.press("+")
        page.keyboard.type("Mar")
        page.keyboard.press("Enter")
        expect(page.locator(f"#editor-{coding.pk} .ed-event")).to_have_count(events + 1)
        page.wait_for_function("() => (document.activeElement.name || '').endsWith('-dateTime')")
        new_id = (
            page.locator(f"#editor-{coding.pk} .ed-event")
            .last.locator("input[type=hidden]")
            .first.get_attribute("value")
        )
        hits["new event"] += focused_name(page) == f"events-{events}-dateTime|{new_id}"

        # Enter on the new event's ✕: the focus goes to the item that takes its place (here
        # none, so the previous one), never to the page.
        row = page.locator(f"#editor-{coding.pk} .ed-event").last
        row.get_by_role("button", name="Remove").focus()
        page.keyboard.press("Enter")
        expect(page.locator(f"#editor-{coding.pk} .ed-event")).to_have_count(events)
        page.wait_for_function("() => document.activeElement !== document.body")
        hits["remove"] += focused_name(page).endswith(
            "|"
            + page.locator(f"#editor-{coding.pk} .ed-event")
            .last.locator("input[type=hidden]")
            .first.get_attribute("value")
        )
        editor = page.locator(f"#editor-{coding.pk}")
    print(f"\nfocus where it belongs, of 10: {hits}")
    assert hits == {"skip": 10, "new event": 10, "remove": 10}
    assert Feedback.objects.get(pk=coding.pk).status == Feedback.Status.DRAFT


def test_a_refused_submit_stays_refused_and_submit_can_be_undone(
    open_as, live_server, auditor, coding
):
    from playwright.sync_api import expect

    page = open_as(auditor)
    editor = open_editor(page, live_server, coding)
    # Unchanged since it was drawn, the coding is as saved: the confirm sends no save first.
    saves: list[str] = []
    page.on("request", lambda r: saves.append(r.url) if "/save/" in r.url else None)
    page.keyboard.press("s")
    confirm = editor.get_by_test_id("submit-confirm")
    expect(confirm).to_contain_text("No change from the AI's extraction")
    page.keyboard.press("Escape")
    expect(confirm).to_be_hidden()
    assert saves == []
    status = editor.locator(f"#save-status-{coding.pk}")
    date = editor.locator("input[name=events-0-dateTime]")
    reading = editor.get_by_test_id("date-reading").first

    # Dates: what the metric compares shows beside the field; a misread one is a problem.
    date.fill("ecember 1957")
    date.press("Tab")
    expect(status).to_contain_text("1 problem to fix before submit")
    expect(editor.locator(f"#row-errors-{coding.pk}-events-0")).to_contain_text(
        "Date: 'ecember 1957' would count as the year 1957 for the metric"
    )
    expect(reading).to_have_text("")
    date.fill("December 1957")
    date.press("Tab")
    expect(reading).to_have_text("→ 1957-12, month")
    expect(editor.locator(f"#row-errors-{coding.pk}-events-0")).to_be_empty()

    # s asks first and says what will be submitted; Enter confirms: refused, with sentences.
    date.fill("Spring")
    date.press("Tab")
    expect(status).to_contain_text("problem to fix before submit")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(confirm).to_contain_text("from the AI's extraction: 1 event changed")
    expect(confirm).to_contain_text("1 problem to fix first")
    page.keyboard.press("Enter")
    refused = editor.locator(f"#save-status-{coding.pk}.status-error")
    expect(refused).to_contain_text("not submitted")
    expect(refused).to_contain_text("John Walker's shift event, date: 'Spring' is not a date")
    expect(refused).not_to_contain_text("events[0]")

    # Fixing the date after the refusal saves a draft: nothing is submitted by itself, and
    # one tab never conflicts with itself, however often it saves.
    date = editor.locator("input[name=events-0-dateTime]")
    date.fill("1957")
    date.press("Tab")
    expect(editor.locator(f"#save-status-{coding.pk}")).to_contain_text("Saved")
    for text in ("Spring", "1958", "spring 1958"):
        date.fill(text)
        date.press("Tab")
        settle(page, coding)
    expect(editor.locator(f"#save-status-{coding.pk}")).to_contain_text("Saved")
    expect(editor).not_to_contain_text("while you were editing")
    saved = Feedback.objects.get(pk=coding.pk)
    assert saved.status == Feedback.Status.DRAFT
    assert not saved.revisions.filter(action__in=["submit", "conflict"]).exists()

    # Fixed, submitted with s and Enter; then taken back with one click, logged.
    date.fill("1958")
    date.press("Tab")
    expect(editor.locator(f"#save-status-{coding.pk}")).not_to_contain_text("problem")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.keyboard.press("Enter")
    card = page.locator(f"#stmt-{coding.statement_id}")
    expect(card.locator(".chip.status-submitted").first).to_be_visible()
    card.get_by_test_id("undo-submit").click()
    expect(page.locator(f"#editor-{coding.pk}")).to_be_visible()
    assert Feedback.objects.get(pk=coding.pk).status == Feedback.Status.DRAFT
    actions = list(coding.revisions.order_by("id").values_list("action", flat=True))
    assert actions[-2:] == ["submit", "unsubmit"]
    page.goto(live_server.url + reverse("audit:feedback_history", args=[coding.pk]))
    expect(page.locator(".rev").first).to_contain_text("undo submit")


def test_edits_keep_the_coding_whole(open_as, live_server, auditor, coding):
    from playwright.sync_api import expect

    page = open_as(auditor)
    editor = open_editor(page, live_server, coding)
    card = page.locator(f"#stmt-{coding.statement_id}")
    # Names, not ids, in the pickers.
    who = editor.locator("select[name=events-0-person] option")
    assert "John Walker" in who.all_text_contents()
    assert not any("(-" in text for text in who.all_text_contents())

    # A renamed person is found by the new name at once, before any reply re-renders.
    editor.locator("input[name=people-2-name]").fill("Emilia")
    box = editor.locator(".ed-event").first.locator("input[data-person-combo]").first
    box.fill("Emilia")
    expect(box.locator("xpath=..").get_by_role("option", name="Emilia Walker")).to_be_visible()
    box.press("Escape")

    # The family so far shows the coding as saved: clearing Tom's parents takes them off.
    card.locator("details.state > summary").click()
    state = card.get_by_test_id("family-so-far")
    expect(state.locator(".item", has_text="Tom Walker")).to_contain_text("Parents")
    editor.locator("select[name=people-3-parents]").select_option("")
    expect(state.locator(".item", has_text="Tom Walker")).not_to_contain_text("Parents")

    # Removing the pair bond Emily and Ann name as parents asks once; one act clears both.
    version = Feedback.objects.get(pk=coding.pk).version
    bond = editor.locator(".ed-bond").first
    bond.get_by_role("button", name="Remove").click()
    question = bond.get_by_test_id("remove-confirm")
    expect(question).to_contain_text("Emilia Walker's parents")
    expect(question).to_contain_text("Ann Walker's parents")
    screenshot(page, "editor-remove-confirm-1440", full_page=False)
    question.get_by_role("button", name="Remove it and clear these 2 references").click()
    expect(page.locator(f"#editor-{coding.pk} .ed-bond")).to_have_count(0)
    saved = Feedback.objects.get(pk=coding.pk)
    assert saved.version == version + 1  # one act, one revision
    assert all(p.get("parents") is None for p in saved.edited_extraction["people"])
    expect(card).not_to_contain_text("pair bond -4")
