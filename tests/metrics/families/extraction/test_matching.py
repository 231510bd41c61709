"""Matching rules of the extraction-F1 library: people, events, pair bonds, dates, assignment."""

from __future__ import annotations

import itertools
import random
from datetime import date

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz import fuzz

from metrics.families.extraction import (
    MatchSettings,
    match_events,
    match_pair_bonds,
    match_people,
    parse_date,
)
from metrics.families.extraction.assignment import assign
from metrics.families.extraction.dates import (
    EventDate,
    date_similarity,
    date_similarity_matrix,
    event_date,
)

GREEDY = MatchSettings(strategy="greedy")


def person(ident, name, last_name=None, **extra):
    return {"id": ident, "name": name, "last_name": last_name, **extra}


def event(ident, kind="shift", description="", **extra):
    return {"id": ident, "kind": kind, "description": description, **extra}


def bond(ident, a, b, **extra):
    return {"id": ident, "person_a": a, "person_b": b, **extra}


def pairs_of(result):
    return sorted((pair.ai_id, pair.gt_id) for pair in result.pairs)


# --- people -----------------------------------------------------------------


def test_spec_example_john_and_jon_smith_match_with_ids_ignored():
    result = match_people([person(-1, "John", "Smith")], [person(-5, "Jon", "Smith")])
    assert pairs_of(result) == [(-1, -5)]
    assert result.pairs[0].score == pytest.approx(18 / 19)  # indel distance 1 over 19 chars
    assert result.id_map == {-1: -5}
    assert (result.tp, result.fp, result.fn) == (1, 0, 0)


def test_name_similarity_must_exceed_threshold_strictly():
    assert fuzz.ratio("abcde", "abcdx") == 80.0
    at_threshold = match_people([person(1, "abcde")], [person(2, "abcdx")])
    assert (at_threshold.tp, at_threshold.fp, at_threshold.fn) == (0, 1, 1)
    assert fuzz.ratio("abcdefghijk", "abcdefghixy") == pytest.approx(81.818, abs=1e-3)
    above = match_people([person(1, "abcdefghijk")], [person(2, "abcdefghixy")])
    assert above.tp == 1


def test_name_threshold_is_configurable():
    strict = MatchSettings(name_similarity_threshold=0.95)
    result = match_people(
        [person(1, "John", "Smith")], [person(2, "Jon", "Smith")], settings=strict
    )
    assert result.tp == 0


def test_names_compare_case_and_whitespace_insensitively():
    result = match_people([person(1, "  JOHN ", "smith  ")], [person(2, "john", "Smith")])
    assert result.pairs[0].score == 1.0


def test_unmatched_people_are_reported_as_fp_and_fn():
    ai = [person(1, "Mary", "Jones"), person(2, "Zed", "Quill")]
    gt = [person(10, "Mary", "Jones"), person(11, "Harold", "Bishop")]
    result = match_people(ai, gt)
    assert pairs_of(result) == [(1, 10)]
    assert [p["id"] for p in result.unmatched_ai] == [2]
    assert [p["id"] for p in result.unmatched_gt] == [11]


def _family(child_parents_bond, gt_child_parents_bond):
    """AI: John + Mary, child Tom. GT: John, Mary and Susan, child Tom."""
    ai_people = [
        person(-1, "John", "Smith"),
        person(-2, "Mary", "Smith"),
        person(-3, "Tom", "Smith", parents=child_parents_bond),
    ]
    ai_bonds = [bond(-10, -1, -2)]
    gt_people = [
        person(-21, "John", "Smith"),
        person(-22, "Mary", "Smith"),
        person(-23, "Susan", "Brown"),
        person(-24, "Tom", "Smith", parents=gt_child_parents_bond),
    ]
    gt_bonds = [bond(-30, -21, -22), bond(-31, -21, -23)]
    return ai_people, gt_people, ai_bonds, gt_bonds


def test_parents_that_resolve_to_the_same_people_match():
    ai_people, gt_people, ai_bonds, gt_bonds = _family(-10, -30)
    result = match_people(ai_people, gt_people, ai_bonds, gt_bonds)
    assert pairs_of(result) == [(-3, -24), (-2, -22), (-1, -21)]


