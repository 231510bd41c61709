"""Worked cases for the parent rule and the cumulative pair-bond rule (docs/families.md)."""

from __future__ import annotations

import copy

import pytest

from metrics.families.extraction import (
    MatchSettings,
    calculate_cumulative_f1,
    calculate_statement_f1,
    cumulative,
    match_people,
)

STRATEGIES = [MatchSettings(strategy="optimal"), MatchSettings(strategy="greedy")]


def counts(result, entity):
    return tuple(getattr(result, f"{entity}_{count}") for count in ("tp", "fp", "fn"))


# --- one parent rule on both sides -------------------------------------------------


def _paul_and_his_unlisted_mother():
    ai = {
        "people": [{"id": -1, "name": "Mark"}, {"id": -4, "name": "Paul", "parents": -9}],
        "pair_bonds": [{"id": -9, "person_a": -1, "person_b": -2}],
        "events": [{"id": -20, "kind": "shift", "person": -4, "description": "lost his job"}],
    }
    gt = copy.deepcopy(ai)
    gt["people"].append({"id": -2, "name": "Betty"})
    return ai, gt


@pytest.mark.parametrize("settings", STRATEGIES, ids=lambda s: s.strategy)
def test_a_parent_the_ai_names_without_listing_is_the_same_person_on_both_sides(settings):
    ai, gt = _paul_and_his_unlisted_mother()
    result = calculate_statement_f1(ai, gt, settings=settings)
    assert counts(result, "people") == (2, 0, 1)  # Betty is missed, Paul is found
    assert counts(result, "events") == (1, 0, 0)
    assert counts(result, "pair_bonds") == (1, 0, 0)
    assert result.aggregate_micro_f1 == pytest.approx(8 / 9)


def test_the_parent_rule_holds_for_match_people_alone():
    ai, gt = _paul_and_his_unlisted_mother()
    result = match_people(ai["people"], gt["people"], ai["pair_bonds"], gt["pair_bonds"])
    assert sorted((p.ai_id, p.gt_id) for p in result.pairs) == [(-4, -4), (-1, -1)]


def test_an_unlisted_parent_still_disagrees_with_a_different_gt_parent():
    ai, gt = _paul_and_his_unlisted_mother()
    gt["pair_bonds"][0]["person_b"] = -3  # the GT says Paul's mother is someone else
    gt["people"].append({"id": -3, "name": "Carol"})
    result = calculate_statement_f1(ai, gt)
    assert counts(result, "people") == (1, 1, 3)  # Paul's parents differ: no match
    assert counts(result, "events") == (0, 1, 1)


# --- cumulative pair bonds to committed people -------------------------------------


def test_cumulative_keeps_a_bond_to_a_committed_person_not_in_the_deltas():
    gt = [
        {
            "people": [{"id": -1, "name": "Ann"}],
            "pair_bonds": [{"id": -9, "person_a": -1, "person_b": 5}],
        }
    ]
    ai = [{"people": [{"id": -1, "name": "Ann"}]}]
    assert [bond["id"] for bond in cumulative(gt)["pair_bonds"]] == [-9]
    result = calculate_cumulative_f1(ai, gt)
    assert counts(result, "pair_bonds") == (0, 0, 1)
    assert result.pair_bonds_f1 == 0.0
    assert result.aggregate_micro_f1 == pytest.approx(2 / 3)


def test_cumulative_drops_bonds_to_absent_uncommitted_people_and_duplicates():
    state = cumulative(
        [
            {
                "people": [{"id": -1, "name": "Ann"}],
                "pair_bonds": [
                    {"id": -9, "person_a": -1, "person_b": 5},  # committed partner: kept
                    {"id": -10, "person_a": 5, "person_b": -1},  # same couple: duplicate
                    {"id": -11, "person_a": -1, "person_b": -7},  # -7 listed nowhere
                    {"id": -12, "person_a": -1, "person_b": None},  # no partner
                    {"id": -13, "person_a": 5, "person_b": 6},  # two committed people
                ],
            }
        ]
    )
    assert [bond["id"] for bond in state["pair_bonds"]] == [-9, -13]


def test_cumulative_drops_a_bond_once_its_uncommitted_partner_is_deleted():
    state = cumulative(
        [
            {
                "people": [{"id": -1, "name": "Ann"}, {"id": -2, "name": "Bob"}],
                "pair_bonds": [{"id": -9, "person_a": -1, "person_b": -2}],
            },
            {"delete": [-2]},
        ]
    )
    assert state["pair_bonds"] == []
