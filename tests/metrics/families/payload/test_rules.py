"""The payload rules of metrics.families.payload.rules: semantic checks and the one "edited" rule (no database)."""

from __future__ import annotations

import copy

import pytest

from metrics.families.payload.dates import (
    date_problem,
    date_reading,
    parse_date,
    parse_with_dateutil,
)
from metrics.families.payload.edits import is_edited, item_content, mark_edited
from metrics.families.payload.items import ENTITY_KINDS, entity_items, payload_ids, payload_items
from metrics.families.payload.rules import pdp_problems, pdp_warnings
from tests.factories import SIMPLE_PDP, pdp


def problems(payload: dict, **kwargs) -> list[str]:
    return [str(problem) for problem in pdp_problems(payload, **kwargs)]


def warnings(payload: dict, **kwargs) -> list[str]:
    """Rules the spec does not state: shown, never refused (docs/review.md)."""
    return [str(warning) for warning in pdp_warnings(payload, **kwargs)]


def with_event(**fields) -> dict:
    payload = copy.deepcopy(SIMPLE_PDP)
    payload["events"][0].update(fields)
    return payload


def test_a_consistent_payload_has_no_problems():
    assert problems(SIMPLE_PDP) == []


@pytest.mark.parametrize("date", ["2024-13-45", "whenever, honestly ???", "May "])
def test_dates_the_f1_library_cannot_read_are_problems(date):
    assert problems(with_event(dateTime=date)) == [
        f"events[0].dateTime: {date!r} is not a date with a year "
        "(e.g. 1985, March 2003, 2003-03-12); leave it empty if the date is unknown"
    ]


@pytest.mark.parametrize("date", [None, "", "  ", "1985", "March 2003", "2003-03-12"])
def test_readable_or_empty_dates_are_fine(date):
    assert problems(with_event(dateTime=date)) == []


def test_a_person_without_a_name_or_a_last_name_is_a_warning():
    payload = copy.deepcopy(SIMPLE_PDP)
    payload["people"][0].update(name="  ", last_name=None)
    payload["people"][1].update(name=None)  # the last name is enough
    assert problems(payload) == []
    assert warnings(payload) == ["people[0].name: a person without a name or a last name"]


def test_a_pair_bond_of_one_person_is_a_warning():
    payload = copy.deepcopy(SIMPLE_PDP)
    payload["pair_bonds"][0]["person_b"] = -1
    assert problems(payload) == []
    assert warnings(payload) == ["pair_bonds[0].person_b: a pair bond of one person with themself"]


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("person", -9, "events[0].person"),
        ("spouse", -9, "events[0].spouse"),
        ("child", -9, "events[0].child"),
        ("relationshipTargets", [-2, -9], "events[0].relationshipTargets[1]"),
        ("relationshipTriangles", [-9], "events[0].relationshipTriangles[0]"),
    ],
)
def test_every_event_reference_must_exist(field, value, path):
    assert problems(with_event(**{field: value})) == [
        f"{path}: -9 is not a person in this statement or an earlier one, "
        "nor a committed (positive) id"
    ]


def test_parents_must_exist_too_and_deleting_an_unknown_id_is_a_warning():
    payload = copy.deepcopy(SIMPLE_PDP)
    payload["people"][0]["parents"] = -99
    payload["delete"] = [-98]
    assert [p.path for p in pdp_problems(payload)] == ["people[0].parents"]
    assert [p.path for p in pdp_warnings(payload)] == ["delete[0]"]


def test_a_reference_to_a_person_must_name_a_person_not_an_event():
    payload = with_event(relationshipTargets=[-3])  # -3 is the event itself
    assert [p.path for p in pdp_problems(payload)] == ["events[0].relationshipTargets[0]"]


def test_committed_ids_and_items_of_earlier_statements_resolve():
    payload = pdp(
        events=[{"id": -20, "kind": "shift", "person": 7, "relationshipTargets": [-1]}],
        delete=[-3, 12],
    )
    assert [p.path for p in pdp_problems(payload)] == ["events[0].relationshipTargets[0]"]
    assert [p.path for p in pdp_warnings(payload)] == ["delete[0]"]
    assert problems(payload, known=payload_ids([SIMPLE_PDP])) == []
    assert warnings(payload, known=payload_ids([SIMPLE_PDP])) == []


@pytest.mark.parametrize("kind", ["married", "bonded", "separated", "divorced"])
def test_pair_bond_events_without_a_spouse_other_than_the_person_are_warnings(kind):
    assert problems(with_event(kind=kind, spouse=None)) == []
    assert warnings(with_event(kind=kind, spouse=None)) == [
        f"events[0].spouse: a {kind} event needs a spouse"
    ]
    assert warnings(with_event(kind=kind, spouse=-1)) == [
        "events[0].spouse: the spouse must be another person"
    ]


def test_events_without_their_usual_person_or_child_are_warnings():
    """The spec does not state these (the origin accepts a shift without a person)."""
    assert problems(with_event(kind="shift", person=None, spouse=None)) == []
    assert warnings(with_event(kind="shift", person=None, spouse=None)) == [
        "events[0].person: a shift event needs a person"
    ]
    assert warnings(with_event(kind="birth", person=None, spouse=None)) == [
        "events[0].child: a birth event needs a child or a person"
    ]
    assert warnings(with_event(kind="birth", person=None, spouse=None, child=-2)) == []


# --- the edited rule -------------------------------------------------------------------------


