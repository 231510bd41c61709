"""Aligning and merging two or more codings of one statement (no database)."""

from __future__ import annotations

import copy

import pytest

from metrics.families.extraction import MatchSettings
from metrics.families.extraction.adjudication import BadChoice, align_codings, normal_content

ALICE = {
    "people": [
        {"id": -1, "name": "John", "last_name": "Smith", "gender": "male", "confidence": 0.9},
        {"id": -2, "name": "Mary", "last_name": "Smith", "gender": "female"},
    ],
    "events": [
        {"id": -3, "kind": "married", "person": -1, "spouse": -2, "description": "Married",
         "dateTime": "1985-06-01", "dateCertainty": "certain"},
        {"id": -5, "kind": "moved", "person": -1, "description": "Moved to Boston",
         "dateTime": "1990"},
    ],
    "pair_bonds": [{"id": -4, "person_a": -1, "person_b": -2, "married": True}],
    "delete": [],
}  # fmt: skip


def _bob() -> dict:
    """Alice's coding with other ids, other spacing and case, and one event dated otherwise."""
    return {
        "people": [
            {"id": -12, "name": "mary ", "last_name": "Smith", "gender": "female"},
            {"id": -11, "name": "John", "last_name": "Smith", "gender": "male", "confidence": 0.5},
        ],
        "events": [
            {"id": -13, "kind": "married", "person": -11, "spouse": -12, "description": "married",
             "dateTime": "1985-06-01", "dateCertainty": "certain"},
            {"id": -15, "kind": "moved", "person": -11, "description": "Moved to Boston",
             "dateTime": "1991"},
        ],
        "pair_bonds": [{"id": -14, "person_a": -12, "person_b": -11, "married": True}],
        "delete": [],
    }  # fmt: skip


def test_agreed_items_merge_and_the_disagreement_is_disputed():
    alignment = align_codings([ALICE, _bob()])
    assert alignment.unanimous_count == 4  # two people, the marriage, the bond
    assert [item.key for item in alignment.disputed] == ["events:0:-5"]
    moved = alignment.disputed[0]
    assert [v["dateTime"] for v in moved.versions] == ["1990", "1991"]
    # Bob's version is rewritten into the merged ids: his John (-11) is Alice's -1.
    assert moved.versions[1]["person"] == -1 and moved.versions[1]["id"] == -5


def test_the_merge_takes_the_agreed_items_and_the_chosen_version():
    alignment = align_codings([ALICE, _bob()])
    assert alignment.unresolved({}) == ["events:0:-5"]
    merged = alignment.merge({"events:0:-5": {"coder": 1}})
    assert [p["name"] for p in merged["people"]] == ["John", "Mary"]
    assert [e["dateTime"] for e in merged["events"]] == ["1985-06-01", "1991"]
    assert merged["pair_bonds"] == [ALICE["pair_bonds"][0]]
    assert alignment.unresolved({"events:0:-5": {"coder": 1}}) == []
    # Without a choice the disputed item is left out, never guessed.
    assert [e["id"] for e in alignment.merge({})["events"]] == [-3]


def test_an_edit_keeps_the_rows_id():
    alignment = align_codings([ALICE, _bob()])
    edit = {"id": 99, "kind": "moved", "person": -1, "description": "Moved", "dateTime": "1992"}
    choice = alignment.check_choice("events:0:-5", {"edit": edit})
    assert choice["edit"]["id"] == -5
    assert alignment.merge({"events:0:-5": choice})["events"][1]["dateTime"] == "1992"


def test_an_item_only_one_coder_has_is_disputed_and_leaving_it_out_is_a_choice():
    bob = _bob()
    bob["people"].append({"id": -16, "name": "Ann", "gender": "female"})
    alignment = align_codings([ALICE, bob])
    ann = alignment.item("people:1:-16")
    assert ann.versions[0] is None and not ann.unanimous
    assert ann.merged_id == -16
    merged = alignment.merge({"people:1:-16": {"coder": 0}, "events:0:-5": {"coder": 0}})
    assert [p["name"] for p in merged["people"]] == ["John", "Mary"]


def test_ids_that_collide_get_fresh_ones():
    bob = _bob()
    bob["people"].append({"id": -1, "name": "Ann", "gender": "female"})  # Alice's John is -1
    bob["events"].append({"id": -6, "kind": "birth", "person": -1, "child": -1})
    alignment = align_codings([ALICE, bob])
    ann = alignment.item("people:1:-1")
    assert ann.merged_id not in (-1, -2, -3, -4, -5)
    birth = alignment.item("events:1:-6")
    assert birth.versions[1]["person"] == ann.merged_id


def test_three_coders_align_against_everything_so_far():
    bob, carol = _bob(), _bob()
    bob["people"].append({"id": -16, "name": "Ann", "gender": "female"})
    carol["people"].append({"id": -26, "name": "Ann", "gender": "female"})
    alignment = align_codings([ALICE, bob, carol])
    ann = alignment.item("people:1:-16")
    assert [v is not None for v in ann.versions] == [False, True, True]
    assert len(alignment.items) == 6  # Ann once, not once per coder


def test_differing_delete_lists_are_one_disputed_row():
    bob = _bob()
    bob["delete"] = [7]
    alignment = align_codings([ALICE, bob])
    row = alignment.item("delete")
    assert row.versions == [[], [7]] and not row.unanimous
    assert alignment.merge({"delete": {"coder": 1}, "events:0:-5": {"coder": 0}})["delete"] == [7]


def test_normalisation_ignores_confidence_case_spacing_and_list_order():
    assert normal_content({"name": " John  ", "confidence": 1, "x": [2, 1]}) == normal_content(
        {"name": "john", "x": [1, 2], "notes": ""}
    )


def test_the_matcher_settings_decide_what_aligns():
    bob = _bob()
    bob["people"][1]["name"] = "Jon"
    strict = align_codings([ALICE, bob], settings=MatchSettings(name_similarity_threshold=0.99))
    loose = align_codings([ALICE, bob], settings=MatchSettings(name_similarity_threshold=0.5))
    assert len(strict.items) > len(loose.items)


@pytest.mark.parametrize(
    "key, choice, expected",
    [
        ("nope", {"coder": 0}, "No aligned item"),
        ("people:0:-1", {"coder": 0}, "unanimous"),
        ("events:0:-5", {"coder": 2}, "coder must be 0..1"),
        ("events:0:-5", {"coder": True}, "coder must be 0..1"),
        ("events:0:-5", {"pick": 0}, "A choice is"),
        ("events:0:-5", {"edit": [1]}, "JSON object"),
    ],
)
def test_bad_choices_say_what_is_wrong(key, choice, expected):
    with pytest.raises(BadChoice, match=expected):
        align_codings([ALICE, _bob()]).check_choice(key, choice)


def test_the_inputs_are_left_alone():
    alice = copy.deepcopy(ALICE)
    align_codings([alice, _bob()]).merge({"events:0:-5": {"coder": 1}})
    assert alice == ALICE