def test_parent_link_mismatch_leaves_the_child_unmatched():
    # AI says Tom is John and Mary's son; GT says John and Susan's.
    ai_people, gt_people, ai_bonds, gt_bonds = _family(-10, -31)
    result = match_people(ai_people, gt_people, ai_bonds, gt_bonds)
    assert pairs_of(result) == [(-2, -22), (-1, -21)]
    assert sorted(p["id"] for p in result.unmatched_gt) == [-24, -23]
    assert [p["id"] for p in result.unmatched_ai] == [-3]


def test_null_parents_on_either_side_are_ignored():
    ai_people, gt_people, ai_bonds, gt_bonds = _family(None, -31)
    assert match_people(ai_people, gt_people, ai_bonds, gt_bonds).tp == 3
    ai_people, gt_people, ai_bonds, gt_bonds = _family(-10, None)
    assert match_people(ai_people, gt_people, ai_bonds, gt_bonds).tp == 3


def test_legacy_parent_a_parent_b_form_is_resolved_like_parents():
    ai_people, gt_people, ai_bonds, gt_bonds = _family(None, -30)
    ai_people[2] = person(-3, "Tom", "Smith", parent_a=-2, parent_b=-1)
    assert match_people(ai_people, gt_people, ai_bonds, gt_bonds).tp == 3
    ai_people[2] = person(-3, "Tom", "Smith", parent_a=-3, parent_b=-1)  # wrong mother
    assert match_people(ai_people, gt_people, ai_bonds, gt_bonds).tp == 2


def test_parents_given_as_a_list_of_people_are_accepted():
    ai_people, gt_people, ai_bonds, gt_bonds = _family(None, -30)
    ai_people[2] = person(-3, "Tom", "Smith", parents=[-1, -2])
    assert match_people(ai_people, gt_people, ai_bonds, gt_bonds).tp == 3
    ai_people[2] = person(-3, "Tom", "Smith", parents=[-1, -3])
    assert match_people(ai_people, gt_people, ai_bonds, gt_bonds).tp == 2


def test_spec_example_single_legacy_parent_resolves_through_the_match():
    ai = [person(-1, "John", "Smith", parent_a=-2), person(-2, "Walter", "Smith")]
    gt = [person(-5, "Jon", "Smith", parent_a=-8), person(-8, "Walter", "Smith")]
    assert match_people(ai, gt).tp == 2
    gt[0] = person(-5, "Jon", "Smith", parent_a=-9)  # someone else entirely
    assert match_people(ai, gt).tp == 1


def test_parents_bond_outside_the_payload_compares_by_id():
    ai = [person(-1, "Tom", "Smith", parents=7)]
    assert match_people(ai, [person(-2, "Tom", "Smith", parents=7)]).tp == 1
    assert match_people(ai, [person(-2, "Tom", "Smith", parents=8)]).tp == 0


def test_people_are_rematched_until_their_parents_agree():
    # The AI's Joseph Smith is Sr. (his parents' bond is -3), but by name alone he
    # is closer to Jr.; matching him to Jr. first would make George's parents
    # disagree. Re-matching with the parents settles Joseph on Sr., then George.
    ai = [
        person(-4, "Joseph", "Smith", parents=-3),
        person(-5, "Lisa", "Johnson"),
        person(-8, "George", "Smith", parents=-6),
    ]
    gt = [
        person(-104, "Joseph", "Smith Sr", parents=-3),
        person(-114, "Joseph", "Smith", parents=-13),
        person(-105, "Lisa", "Johnson"),
        person(-108, "George", "Smith", parents=-106),
    ]
    result = match_people(ai, gt, [bond(-6, -4, -5)], [bond(-106, -104, -105)])
    assert pairs_of(result) == [(-8, -108), (-5, -105), (-4, -104)]


