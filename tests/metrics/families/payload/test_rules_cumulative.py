"""metrics.families.payload.rules.cumulative: the family accumulated over a discussion's statement deltas."""

from __future__ import annotations

import json

from metrics.families.payload.items import cumulative
from tests.pdp_items import bond, event, ids, person


def test_later_statements_overwrite_earlier_items_by_id():
    state = cumulative(
        [
            {"people": [person(-1, "Jon"), person(-2, "Mary")]},
            {"people": [person(-1, "John")], "events": [event(-3, "John got sick", -1)]},
            None,  # a statement without a delta
            {},
        ]
    )
    assert [(p["id"], p["name"]) for p in state["people"]] == [(-1, "John"), (-2, "Mary")]
    assert ids(state["events"]) == [-3]
    assert state["pair_bonds"] == []


def test_deletes_remove_items_of_every_kind():
    state = cumulative(
        [
            {"people": [person(-1, "Ann"), person(-2, "Bob")], "events": [event(-3, "x", -1)]},
            {"delete": [-3, -2, 999]},  # 999 was never there
            {"events": [event(-4, "y", -1)]},
        ]
    )
    assert ids(state["people"]) == [-1]
    assert ids(state["events"]) == [-4]


def test_pair_bonds_to_absent_people_and_duplicate_couples_are_dropped():
    state = cumulative(
        [
            {
                "people": [person(-1, "Ann"), person(-2, "Bob"), person(-3, "Cy", parents=-11)],
                "pair_bonds": [bond(-10, -1, -2), bond(-11, -2, -1), bond(-12, -1, -9)],
            },
        ]
    )
    assert ids(state["pair_bonds"]) == [-10]  # -11 repeats the couple, -12 names nobody
    assert state["people"][2]["parents"] == -10  # repointed to the bond that was kept
    state = cumulative([{"people": [person(-1, "Ann")], "pair_bonds": [bond(-10, -1, -2)]}])
    assert state["pair_bonds"] == []


def test_cumulative_does_not_mutate_its_inputs():
    delta = {"people": [person(-3, "Cy", parents=-11)], "pair_bonds": []}
    before = json.dumps(delta)
    cumulative(
        [
            {"people": [person(-1, "A"), person(-2, "B")]},
            delta,
            {"pair_bonds": [bond(-10, -1, -2), bond(-11, -1, -2)]},
        ]
    )
    assert json.dumps(delta) == before
