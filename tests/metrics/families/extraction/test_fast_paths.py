"""The fast paths of the extraction-F1 engine give exactly what the plain rules give.

Each optimised piece (sparse assignment with enumeration, scalar similarity, date
index, pair-score rounding, SARF counting, batch API) is checked against the
straightforward definition it replaces, bit for bit rather than approximately.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.synthetic import generate_workload
from metrics.families.extraction import (
    MatchSettings,
    StatementInput,
    assignment,
    calculate_cumulative_f1,
    calculate_discussions_cumulative_f1,
    calculate_statement_f1,
    calculate_statements_f1,
    macro_f1_from_pairs,
    statement_contribution,
    sum_contributions,
)
from metrics.families.extraction.aggregate import add_contributions, empty_totals
from metrics.families.extraction.assignment import assign, assign_candidates, optimal_assignment
from metrics.families.extraction.dates import DateIndex, EventDate, date_similarity, event_date
from metrics.families.extraction.matching import row_score
from metrics.families.extraction.sarf import macro_f1_from_columns, sarf_value, sarf_values
from metrics.families.extraction.text import (
    SCORE_DECIMALS,
    pair_similarities,
    person_name,
    person_names,
    similar_pairs,
    similarity,
    similarity_matrix,
)

# --- assignment -------------------------------------------------------------


@st.composite
def tied_problems(draw):
    """Small gated score matrices with many exact ties, ids (some shared, some None)."""
    n_ai, n_gt = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    cells = n_ai * n_gt
    scores = draw(st.lists(st.sampled_from([0.5, 0.8, 0.9, 1.0]), min_size=cells, max_size=cells))
    allowed = draw(st.lists(st.booleans(), min_size=cells, max_size=cells))
    ids = st.sampled_from([None, 1, 2, 3, "a"])
    ai_ids = draw(st.lists(ids, min_size=n_ai, max_size=n_ai))
    gt_ids = draw(st.lists(ids, min_size=n_gt, max_size=n_gt))
    return (
        np.array(scores, dtype=float).reshape(n_ai, n_gt),
        np.array(allowed, dtype=bool).reshape(n_ai, n_gt),
        ai_ids,
        gt_ids,
    )


@given(tied_problems())
def test_enumerating_small_conflicts_gives_what_the_solver_gives(case):
    scores, allowed, ai_ids, gt_ids = case
    enumerated = assign(scores, allowed, "optimal", ai_ids=ai_ids, gt_ids=gt_ids)
    saved = assignment._ENUMERATE_MAX_SIDE
    assignment._ENUMERATE_MAX_SIDE = 0  # every conflict goes to linear_sum_assignment
    try:
        solved = assign(scores, allowed, "optimal", ai_ids=ai_ids, gt_ids=gt_ids)
    finally:
        assignment._ENUMERATE_MAX_SIDE = saved
    assert enumerated == solved


def test_a_perfect_unique_matching_skips_the_solver(monkeypatch):
    def no_solver(*args, **kwargs):
        raise AssertionError("the solver should not run")

    monkeypatch.setattr(assignment, "linear_sum_assignment", no_solver)
    candidates = [{2: 0.9}, {}, {0: 1.0}, {1: 0.6}]
    assert assign_candidates(candidates) == [(0, 2), (2, 0), (3, 1)]


def test_optimal_assignment_accepts_any_truthy_allowed_array():
    scores = np.array([[1.0, 0.3], [0.6, 0.0]])
    as_bool = np.array([[True, True], [True, False]])
    assert optimal_assignment(scores, as_bool.astype(int)) == optimal_assignment(scores, as_bool)


# --- text -------------------------------------------------------------------

WORDS = ["john smith", "jon smith", "joan smith", "mary", "", "mark lee", "marie lee", "ann"]


def test_similar_pairs_equal_the_thresholded_rounded_matrix():
    rng = random.Random(3)
    for _ in range(300):
        left = rng.sample(WORDS, rng.randint(0, 5))
        right = rng.sample(WORDS, rng.randint(0, 5))
        threshold = rng.choice([0.0, 0.5, 0.8, 0.95])
        matrix = np.round(similarity_matrix(left, right), SCORE_DECIMALS)
        expected = [
            {j: float(matrix[i, j]) for j in range(len(right)) if matrix[i, j] > threshold}
            for i in range(len(left))
        ]
        assert similar_pairs(left, right, threshold) == expected


def test_pair_similarities_agree_with_the_matrix_for_short_and_long_lists():
    rng = random.Random(4)
    for size in (0, 3, 100):  # below and above the switch to one cpdist call
        left = [rng.choice(WORDS) for _ in range(size)]
        right = [rng.choice(WORDS) for _ in range(size)]
        expected = [
            float(np.round(similarity_matrix([a], [b]), 10)[0, 0])
            for a, b in zip(left, right, strict=True)
        ]
        assert pair_similarities(left, right) == expected
        assert [similarity(a, b) for a, b in zip(left, right, strict=True)] == expected


def test_person_names_equal_person_name_even_for_odd_values():
    people = [
        {"name": "John", "last_name": "Smith"},
        {"name": " Mary  Ann ", "last_name": None},
        {"name": None, "last_name": "Lee"},
        {"name": ["not", "hashable"], "last_name": "Lee"},
        {"name": 5, "last_name": True},
        {},
    ]
    assert person_names(people) == [person_name(p) for p in people]
    assert person_names(people)[:3] == ["john smith", "mary ann", "lee"]


# --- dates ------------------------------------------------------------------

day_or_none = st.none() | st.integers(720_000, 722_000)
certainty = st.sampled_from(["certain", "approximate", "unknown"])


@given(
    st.lists(st.tuples(day_or_none, certainty), min_size=DateIndex.MIN_SIZE, max_size=30),
    st.tuples(day_or_none, certainty),
    st.sampled_from([MatchSettings(), MatchSettings(date_tolerance_days=1)]),
)
def test_date_index_finds_what_date_similarity_allows(members, ai, rules):
    dates = [EventDate(*member) for member in members]
    found = DateIndex(list(enumerate(dates))).compatible(EventDate(*ai), rules)
    expected = {
        index: score
        for index, day in enumerate(dates)
        if (score := date_similarity(EventDate(*ai), day, rules)) is not None
    }
    assert dict(found) == expected and len(found) == len(expected)


def test_event_date_reads_unhashable_values_as_missing():
    assert event_date({"dateTime": ["1990"], "dateCertainty": "approximate"}) == EventDate(
        None, "approximate"
    )
    assert event_date({"dateTime": "1990", "dateCertainty": ["x"]}) == event_date(
        {"dateTime": "1990"}
    )


# --- scores and SARF --------------------------------------------------------


@pytest.mark.parametrize("value", [0.123456789, 0.1234565, 1.0, 0.0, -0.0, 1, 0, 2.5e-7, 0.9999995])
def test_row_score_is_round_to_six_places(value):
    for _ in range(2):  # the second call may come from the cache
        result = row_score(value)
        assert result == round(value, 6)
        assert type(result) is type(round(value, 6))
        assert str(result) == str(round(value, 6))  # keeps the sign of -0.0


def test_macro_f1_from_columns_equals_the_pairs_definition():
    rng = random.Random(5)
    classes = ["up", "down", "same", "none"]
    for _ in range(500):
        ai = tuple(rng.choice(classes) for _ in range(rng.randint(0, 8)))
        gt = tuple(value if rng.random() < 0.6 else rng.choice(classes) for value in ai)
        assert macro_f1_from_columns(ai, gt) == macro_f1_from_pairs(list(zip(ai, gt, strict=True)))


def test_sarf_values_match_sarf_value_for_each_variable():
    events = [
        {"symptom": "Up", "anxiety": None, "relationship": " conflict "},
        {"symptom": ["x"], "functioning": 3},
        {},
    ]
    for event in events:
        expected = tuple(
            sarf_value(event, v) for v in ("symptom", "anxiety", "relationship", "functioning")
        )
        assert sarf_values(event) == expected


# --- aggregation and batches ------------------------------------------------


def _workload_statements(n_discussions=4, n_statements=12, noise=0.5):
    workload = generate_workload(n_discussions, n_statements, seed=11, noise=noise)
    return workload, [
        (s.ai_delta, s.gt_delta, s.order, index)
        for index, discussion in enumerate(workload)
        for s in discussion.subject_statements()
    ]


def test_sum_contributions_equals_adding_each_contribution():
    _, items = _workload_statements()
    metrics = [
        calculate_statement_f1(a, g, statement_id=s, discussion_id=d) for a, g, s, d in items
    ]
    folded = empty_totals()
    for item in metrics:
        folded = add_contributions(folded, statement_contribution(item))
    summed = sum_contributions(metrics)
    assert summed == folded
    assert list(summed["sarf"]) == list(folded["sarf"])  # same key order too


@pytest.mark.parametrize("rules", [None, MatchSettings(strategy="greedy")])
def test_batch_statements_equal_one_call_each(rules):
    _, items = _workload_statements()
    one_by_one = [
        calculate_statement_f1(a, g, settings=rules, statement_id=s, discussion_id=d)
        for a, g, s, d in items
    ]
    assert calculate_statements_f1(items, settings=rules) == one_by_one
    plain = calculate_statements_f1([(a, g) for a, g, _, _ in items], settings=rules)
    assert [m.to_dict() for m in plain] == [
        {**m.to_dict(), "statement_id": None, "discussion_id": None} for m in one_by_one
    ]
    named = calculate_statements_f1([StatementInput(*item) for item in items], settings=rules)
    assert named == one_by_one


def test_batch_cumulative_equals_one_call_each():
    workload, _ = _workload_statements()
    discussions = [
        (
            [s.ai_delta for s in d.subject_statements()],
            [s.gt_delta for s in d.subject_statements()],
            i,
        )
        for i, d in enumerate(workload)
    ]
    expected = [calculate_cumulative_f1(a, g, discussion_id=i) for a, g, i in discussions]
    assert calculate_discussions_cumulative_f1(discussions) == expected


def test_results_do_not_depend_on_warm_caches():
    from metrics.families.extraction import clear_caches

    _, items = _workload_statements(2, 6)
    warm = calculate_statements_f1(items)
    clear_caches()
    assert calculate_statements_f1(items) == warm


def test_permutations_of_tiny_conflicts_cover_both_orientations():
    # 3 AI people competing for 2 GT people, and 2 for 3: both enumeration branches.
    for shape in ((3, 2), (2, 3)):
        scores = np.full(shape, 0.9)
        allowed = np.ones(shape, dtype=bool)
        ids = (list(range(shape[0])), list(range(shape[1])))
        pairs = assign(scores, allowed, "optimal", ai_ids=ids[0], gt_ids=ids[1])
        assert pairs == [(0, 0), (1, 1)]  # the same-id pairs win the tie