def test_parents_without_a_counterpart_are_left_out_of_the_comparison():
    # The AI's "Michelle" (surname dropped) matches nobody; the rest of the parents agree.
    ai = [
        person(-1, "John", "Smith"),
        person(-2, "Michelle"),
        person(-3, "Tom", "Smith", parents=-9),
    ]
    gt = [
        person(-1, "John", "Smith"),
        person(-2, "Michelle", "Miller"),
        person(-3, "Tom", "Smith", parents=-9),
    ]
    bonds = [bond(-9, -1, -2)]
    assert pairs_of(match_people(ai, gt, bonds, bonds)) == [(-3, -3), (-1, -1)]


def test_ties_prefer_equal_ids_then_ignore_listing_order():
    gt = [person(-4, "Joseph", "Smith"), person(-14, "Joseph", "Smith")]
    for ai_id in (-4, -14):
        for order in (gt, gt[::-1]):
            assert pairs_of(match_people([person(ai_id, "Joseph", "Smith")], order)) == [
                (ai_id, ai_id)
            ]
    # With no equal id, the choice is fixed by content and ids, not by list order.
    first = pairs_of(match_people([person(7, "Joseph", "Smith")], gt))
    assert pairs_of(match_people([person(7, "Joseph", "Smith")], gt[::-1])) == first


def test_people_matching_does_not_depend_on_ai_order():
    gt = [person(i, name, "Smith") for i, name in enumerate(["Ann", "Anne", "Anna", "Jon"])]
    ai = [person(-i, name, "Smith") for i, name in enumerate(["Ann", "Annie", "Anna", "John"])]
    expected = pairs_of(match_people(ai, gt))
    for seed in range(10):
        shuffled = random.Random(seed).sample(ai, len(ai))
        assert pairs_of(match_people(shuffled, gt)) == expected


def test_missing_and_malformed_fields_are_tolerated():
    ai = [{"id": 1}, {"name": None}, "not a dict", person(3, "Ann")]
    gt = [{"id": 9, "name": "Ann", "last_name": None}]
    result = match_people(ai, gt)
    assert pairs_of(result) == [(3, 9)]
    assert result.fp == 2


# --- greedy and optimal assignment ------------------------------------------


def test_greedy_and_optimal_differ_when_the_first_ai_item_takes_the_contested_match():
    gt = [person(1, "John", "Smith"), person(2, "Jon", "Smyth")]
    ai = [person(-1, "Jon", "Smith"), person(-2, "John", "Smithers")]
    # Jon Smith fits both GT people and prefers John Smith; John Smithers fits only John Smith.
    assert fuzz.ratio("jon smith", "john smith") > fuzz.ratio("jon smith", "jon smyth") > 80
    assert fuzz.ratio("john smithers", "john smith") > 80 > fuzz.ratio("john smithers", "jon smyth")
    greedy = match_people(ai, gt, settings=GREEDY)
    optimal = match_people(ai, gt)
    assert pairs_of(greedy) == [(-1, 1)]
    assert pairs_of(optimal) == [(-2, 1), (-1, 2)]


def test_optimal_prefers_two_weak_matches_to_one_strong_one():
    scores = np.array([[1.0, 0.3], [0.6, 0.0]])
    allowed = np.array([[True, True], [True, False]])
    assert assign(scores, allowed, "optimal") == [(0, 1), (1, 0)]
    # A plain maximum-weight assignment would take (0, 0) alone: 1.0 > 0.3 + 0.6.


def test_optimal_breaks_count_ties_by_total_score():
    scores = np.array([[0.9, 0.8], [0.95, 0.6]])
    allowed = np.ones((2, 2), dtype=bool)
    # (0,0)+(1,1) = 1.5 ; (0,1)+(1,0) = 1.75
    assert assign(scores, allowed, "optimal") == [(0, 1), (1, 0)]
    assert assign(scores, allowed, "greedy") == [(0, 0), (1, 1)]


def test_a_better_score_outweighs_an_equal_id_and_an_equal_id_breaks_ties():
    scores = np.array([[0.9, 0.95]])
    allowed = np.ones((1, 2), dtype=bool)
    assert assign(scores, allowed, "optimal", ai_ids=[1], gt_ids=[1, 2]) == [(0, 1)]
    tied = np.array([[0.9, 0.9]])
    assert assign(tied, allowed, "optimal", ai_ids=[2], gt_ids=[1, 2]) == [(0, 1)]
    assert assign(tied, allowed, "optimal", ai_ids=[1], gt_ids=[1, 2]) == [(0, 0)]