def test_content_ignores_confidence_whitespace_and_unset_fields():
    assert item_content({"id": 1, "dateTime": "May ", "notes": "", "confidence": 0.5}) == {
        "id": 1,
        "dateTime": "May",
    }
    assert not is_edited({"id": 1, "dateTime": "May "}, {"id": 1, "dateTime": "May", "x": []})
    assert is_edited({"id": 1, "dateTime": "May"}, {"id": 1, "dateTime": "June"})
    assert is_edited(None, {"id": 1})


def test_an_untouched_item_stays_exactly_as_it_was():
    before = pdp(
        events=[{"id": -3, "kind": "shift", "person": -1, "dateTime": "May ", "confidence": 0.54}]
    )
    after = pdp(
        events=[{"id": -3, "kind": "shift", "person": -1, "dateTime": "May", "confidence": 0.54}]
    )
    assert mark_edited(before, after)["events"] == before["events"]


def test_edited_and_new_items_get_confidence_one():
    before = pdp(people=[{"id": -1, "name": "John", "confidence": 0.9}])
    after = pdp(people=[{"id": -1, "name": "Jon", "confidence": 0.9}, {"id": -2, "name": "Ann"}])
    marked = mark_edited(before, after)["people"]
    assert [p["confidence"] for p in marked] == [1.0, 1.0]
    assert after["people"][0]["confidence"] == 0.9  # the input is not changed in place


def test_a_confidence_set_on_purpose_is_kept():
    before = pdp(people=[{"id": -1, "name": "John", "confidence": 0.9}])
    edited = mark_edited(before, pdp(people=[{"id": -1, "name": "Jon", "confidence": 0.7}]))
    untouched = mark_edited(before, pdp(people=[{"id": -1, "name": "John", "confidence": 0.3}]))
    assert edited["people"][0]["confidence"] == 0.7
    assert untouched["people"][0]["confidence"] == 0.3


def test_references_that_are_not_ids_do_not_resolve_and_do_not_crash():
    payload = with_event(relationshipTargets=[{"id": -1}], spouse=True)
    assert [p.path for p in pdp_problems(payload)] == [
        "events[0].spouse",
        "events[0].relationshipTargets[0]",
    ]


# --- reading a payload: one rule for None ------------------------------------------------------


def test_a_missing_payload_list_or_item_reads_as_empty():
    assert entity_items(None, "people") == []
    assert payload_items(None) == []
    assert entity_items({}, "events") == []
    assert entity_items({"events": None}, "events") == []
    assert entity_items({"events": "not a list"}, "events") == []
    assert entity_items({"people": [None, 3, {"id": -1}]}, "people") == [{"id": -1}]


def test_payload_items_lists_people_then_events_then_pair_bonds():
    payload = {"pair_bonds": [{"id": -3}], "events": [{"id": -2}], "people": [{"id": -1}]}
    assert [item["id"] for item in payload_items(payload)] == [-1, -2, -3]
    assert ENTITY_KINDS == ("people", "events", "pair_bonds")


@pytest.mark.parametrize("payload", [[], "people", 3])
def test_a_payload_that_is_not_a_mapping_is_a_caller_bug(payload):
    with pytest.raises(TypeError, match="must be a dict"):
        entity_items(payload, "people")


# --- dates ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["spring break", "", "   ", "March 12", "Feb 30, 2003", None, 1985]
)
def test_unparseable_or_yearless_dates_read_as_missing(text):
    assert parse_date(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "2003-03-12",
        "2003-03",
        "1999",
        "March 2003",
        "sept 2003",
        "Mar. 12, 2003",
        "12th March 2003",
        "12 mar 2003",
        "2003-03-12T10:30:00",
        "around 1985",
        "03/12/2003",
    ],
)
def test_fast_date_paths_agree_with_dateutil(text):
    assert parse_date(text) == parse_with_dateutil(" ".join(text.lower().split()))


# --- coded dates mean what a person reads ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("December 1957", "1957-12, month"),
        ("Dec. 3, 1957", "1957-12-03, day"),
        ("3rd December 1957", "1957-12-03, day"),
        ("1957", "1957, year"),
        ("1957-12", "1957-12, month"),
        ("around 1985", "1985, year"),
        ("c. 1960", "1960, year"),
        ("about March 1990", "1990-03, month"),
        ("on 5th of May 1990", "1990-05-05, day"),
        ("03/03/2003", "2003-03-03, day"),
        ("2003-03-12T10:30:00", "2003-03-12, day"),
        ("", ""),
        (None, ""),
    ],
)
def test_a_coded_date_shows_what_the_metric_compares(text, reading):
    assert date_problem(text) == ""
    assert date_reading(text) == reading


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "ecember 1957",
            "would count as the year 1957 for the metric, which does not read 'ecember'",
        ),
        ("Decmber 1957", "Did you mean December?"),
        ("spring 1990", "does not read 'spring'"),
        ("12/03/2003", "could be read day first or month first"),
        ("57", "needs the year written in full"),
        ("١٩٨٥", "write the date with the digits 0-9"),
        ("19²5", "is not a date with a year"),
        ("Spring", "is not a date with a year"),
    ],
)
def test_a_date_the_metric_would_read_otherwise_is_a_problem(text, says):
    assert says in date_problem(text)
    assert date_reading(text) == ""
    problems = pdp_problems(with_event(dateTime=text))
    assert [(p.path, says in p.message) for p in problems] == [("events[0].dateTime", True)]


def test_the_library_still_reads_what_it_read(text="ecember 1957"):
    # The check refuses such a date as ground truth; the F1 library's reading is unchanged.
    assert parse_date(text) == parse_with_dateutil(text)
    assert parse_date(text).precision == "year"
