"""In Chromium: clicks and keys to code a typical demo statement, the way the issue measured it
(a mouse user opening dropdowns) and with the keyboard flow (n to open and to submit-and-next,
digits for the SARF codes). Both codings must come out the same; `pytest -s` prints the figures
(docs/team.md, "Clicks and keys").

The task, on a statement whose AI extraction missed one event: add a shift of John in 1990
(approximate), "started drinking after the layoff", symptom up, anxiety up, relationship
conflict with Mary, functioning down; submit; open the next statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.services.assignments import AssignmentPlan, assignments_create
from tests.api_fixtures import make_discussion
from tests.factories import ExtractionFactory, ExtractionRunFactory

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

DESCRIPTION = "started drinking after the layoff"
EXPECTED = {
    "kind": "shift",
    "person": -1,
    "dateTime": "1990",
    "dateCertainty": "approximate",
    "description": DESCRIPTION,
    "symptom": "up",
    "anxiety": "up",
    "relationship": "conflict",
    "functioning": "down",
    "relationshipTargets": [-2],
}


SAFETY_KEYS = 3


@dataclass
class Tally:
    """Every user action goes through here, so the count is what a person would do."""

    page: object
    clicks: int = 0
    keys: int = 0
    text: int = 0  # of the keys: characters typed into fields (the same in both flows)
    log: list[str] = field(default_factory=list)

    def click(self, locator) -> None:
        locator.click()
        self.clicks += 1

    def choose(self, select, value: str) -> None:
        """A dropdown with the mouse: open the list, pick the option."""
        select.select_option(value)
        self.clicks += 2

    def pick_person(self, scope, name: str, person: str) -> None:
        """A person picker with the mouse: open its list, click the person."""
        box = scope.locator(f'select[name="{name}"]').locator("xpath=..")
        self.click(box.locator("input[data-person-combo]"))
        self.click(box.get_by_role("option", name=person).first)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.keys += len(text)
        self.text += len(text)

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)
            self.keys += 1

    @property
    def total(self) -> int:
        return self.clicks + self.keys


@pytest.fixture
def statements(auditor, admin_user):
    run = ExtractionRunFactory()
    discussion, found = make_discussion("The Smith family", n_subject=3)
    for statement in found[1:]:
        ExtractionFactory(statement=statement, run=run)
    plan = AssignmentPlan(discussions=[discussion], auditors=[auditor])
    assignments_create(plan=plan, admin=admin_user)
    return found[1:]


def new_event_row(page):
    return page.locator(".ed-event").last


def code_with_the_mouse(page, tally: Tally, statement) -> None:
    """The flow before: open the statement, start coding, every code from a dropdown, submit,
    then j and e to reach the next statement."""
    tally.click(page.get_by_role("link", name="Continue").first)
    card = page.locator(f"#stmt-{statement.pk}")
    tally.click(card.get_by_role("button", name="Start coding"))
    page.wait_for_selector(f"#stmt-{statement.pk}.editing")
    card = page.locator(f"#stmt-{statement.pk}")
    tally.pick_person(card, "events-new-person", "John")
    tally.click(card.get_by_role("button", name="+ Event"))
    page.wait_for_function("() => document.querySelectorAll('.ed-event').length >= 2")
    row = new_event_row(page)
    tally.choose(row.locator('select[name$="-kind"]'), "shift")
    tally.click(row.locator('input[name$="-dateTime"]'))
    tally.type("1990")
    tally.choose(row.locator('select[name$="-dateCertainty"]'), "approximate")
    tally.click(row.locator('input[name$="-description"]'))
    tally.type(DESCRIPTION)
    for variable, value in [
        ("symptom", "up"),
        ("anxiety", "up"),
        ("relationship", "conflict"),
        ("functioning", "down"),
    ]:
        tally.choose(row.locator(f'select[name$="-{variable}"]'), value)
    tally.click(row.locator("details.multi summary").first)
    tally.click(row.locator('details.multi input[type=checkbox][value="-2"]').first)
    tally.click(card.get_by_role("button", name="Save and submit for review"))
    tally.click(
        card.get_by_test_id("submit-confirm").get_by_role("button", name="Submit", exact=True)
    )
    page.wait_for_selector(f"#stmt-{statement.pk} .chip.status-submitted")
    tally.press("j", "e")
    page.wait_for_selector(".stmt.editing")


def code_with_the_keys(page, tally: Tally) -> None:
    """The flow after: n opens the next statement in the editor; + puts the cursor in "for
    whom" beside + Event, "J" Enter adds an event for John with the cursor in its date; Tab
    between fields, Enter from the description to S; digits set S, A, R, F in turn, after F
    the cursor is in the R targets where "M" Enter ticks Mary; Escape closes that list, n
    asks to submit and Enter confirms (and opens the next statement)."""
    tally.press("n")
    page.wait_for_url("**/audit/feedback/*/edit/")
    started = page.url
    tally.press("+")  # the cursor goes to "for whom"
    tally.type("J")
    tally.press("Enter")  # a new event for John
    page.wait_for_function("() => (document.activeElement.name || '').endsWith('-dateTime')")
    tally.type("1990")
    tally.press("Tab")
    tally.press("a")  # approximate
    tally.press("Tab")
    tally.type(DESCRIPTION)
    tally.press("Enter")  # on to symptom
    tally.press("1", "1", "2", "2")  # S up, A up, R conflict, F down; on to R targets
    tally.type("M")
    tally.press("Enter", "Escape")  # Mary ticked; the list closes
    tally.press("n")
    page.get_by_test_id("submit-confirm").wait_for()
    tally.press("Enter")  # confirm
    page.wait_for_url(lambda url: url != started)


def added_event(statement, auditor) -> dict:
    feedback = Feedback.objects.get(statement=statement, auditor=auditor)
    assert feedback.status == Feedback.Status.SUBMITTED
    event = feedback.edited_extraction["events"][-1]
    return {key: event.get(key) for key in EXPECTED}


def test_clicks_and_keys_to_code_a_typical_statement(open_as, live_server, auditor, statements):
    page = open_as(auditor)
    before = Tally(page)
    code_with_the_mouse(page, before, statements[0])
    assert added_event(statements[0], auditor) == EXPECTED

    page.goto(live_server.url + reverse("home"))
    after = Tally(page)
    code_with_the_keys(page, after)
    assert added_event(statements[1], auditor) == EXPECTED

    # The figures (22 clicks, 39 keys), and one click more: the submit's confirm.
    assert (before.clicks, before.keys) == (23, 39)
    print(
        f"\nbefore: {before.clicks} clicks + {before.keys} keys = {before.total} "
        f"({before.text} typed characters)"
        f"\nafter:  {after.clicks} clicks + {after.keys} keys = {after.total} "
        f"({after.text} typed characters)"
        f"\nwithout the typed text: {before.total - before.text} -> {after.total - after.text}"
    )
    assert after.total < before.total
    assert after.clicks == 0
    # Besides the text itself, at most half the actions, plus the three keys that make no
    # single key act on the coding: Enter to add the event chosen after +, Escape to close
    # the R targets list, Enter to confirm the submit.
    assert 2 * (after.total - after.text - SAFETY_KEYS) <= before.total - before.text