def _brute_force(scores, allowed):
    """(max number of matches, best total score among those)."""
    n_ai, n_gt = allowed.shape
    best = (0, 0.0)
    for chosen in itertools.permutations(range(n_gt), min(n_ai, n_gt)) if n_ai <= n_gt else []:
        pairs = [(i, j) for i, j in enumerate(chosen) if allowed[i, j]]
        best = max(best, (len(pairs), round(sum(scores[i, j] for i, j in pairs), 9)))
    for chosen in itertools.permutations(range(n_ai), n_gt) if n_ai > n_gt else []:
        pairs = [(i, j) for j, i in enumerate(chosen) if allowed[i, j]]
        best = max(best, (len(pairs), round(sum(scores[i, j] for i, j in pairs), 9)))
    return best


@st.composite
def gated_scores(draw):
    n_ai, n_gt = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    cells = n_ai * n_gt
    scores = draw(st.lists(st.floats(0.4, 1.0), min_size=cells, max_size=cells))
    allowed = draw(st.lists(st.booleans(), min_size=cells, max_size=cells))
    return (
        np.array(scores, dtype=float).reshape(n_ai, n_gt),
        np.array(allowed, dtype=bool).reshape(n_ai, n_gt),
    )


@given(gated_scores())
def test_optimal_never_finds_fewer_matches_than_greedy(case):
    scores, allowed = case
    optimal = assign(scores, allowed, "optimal")
    greedy = assign(scores, allowed, "greedy")
    assert len(optimal) >= len(greedy)
    for pairs in (optimal, greedy):  # both are one-to-one and only use allowed pairs
        assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
        assert all(allowed[i, j] for i, j in pairs)
    count, total = _brute_force(scores, allowed)
    assert len(optimal) == count
    assert sum(scores[i, j] for i, j in optimal) == pytest.approx(total, abs=1e-5)  # 1e-6 units


@given(
    st.lists(st.sampled_from(["Ann", "Anne", "Anna", "Annie", "Jon", "John", "Joan"]), max_size=6),
    st.lists(st.sampled_from(["Ann", "Anne", "Anna", "Annie", "Jon", "John", "Joan"]), max_size=6),
    st.randoms(),
)
def test_people_optimal_never_fewer_than_greedy_and_order_free(ai_names, gt_names, rnd):
    ai = [person(-i - 1, name, "Lee") for i, name in enumerate(ai_names)]
    gt = [person(i + 1, name, "Lee") for i, name in enumerate(gt_names)]
    optimal = match_people(ai, gt)
    assert optimal.tp >= match_people(ai, gt, settings=GREEDY).tp
    assert match_people(rnd.sample(ai, len(ai)), gt).tp == optimal.tp


# --- events -----------------------------------------------------------------


def test_spec_example_visit_during_spring_break_matches():
    people = match_people([person(-1, "Ann", "Lee")], [person(-5, "Ann", "Lee")])
    ai = [event(-3, "Visit", "didn't talk for a while", dateTime="2025-03-15", person=-1)]
    gt = [event(-9, "visit", "didn't talk during spring break", dateTime="2025-03-12", person=-5)]
    result = match_events(ai, gt, people)
    assert pairs_of(result) == [(-3, -9)]
    description = 1 - 22 / 54  # indel distance 22 over 54 characters
    assert fuzz.ratio("didn't talk for a while", "didn't talk during spring break") / 100 == (
        pytest.approx(description)
    )
    date_part = 1 - 3 / 14  # 3 days apart, tolerance 7
    assert result.pairs[0].score == pytest.approx(0.8 * description + 0.2 * date_part)


def test_event_kind_must_be_equal():
    result = match_events([event(1, "death", "Father died")], [event(2, "birth", "Father died")])
    assert (result.tp, result.fp, result.fn) == (0, 1, 1)


