"""The error drill-down names what each statement got wrong: the items behind one figure of the
error analysis, from the statement's stored F1 values and its two payloads, with the names of
earlier statements (metrics.error_items)."""

from __future__ import annotations

from audit.display import Labels
from metrics.engine.errors import error_figure, statement_error_counts
from metrics.error_items import SHOWN, StatementPayloads, error_items
from metrics.families.extraction.statement import calculate_statement_f1

EARLIER = {"people": [{"id": -1, "name": "John", "last_name": "Walker"}]}  # named before
GT = {
    "people": [
        {"id": -2, "name": "Mary", "last_name": "Walker"},
        {"id": -5, "name": "Emily", "last_name": "Walker"},
    ],
    "events": [
        {"id": -3, "kind": "shift", "person": -1, "dateTime": "1985", "symptom": "up"},
        {"id": -8, "kind": "married", "person": -2, "dateTime": "1970"},
    ],
}
AI = {
    "people": [
        {"id": -12, "name": "Mary", "last_name": "Walker"},
        {"id": -19, "name": "Zed", "last_name": "Walker"},
    ],
    "events": [
        {"id": -13, "kind": "shift", "person": -1, "dateTime": "1985", "symptom": "down"},
        {"id": -14, "kind": "moved", "person": -19, "dateTime": "2001"},
    ],
}


def payloads(gt=GT, ai=AI) -> StatementPayloads:
    values = calculate_statement_f1(ai, gt).to_dict()
    return StatementPayloads(
        values=values,
        gt=gt,
        ai=ai,
        gt_labels=Labels().feed(EARLIER),
        ai_labels=Labels().feed(EARLIER),
    )


def test_each_figure_names_the_items_it_counts():
    found = payloads()
    assert error_items("people_fn", found) == ["Emily Walker"]
    assert error_items("people_fp", found) == ["Zed Walker"]
    # Events name their person, from this statement or an earlier one, and their date.
    assert error_items("events_fn", found) == ["Mary Walker's married event (1970)"]
    assert error_items("events_fp", found) == ["Zed Walker's moved event (2001)"]
    assert error_items(error_figure(event_kind="married"), found) == [
        "Mary Walker's married event (1970)"
    ]
    assert error_items(error_figure(event_kind="shift"), found) == []
    differ = ["John Walker's shift event (1985) — S (symptom): AI down, ground truth up"]
    assert error_items("sarf", found) == differ
    assert error_items(error_figure(variable="symptom", ai="down", gt="up"), found) == differ
    assert error_items(error_figure(variable="symptom", ai="up", gt="down"), found) == []


def test_every_figure_a_statement_counts_in_names_as_many_items():
    """The figures the index stores for the statement (metrics.engine.errors) and the items
    named for each agree in number: nothing counted goes unnamed."""
    found = payloads()
    counts = statement_error_counts(found.values, {"symptom": {"down": {"up": 1}}})
    assert counts
    for figure, n in counts.items():
        assert len(error_items(figure, found)) == n, figure


def test_a_long_list_names_the_first_and_counts_the_rest():
    many = {"people": [{"id": -100 - i, "name": f"P{i}", "last_name": "X"} for i in range(9)]}
    named = error_items("people_fn", payloads(gt=many, ai={}))
    assert named[:SHOWN] == [f"P{i} X" for i in range(SHOWN)]
    assert named[SHOWN:] == [f"and {9 - SHOWN} more"]


def test_an_item_gone_from_the_coding_since_is_said_so():
    found = payloads()
    found.gt = {"people": []}
    assert error_items("people_fn", found) == ["an item no longer in this statement's coding"]


def test_each_figure_reads_only_the_payload_its_items_come_from():
    """What the AI missed and the SARF codes are named from the ground truth, what it added from
    its extraction: the drill-down reads no other payload."""
    from metrics.error_items import payload_sides

    assert payload_sides("people_fn") == ("gt",)
    assert payload_sides(error_figure(event_kind="married")) == ("gt",)
    assert payload_sides(error_figure(variable="symptom", ai="down", gt="up")) == ("gt",)
    assert payload_sides("pair_bonds_fp") == ("ai",)
    assert payload_sides("events_fp:moved") == ("ai",)
    assert payload_sides("unknown") == ()


def test_each_figure_reads_only_the_payload_lists_its_items_come_from():
    from metrics.error_items import payload_lists

    assert payload_lists("people_fn") == ()
    assert payload_lists(error_figure(event_kind="married")) == ("events",)
    assert payload_lists("events_fp") == ("events",)
    assert payload_lists("pair_bonds_fp") == ("pair_bonds",)
    assert payload_lists(error_figure(variable="symptom", ai="down", gt="up")) == ("events",)
    assert payload_lists("unknown") == ()


def test_each_figure_reads_only_the_stored_values_its_items_come_from():
    from metrics.error_items import value_keys

    assert value_keys("events_fn") == ("events_fn_ids",)
    assert value_keys(error_figure(event_kind="married")) == ("events_fn_ids",)
    assert value_keys("pair_bonds_fp") == ("pair_bonds_fp_ids",)
    assert value_keys(error_figure(variable="symptom", ai="down", gt="up")) == (
        "events_matches",
        "sarf_pairs",
    )
    assert value_keys("unknown") == ()


def test_the_names_fed_for_the_drill_down_are_the_people_s_only():
    labels = Labels().feed_people(GT)
    assert labels.people == {-2: "Mary Walker", -5: "Emily Walker"}
    assert labels.events == {} and labels.bonds == {}
    assert labels.people == Labels().feed(GT).people
