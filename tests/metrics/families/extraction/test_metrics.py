"""Statement F1, SARF macro-F1, exact match, system aggregation and serialisation."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from metrics.families.extraction import (
    MatchSettings,
    StatementF1Metrics,
    SystemF1Metrics,
    add_contributions,
    calculate_statement_f1,
    calculate_system_f1,
    empty_totals,
    f1_from_counts,
    fixed,
    macro_f1_from_pairs,
    normalize_for_exact_match,
    precision_recall_f1,
    statement_contribution,
    sum_contributions,
    system_f1_from_totals,
    total_contributions,
)


def person(ident, name, last_name="Smith", **extra):
    return {"id": ident, "name": name, "last_name": last_name, **extra}


def event(ident, description, person_id=None, kind="shift", **extra):
    return {"id": ident, "kind": kind, "description": description, "person": person_id, **extra}


# --- counts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "expected"),
    [((0, 0, 0), 1.0), ((0, 3, 0), 0.0), ((0, 0, 2), 0.0), ((2, 1, 0), 0.8), ((3, 1, 2), 2 / 3)],
)
def test_f1_from_counts(counts, expected):
    assert f1_from_counts(*counts) == pytest.approx(expected)


def test_precision_and_recall():
    assert precision_recall_f1(3, 1, 2) == pytest.approx((0.75, 0.6, 2 / 3))
    assert precision_recall_f1(0, 0, 0) == (1.0, 1.0, 1.0)
    assert precision_recall_f1(0, 0, 4) == (0.0, 0.0, 0.0)  # AI claimed nothing, missed 4


# --- SARF -------------------------------------------------------------------


def test_sarf_macro_f1_by_hand():
    # up: TP 1, predicted 1, actual 2 -> 2/3; down: 0; none: 2/2 = 1.
    pairs = [("up", "up"), ("down", "up"), ("none", "none")]
    assert macro_f1_from_pairs(pairs) == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert macro_f1_from_pairs([]) is None


@given(
    st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abce")), min_size=1, max_size=30)
)
def test_sarf_macro_f1_equals_scikit_learn(pairs):
    ai, gt = [a for a, _ in pairs], [g for _, g in pairs]
    expected = f1_score(gt, ai, average="macro", zero_division=0.0)
    assert macro_f1_from_pairs(pairs) == pytest.approx(expected)


def test_sarf_values_over_matched_events_with_missing_as_none():
    people = [person(-1, "Ann")]
    ai = {
        "people": people,
        "events": [
            event(1, "mother got sick", -1, symptom="up", anxiety="UP"),
            event(2, "father lost his job", -1, symptom="up", functioning="down"),
            event(3, "invented event", -1, symptom="down"),  # unmatched: not scored
        ],
    }
    gt = {
        "people": people,
        "events": [
            event(11, "mother got sick", -1, symptom="up", anxiety="up"),
            event(12, "father lost his job", -1, symptom=None, functioning="down"),
        ],
    }
    metrics = calculate_statement_f1(ai, gt)
    assert metrics.sarf_pairs["symptom"] == [["up", "up"], ["up", "none"]]
    # symptom classes: up (TP 1, predicted 2, actual 1 -> 2/3), none (0) -> 1/3
    assert metrics.symptom_macro_f1 == pytest.approx(1 / 3)
    assert metrics.anxiety_macro_f1 == pytest.approx(1.0)  # case-insensitive; none/none agrees
    assert metrics.functioning_macro_f1 == pytest.approx(1.0)
    assert metrics.relationship_macro_f1 == pytest.approx(1.0)  # only "none" on both sides


def test_sarf_is_none_without_matched_events():
    metrics = calculate_statement_f1(
        {"events": [event(1, "abc", symptom="up")]}, {"events": [event(2, "xyz", symptom="up")]}
    )
    assert metrics.events_tp == 0
    assert metrics.symptom_macro_f1 is None
    assert metrics.relationship_macro_f1 is None


# --- statement F1 -----------------------------------------------------------


def test_empty_vs_empty_is_trivial_and_perfect():
    metrics = calculate_statement_f1({}, {"people": [], "events": None})
    assert metrics.trivial and metrics.exact_match
    assert metrics.aggregate_micro_f1 == metrics.people_f1 == metrics.pair_bonds_f1 == 1.0
    assert metrics.symptom_macro_f1 is None


def test_ai_empty_vs_gt_non_empty_counts_false_negatives():
    gt = {"people": [person(1, "Ann"), person(2, "Bob")], "events": [event(3, "Ann got sick", 1)]}
    metrics = calculate_statement_f1(None, gt, statement_id=7)
    assert not metrics.trivial and not metrics.exact_match
    assert (metrics.people_fn, metrics.events_fn, metrics.aggregate_fn) == (2, 1, 3)
    assert metrics.aggregate_micro_f1 == 0.0
    assert metrics.people_fn_ids == [1, 2]
    assert metrics.fn_event_kinds == ["shift"]
    assert metrics.statement_id == 7


def test_pooled_and_per_type_f1_with_matched_pairs_and_unmatched_ids():
    ai = {
        "people": [person(-1, "John"), person(-2, "Mary"), person(-3, "Zed", "Quill")],
        "events": [event(-4, "John lost his job", -1, kind="shift")],
        "pair_bonds": [],
    }
    gt = {
        "people": [person(-11, "Jon"), person(-12, "Mary")],
        "events": [
            event(-14, "john lost his job", -11, kind="shift"),
            event(-15, "Mary died", -12, kind="death"),
        ],
        "pair_bonds": [{"id": -16, "person_a": -11, "person_b": -12}],
    }
    metrics = calculate_statement_f1(ai, gt, discussion_id=3)
    # people 2/1/0, events 1/0/1, bonds 0/0/1 -> pooled 3/1/2
    assert (metrics.people_tp, metrics.people_fp, metrics.people_fn) == (2, 1, 0)
    assert (metrics.events_tp, metrics.events_fp, metrics.events_fn) == (1, 0, 1)
    assert (metrics.pair_bonds_tp, metrics.pair_bonds_fp, metrics.pair_bonds_fn) == (0, 0, 1)
    assert metrics.people_f1 == pytest.approx(0.8)
    assert metrics.events_f1 == pytest.approx(2 / 3)
    assert metrics.pair_bonds_f1 == 0.0
    assert metrics.aggregate_micro_f1 == pytest.approx(6 / 9)
    assert [(m["ai_id"], m["gt_id"]) for m in metrics.people_matches] == [(-1, -11), (-2, -12)]
    assert metrics.people_matches[0]["score"] == pytest.approx(1 - 1 / 19, abs=1e-6)
    assert metrics.events_matches == [{"ai_id": -4, "gt_id": -14, "score": 1.0}]
    assert metrics.people_fp_ids == [-3]
    assert metrics.events_fn_ids == [-15] and metrics.fn_event_kinds == ["death"]
    assert metrics.pair_bonds_fn_ids == [-16]
    assert (metrics.aggregate_tp, metrics.aggregate_fp, metrics.aggregate_fn) == (3, 1, 2)


def test_statement_f1_does_not_depend_on_ai_listing_order():
    gt = {
        "people": [person(i, n) for i, n in enumerate(["Ann", "Anne", "Anna", "Jon", "John"], 1)],
        "events": [event(10 + i, f"Ann argued with Jon {i}", 1) for i in range(4)],
        "pair_bonds": [{"id": 20, "person_a": 1, "person_b": 4}],
    }
    ai = {
        "people": [person(-i, n) for i, n in enumerate(["Ann", "Annie", "Anna", "Jon", "John"], 1)],
        "events": [event(-10 - i, f"ann argued with jon {i}", -1) for i in range(4)],
        "pair_bonds": [{"id": -20, "person_a": -4, "person_b": -1}],
    }
    expected = calculate_statement_f1(ai, gt)
    for seed in range(8):
        rng = random.Random(seed)
        shuffled = {key: rng.sample(items, len(items)) for key, items in ai.items()}
        again = calculate_statement_f1(shuffled, gt)
        assert again.aggregate_micro_f1 == expected.aggregate_micro_f1
        assert sorted(map(str, again.people_matches)) == sorted(map(str, expected.people_matches))


def test_greedy_strategy_is_recorded_with_the_result():
    greedy = MatchSettings(strategy="greedy")
    metrics = calculate_statement_f1({}, {}, settings=greedy)
    assert metrics.settings.strategy == "greedy"
    assert metrics.to_dict()["settings"]["strategy"] == "greedy"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
field_names = st.sampled_from(
    [
        "id",
        "name",
        "last_name",
        "parents",
        "parent_a",
        "kind",
        "description",
        "person",
        "spouse",
        "dateTime",
        "dateCertainty",
        "symptom",
        "relationshipTargets",
        "person_a",
        "person_b",
    ]
)
junk_items = st.dictionaries(field_names, json_values | st.integers(-3, 3), max_size=6)
junk_payloads = st.dictionaries(
    st.sampled_from(["people", "events", "pair_bonds", "delete", "other"]),
    st.lists(junk_items | json_values, max_size=4) | json_values,
    max_size=5,
)


@given(junk_payloads, junk_payloads)
def test_malformed_payloads_never_raise(ai, gt):
    metrics = calculate_statement_f1(ai, gt)
    assert 0.0 <= metrics.aggregate_micro_f1 <= 1.0
    assert metrics.aggregate_tp + metrics.aggregate_fp == sum(
        len([i for i in ai.get(k, []) if isinstance(i, dict)]) if isinstance(ai.get(k), list) else 0
        for k in ("people", "events", "pair_bonds")
    )
    json.dumps(metrics.to_dict())
    assert calculate_statement_f1(ai, ai).aggregate_micro_f1 == 1.0  # anything matches itself


def test_non_dict_payload_is_a_caller_error():
    with pytest.raises(TypeError):
        calculate_statement_f1([], {})


# --- exact match ------------------------------------------------------------


def _family_payload(order=1, base=-1, legacy=False):
    """The same family in two id schemes and list orders; legacy uses parent_a/parent_b."""
    john, mary, tom, bond_id, ev = (base, base - 1, base - 2, base - 3, base - 4)
    tom_person = (
        person(tom, "Tom", parent_a=john, parent_b=mary, confidence=0.2)
        if legacy
        else person(tom, "Tom", parents=bond_id, confidence=0.9)
    )
    people = [person(john, "John"), person(mary, "Mary"), tom_person][::order]
    bond = {"id": bond_id, "person_a": john, "person_b": mary, "married": True}
    if order == -1:
        bond = {"id": bond_id, "person_a": mary, "person_b": john, "married": True}
    return {
        "people": people,
        "events": [event(ev, "Tom was born", tom, kind="birth", child=tom, dateTime="1990")],
        "pair_bonds": [bond],
        "delete": [5, 3],
    }


def test_exact_match_ignores_ids_order_confidence_and_parent_form():
    ai = _family_payload(order=1, base=-1)
    gt = _family_payload(order=-1, base=-50, legacy=True)
    gt["delete"] = [3, 5]
    assert normalize_for_exact_match(ai) == normalize_for_exact_match(gt)
    assert calculate_statement_f1(ai, gt).exact_match


def test_exact_match_fails_on_any_content_difference():
    ai, gt = _family_payload(), _family_payload(base=-50)
    gt["events"][0]["description"] = "Tom was born early"
    assert not calculate_statement_f1(ai, gt).exact_match
    ai, gt = _family_payload(), _family_payload(base=-50)
    gt["events"][0]["symptom"] = "up"
    assert not calculate_statement_f1(ai, gt).exact_match
    ai, gt = _family_payload(), _family_payload(base=-50)
    gt["delete"] = [5]
    assert not calculate_statement_f1(ai, gt).exact_match


def test_normalised_form_renumbers_consistently_and_marks_outside_ids():
    payload = {
        "people": [person(-9, "Zoe"), person(-4, "Adam", parents=77)],
        "events": [event(-2, "Adam moved", -4, kind="moved", relationshipTargets=[-9, 42])],
        "pair_bonds": [{"id": -3, "person_a": -9, "person_b": -4, "confidence": 0.4}],
    }
    normal = normalize_for_exact_match(payload)
    assert [(p["id"], p["name"], p["parents"]) for p in normal["people"]] == [
        (1, "adam", "#bond:77"),
        (2, "zoe", None),
    ]
    assert normal["events"][0]["person"] == 1
    assert normal["events"][0]["relationshipTargets"] == ["#42", 2]  # Zoe is 2, 42 is outside
    assert normal["pair_bonds"] == [{"id": 1, "person_a": 1, "person_b": 2, "married": None}]
    assert all("confidence" not in entity for entity in normal["people"] + normal["pair_bonds"])
    assert normal["events"][0]["dateCertainty"] == "certain"


# --- serialisation ----------------------------------------------------------


def test_statement_metrics_round_trip_through_json():
    metrics = calculate_statement_f1(
        _family_payload(), _family_payload(base=-50), statement_id=4, discussion_id=2
    )
    stored = json.loads(json.dumps(metrics.to_dict()))
    assert StatementF1Metrics.from_dict(stored) == metrics
    assert stored["aggregate_tp"] == metrics.aggregate_tp


# --- system -----------------------------------------------------------------


def _three_statements():
    s1 = calculate_statement_f1(  # people 2/1/0 -> F1 0.8
        {
            "people": [person(1, "Ann"), person(2, "Bob"), person(3, "Zed", "Quill")],
            "events": [event(4, "Ann got sick", 1, symptom="up")],
        },
        {
            "people": [person(1, "Ann"), person(2, "Bob")],
            "events": [event(4, "Ann got sick", 1, symptom="up")],
        },
        statement_id=1,
        discussion_id=10,
    )
    s2 = calculate_statement_f1(  # AI empty, GT two people
        {}, {"people": [person(1, "Ann"), person(2, "Bob")]}, statement_id=2, discussion_id=10
    )
    s3 = calculate_statement_f1({}, {}, statement_id=3, discussion_id=11)  # trivial
    return [s1, s2, s3]


def test_system_f1_by_hand():
    s1, s2, s3 = _three_statements()
    assert s1.aggregate_micro_f1 == pytest.approx(2 * 3 / (2 * 3 + 1))  # tp 3 fp 1 fn 0
    system = calculate_system_f1([s1, s2, s3])
    # pooled: tp 3 (2 people + 1 event), fp 1, fn 2 -> 6 / 9
    assert (system.people_tp, system.people_fp, system.people_fn) == (2, 1, 2)
    assert system.aggregate_micro_f1 == pytest.approx(6 / 9)
    assert system.people_f1 == pytest.approx(4 / 7)
    assert system.events_f1 == 1.0 and system.pair_bonds_f1 == 1.0
    assert system.mean_statement_f1 == pytest.approx((6 / 7 + 0 + 1) / 3)
    assert system.mean_statement_f1_nontrivial == pytest.approx((6 / 7 + 0) / 2)
    assert system.exact_match_rate == pytest.approx(1 / 3)  # only the trivial one
    assert system.exact_match_rate_nontrivial == 0.0
    assert (system.total_statements, system.trivial_statements, system.total_discussions) == (
        3,
        1,
        2,
    )
    assert system.symptom_macro_f1 == 1.0


def test_system_sarf_pools_pairs_over_statements():
    def one(ai_value):
        return calculate_statement_f1(
            {"events": [event(1, "Ann got sick", symptom=ai_value)]},
            {"events": [event(2, "Ann got sick", symptom="up")]},
        )

    system = calculate_system_f1([one("up"), one("down")])
    # pooled pairs (up, up), (down, up): up 2*1/(1+2) = 2/3, down 0 -> 1/3
    assert system.symptom_macro_f1 == pytest.approx(1 / 3)
    assert system.anxiety_macro_f1 == 1.0
    assert one("up").symptom_macro_f1 == 1.0 and one("down").symptom_macro_f1 == 0.0


def test_system_sarf_mean_of_statements_sits_beside_the_pooled_figure():
    def one(*ai_values):
        events = [(f"Ann got sick {i}", value) for i, value in enumerate(ai_values)]
        return calculate_statement_f1(
            {"events": [event(i, text, symptom=value) for i, (text, value) in enumerate(events)]},
            {"events": [event(i, text, symptom="up") for i, (text, _) in enumerate(events)]},
        )

    # Statement A: 3 pairs (up, up) -> 1.0. Statement B: 1 pair (down, up) -> 0.0.
    a, b, no_events = one("up", "up", "up"), one("down"), calculate_statement_f1({}, {})
    system = calculate_system_f1([a, b, no_events])
    # Pooled: (up,up)x3 + (down,up): up 2*3/(3+4) = 6/7, down 0 -> 3/7.
    assert system.symptom_macro_f1 == pytest.approx(3 / 7)
    # Mean of per-statement values, the statement without matched events left out: (1 + 0) / 2.
    assert system.mean_statement_symptom_macro_f1 == pytest.approx(0.5)
    assert system.mean_statement_anxiety_macro_f1 == 1.0  # "none" vs "none" everywhere
    only_empty = calculate_system_f1([no_events])
    assert only_empty.mean_statement_symptom_macro_f1 is None
    assert only_empty.symptom_macro_f1 is None


def test_system_sarf_mean_is_additive_and_reads_none_from_older_totals():
    def one(ai_value):
        return calculate_statement_f1(
            {"events": [event(1, "Ann got sick", symptom=ai_value)]},
            {"events": [event(2, "Ann got sick", symptom="up")]},
        )

    statements = [one("up"), one("down"), one("up")]
    totals = sum_contributions(statements)
    assert set(totals) == set(empty_totals())
    one_by_one = empty_totals()
    for metrics in statements:
        one_by_one = add_contributions(one_by_one, statement_contribution(metrics))
    assert one_by_one == totals
    assert system_f1_from_totals(totals).mean_statement_symptom_macro_f1 == pytest.approx(2 / 3)
    removed = add_contributions(totals, statement_contribution(statements[1]), sign=-1)
    assert system_f1_from_totals(removed).mean_statement_symptom_macro_f1 == 1.0
    older = {k: v for k, v in totals.items() if not k.startswith("sarf_f1")}
    assert system_f1_from_totals(older).mean_statement_symptom_macro_f1 is None
    assert system_f1_from_totals(older).symptom_macro_f1 == pytest.approx(
        system_f1_from_totals(totals).symptom_macro_f1
    )


def test_system_over_nothing_reports_no_figures():
    system = calculate_system_f1([])
    assert system.aggregate_micro_f1 is None and system.mean_statement_f1 is None
    assert system.exact_match_rate is None and system.total_statements == 0
    assert system_f1_from_totals(empty_totals()) == system


def test_system_equals_figures_from_summed_contributions():
    statements = _three_statements()
    totals = empty_totals()
    for metrics in statements:
        totals = add_contributions(totals, statement_contribution(metrics))
    assert system_f1_from_totals(totals) == calculate_system_f1(statements)
    assert json.loads(json.dumps(totals)) == totals  # storable as JSON


def test_totals_of_stored_contributions_equal_adding_them_one_by_one_exactly():
    """total_contributions adds in place what add_contributions adds by copying: the same
    sums in the same order, so the run totals stored by a recompute do not change by a bit."""
    rng = random.Random(7)
    statements = [*_three_statements(), *_three_statements()]
    stored = [json.loads(json.dumps(statement_contribution(m))) for m in statements]
    for index, contribution in enumerate(stored):
        contribution["f1_total"] = fixed(rng.random() / 3)  # float sums' order would show
        contribution["discussions"] = {str(index % 4): 1}
    one_by_one = empty_totals()
    for contribution in stored:
        one_by_one = add_contributions(one_by_one, contribution)
    totals = total_contributions(stored)
    assert json.dumps(totals) == json.dumps(one_by_one)
    assert total_contributions([]) == empty_totals()
    # Any mapping nests, not only the decoded dicts (read-only views of them, say).
    views = [_read_only(contribution) for contribution in stored]
    assert json.dumps(total_contributions(views)) == json.dumps(one_by_one)


def _read_only(value):
    if isinstance(value, dict):
        return MappingProxyType({key: _read_only(item) for key, item in value.items()})
    return value


def test_removing_a_contribution_leaves_the_totals_without_it():
    s1, s2, s3 = _three_statements()
    totals = sum_contributions([s1, s2, s3])
    without_s1 = add_contributions(totals, statement_contribution(s1), sign=-1)
    fresh = sum_contributions([s2, s3])
    assert without_s1 == fresh  # every sum, the F1 sums too, exactly
    assert without_s1["sarf"] == {} and without_s1["discussions"] == {"10": 1, "11": 1}
    assert system_f1_from_totals(without_s1).total_discussions == 2
    without_s3 = add_contributions(fresh, statement_contribution(s3), sign=-1)
    assert system_f1_from_totals(without_s3).total_discussions == 1


# F1 values as statements have them, 2tp / (2tp + fp + fn): any with fewer than 2,047 wrong
# items per right one is 2**-10 or more (or 0), which the fixed-point sums hold exactly.
F1_VALUES = st.builds(
    lambda tp, wrong: f1_from_counts(tp, wrong // 2, wrong - wrong // 2),
    st.integers(0, 3000),
    st.integers(0, 2046),
)


def _contribution_of(f1: float, index: int) -> dict:
    contribution = empty_totals()
    contribution.update(count=1, f1_total=fixed(f1), f1_total_nontrivial=fixed(f1))
    contribution["sarf_f1_total"] = {"symptom": fixed(f1)} if f1 else {}
    contribution["sarf_f1_count"] = {"symptom": 1}
    contribution["discussions"] = {str(index % 3): 1}
    return contribution


@given(values=st.lists(F1_VALUES, min_size=1, max_size=40), seed=st.integers(0, 2**32))
def test_totals_are_exact_whatever_the_order_of_adding_and_removing(values, seed):
    """The F1 sums are integers: any order of adding, and any statement added and removed
    again, give the same totals to the bit, and the mean they report is the exact mean of
    the F1 values, rounded once."""
    rng = random.Random(seed)
    contributions = [_contribution_of(f1, i) for i, f1 in enumerate(values)]
    in_order = total_contributions(contributions)
    shuffled = rng.sample(contributions, len(contributions))
    churned = empty_totals()
    for contribution in shuffled:
        churned = add_contributions(churned, contribution)
        passing = _contribution_of(rng.random(), 99)  # a statement edited away again
        churned = add_contributions(add_contributions(churned, passing), passing, sign=-1)
    assert json.dumps(churned, sort_keys=True) == json.dumps(in_order, sort_keys=True)
    exact_mean = float(sum(map(Fraction, values)) / len(values))
    system = system_f1_from_totals(in_order)
    assert system.mean_statement_f1 == exact_mean
    assert system.mean_statement_symptom_macro_f1 == exact_mean


def test_a_small_f1_is_held_to_within_two_to_the_minus_63():
    tiny = 1e-30  # far below any F1 of a real statement
    assert abs(Fraction(fixed(tiny), 2**62) - Fraction(tiny)) <= Fraction(1, 2**63)
    assert fixed(1.0) < 2**63  # a statement's contribution stays a 64-bit integer
    assert fixed(2 / 3) == Fraction(2 / 3) * 2**62  # an F1 of 2**-10 or more: exactly


def test_system_metrics_round_trip_through_json():
    system = calculate_system_f1(_three_statements())
    assert SystemF1Metrics.from_dict(json.loads(json.dumps(system.to_dict()))) == system


def test_system_cumulative_sarf_mean_of_discussions():
    from metrics.families.extraction import calculate_cumulative_f1, calculate_system_cumulative_f1

    def discussion(ident, *ai_values):
        ai = [
            {"events": [event(i, f"Ann got sick {i}", symptom=v)]} for i, v in enumerate(ai_values)
        ]
        gt = [
            {"events": [event(i, f"Ann got sick {i}", symptom="up")]} for i in range(len(ai_values))
        ]
        return calculate_cumulative_f1(ai, gt, discussion_id=ident)

    first, second = discussion(1, "up", "up", "up"), discussion(2, "down")
    system = calculate_system_cumulative_f1([first, second])
    assert system.symptom_macro_f1 == pytest.approx(3 / 7)  # pooled over the four pairs
    assert (first.symptom_macro_f1, second.symptom_macro_f1) == (1.0, 0.0)
    assert system.mean_discussion_symptom_macro_f1 == pytest.approx(0.5)