def test_description_threshold_is_inclusive():
    assert fuzz.ratio("abcd", "abxy") == 50.0
    assert match_events([event(1, description="abcd")], [event(2, description="abxy")]).tp == 1
    assert fuzz.ratio("abcdefghi", "abcdxyzuv") < 50
    assert (
        match_events([event(1, description="abcdefghi")], [event(2, description="abcdxyzuv")]).tp
        == 0
    )


def test_descriptions_compare_case_and_whitespace_insensitively():
    result = match_events(
        [event(1, description="Mother  was SICK")], [event(2, description="mother was sick")]
    )
    assert result.pairs[0].score == 1.0


def _dated(ident, when, certainty=None, description="Father lost his job"):
    extra = {"dateTime": when}
    if certainty is not None:
        extra["dateCertainty"] = certainty
    return event(ident, "shift", description, **extra)


@pytest.mark.parametrize(
    ("ai_date", "gt_date", "ai_certainty", "gt_certainty", "expected_date_similarity"),
    [
        ("2001-05-10", "2001-05-17", None, "certain", 1 - 7 / 14),  # 7 days: inside
        ("2001-05-10", "2001-05-18", None, None, None),  # 8 days: outside
        ("2001-05-10", "2003-05-10", "approximate", "certain", 1 - 730 / 1460),  # 730 days
        ("2001-05-10", "2003-05-11", "certain", "approximate", None),  # 731 days
        ("1950-01-01", "2020-01-01", "unknown", "certain", 1.0),  # unknown matches anything
        (None, "2020-01-01", None, None, 1.0),  # a missing date matches anything
        ("spring break", "2020-01-01", None, None, 1.0),  # so does an unparseable one
        ("1985", "1985-03-12", None, None, 1 - 111 / 1460),  # partial: approximate, mid-year
        ("March 2003", "2003-03-20", "certain", "certain", 1 - 5 / 1460),  # mid-month
    ],
)
def test_date_rules(ai_date, gt_date, ai_certainty, gt_certainty, expected_date_similarity):
    result = match_events([_dated(1, ai_date, ai_certainty)], [_dated(2, gt_date, gt_certainty)])
    if expected_date_similarity is None:
        assert result.tp == 0
    else:
        assert result.tp == 1
        assert result.pairs[0].score == pytest.approx(0.8 + 0.2 * expected_date_similarity)


def test_date_tolerances_are_configurable():
    wide = MatchSettings(date_tolerance_days=30)
    ai, gt = [_dated(1, "2001-05-10")], [_dated(2, "2001-05-30")]
    assert match_events(ai, gt).tp == 0
    assert match_events(ai, gt, settings=wide).pairs[0].score == pytest.approx(
        0.8 + 0.2 * (1 - 20 / 60)
    )


def test_partial_dates_do_not_borrow_todays_month_or_day():
    year = parse_date("1985")
    assert year.partial and date.fromordinal(year.ordinal) == date(1985, 7, 1)
    month = parse_date("March 2003")
    assert month.partial and date.fromordinal(month.ordinal) == date(2003, 3, 15)
    full = parse_date("March 12, 2003")
    assert not full.partial and date.fromordinal(full.ordinal) == date(2003, 3, 12)
    assert event_date({"dateTime": "1990"}).certainty == "approximate"
    assert event_date({"dateTime": "1990-02-03"}).certainty == "certain"


@given(
    st.lists(
        st.tuples(
            st.none() | st.integers(700_000, 740_000),
            st.sampled_from(["certain", "approximate", "unknown"]),
        ),
        max_size=5,
    ),
    st.lists(
        st.tuples(
            st.none() | st.integers(700_000, 740_000),
            st.sampled_from(["certain", "approximate", "unknown"]),
        ),
        max_size=5,
    ),
)
def test_vectorised_date_similarity_agrees_with_the_scalar_rules(ai, gt):
    rules = MatchSettings()
    ai_dates, gt_dates = [EventDate(*d) for d in ai], [EventDate(*d) for d in gt]
    similarity, within = date_similarity_matrix(ai_dates, gt_dates, rules)
    for i, a in enumerate(ai_dates):
        for j, g in enumerate(gt_dates):
            expected = date_similarity(a, g, rules)
            assert within[i, j] == (expected is not None)
            if expected is not None:
                assert similarity[i, j] == pytest.approx(expected)


def test_event_links_must_agree_after_resolution():
    people = match_people(
        [person(-1, "Ann", "Lee"), person(-2, "Bob", "Lee"), person(-3, "Cy", "Lee")],
        [person(-11, "Ann", "Lee"), person(-12, "Bob", "Lee"), person(-13, "Cy", "Lee")],
    )
    base = {"kind": "shift", "description": "they fought"}
    gt = [
        {
            **base,
            "id": 1,
            "person": -11,
            "relationshipTargets": [-12, -13],
            "relationshipTriangles": [],
        }
    ]
    same = {**base, "id": 2, "person": -1, "relationshipTargets": [-3, -2]}  # order is irrelevant
    assert match_events([same], gt, people).tp == 1
    wrong_person = {**same, "person": -2}
    assert match_events([wrong_person], gt, people).tp == 0
    fewer_targets = {**same, "relationshipTargets": [-2]}
    assert match_events([fewer_targets], gt, people).tp == 0
    extra_triangle = {**same, "relationshipTriangles": [-3]}
    assert match_events([extra_triangle], gt, people).tp == 0
    with_spouse = {**same, "spouse": -2}
    assert match_events([with_spouse], gt, people).tp == 0


def test_links_to_unmatched_ai_people_never_agree_but_undefined_ids_are_shared():
    people = match_people(
        [person(-1, "Ann", "Lee"), person(-7, "Zed", "Quill")], [person(-7, "Ann", "Lee")]
    )
    assert people.id_map == {-1: -7}
    # AI -7 is an AI-defined person without a match: it is not GT's -7.
    assert match_events([event(1, person=-7)], [event(2, person=-7)], people).tp == 0
    assert match_events([event(1, person=-1)], [event(2, person=-7)], people).tp == 1
    # 42 is defined by neither payload: a committed person both sides refer to.
    assert match_events([event(1, person=42)], [event(2, person=42)], people).tp == 1
    assert match_events([event(1, person=42)], [event(2, person=43)], people).tp == 0


def test_event_score_weights_are_configurable():
    description_only = MatchSettings(description_weight=1.0, date_weight=0.0)
    result = match_events(
        [_dated(1, "2001-05-10", description="abcd")],
        [_dated(2, "2001-05-12", description="abxy")],
        settings=description_only,
    )
    assert result.pairs[0].score == pytest.approx(0.5)


# --- pair bonds -------------------------------------------------------------


def test_reversed_pair_bonds_match():
    people = match_people(
        [person(-1, "John", "Smith"), person(-2, "Mary", "Smith")],
        [person(-5, "Jon", "Smith"), person(-8, "Mary", "Smith")],
    )
    result = match_pair_bonds([bond(-3, -1, -2)], [bond(-9, -8, -5)], people)
    assert pairs_of(result) == [(-3, -9)]


def test_pair_bonds_with_a_different_partner_do_not_match():
    people = match_people(
        [person(-1, "John", "Smith"), person(-2, "Mary", "Smith")],
        [person(-5, "John", "Smith"), person(-8, "Susan", "Brown")],
    )
    result = match_pair_bonds([bond(-3, -1, -2)], [bond(-9, -5, -8)], people)
    assert (result.tp, result.fp, result.fn) == (0, 1, 1)


def test_pair_bonds_accept_a_plain_id_map():
    result = match_pair_bonds([bond(1, -1, -2)], [bond(2, -20, -10)], {-1: -10, -2: -20})
    assert result.tp == 1


def test_match_settings_validate_and_round_trip():
    custom = MatchSettings(name_similarity_threshold=0.7, strategy="greedy")
    assert MatchSettings.from_dict(custom.to_dict()) == custom
    assert MatchSettings.from_dict({"strategy": "greedy", "future_knob": 3}).strategy == "greedy"
    with pytest.raises(ValueError):
        MatchSettings(strategy="hungarian")
    with pytest.raises(ValueError):
        MatchSettings(date_tolerance_days=0)
    with pytest.raises(ValueError):
        MatchSettings(description_similarity_threshold=1.5)
