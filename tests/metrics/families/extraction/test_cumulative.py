"""The cumulative F1: the AI's and the ground truth's accumulated PDPs compared (the
accumulation itself is tested with metrics.families.payload.rules, tests/audit/test_pdp_cumulative.py)."""

from __future__ import annotations

import json

import pytest

from metrics.families.extraction import (
    CumulativeF1Metrics,
    SystemCumulativeF1Metrics,
    calculate_cumulative_f1,
    calculate_statement_f1,
    calculate_system_cumulative_f1,
    calculate_system_f1,
    cumulative,
    statement_contribution,
    sum_contributions,
    system_cumulative_f1_from_totals,
)
from metrics.families.payload import items as pdp
from tests.pdp_items import bond, event, person


def _discussion():
    """Three statements; GT records a marriage the AI never extracts and deletes an event."""
    gt = [
        {"people": [person(-1, "John"), person(-2, "Mary")], "pair_bonds": [bond(-5, -1, -2)]},
        {"events": [event(-6, "John lost his job", -1), event(-7, "Mary got sick", -2)]},
        {"delete": [-7], "events": [event(-8, "Mary recovered", -2)]},
    ]
    ai = [
        {"people": [person(-1, "Jon"), person(-2, "Mary")]},
        {"events": [event(-16, "john lost his job", -1), event(-17, "mary got sick", -2)]},
        {"events": [event(-18, "Mary recovered", -2)]},
    ]
    return ai, gt


def test_cumulative_f1_compares_the_end_states():
    ai, gt = _discussion()
    metrics = calculate_cumulative_f1(ai, gt, discussion_id=30)
    assert (metrics.people_tp, metrics.people_fp, metrics.people_fn) == (2, 0, 0)
    # The AI kept "Mary got sick", which GT deleted: one false positive.
    assert (metrics.events_tp, metrics.events_fp, metrics.events_fn) == (2, 1, 0)
    assert metrics.events_fp_ids == [-17]
    assert (metrics.pair_bonds_tp, metrics.pair_bonds_fn, metrics.pair_bonds_f1) == (0, 1, 0.0)
    assert metrics.aggregate_micro_f1 == pytest.approx(2 * 4 / (2 * 4 + 1 + 1))
    assert (metrics.discussion_id, metrics.statement_count) == (30, 3)
    assert not metrics.exact_match and not metrics.trivial


def test_cumulative_f1_exposes_what_per_statement_f1_hides():
    # Per statement, the statements without pair bonds score 1.0 on pair bonds.
    ai, gt = _discussion()
    per_statement = [calculate_statement_f1(a, g) for a, g in zip(ai, gt, strict=True)]
    assert [m.pair_bonds_f1 for m in per_statement] == [0.0, 1.0, 1.0]
    assert calculate_cumulative_f1(ai, gt).pair_bonds_f1 == 0.0


def test_identical_discussions_match_exactly():
    _, gt = _discussion()
    metrics = calculate_cumulative_f1(gt, gt)
    assert metrics.exact_match and metrics.aggregate_micro_f1 == 1.0
    assert calculate_cumulative_f1([], []).trivial


def test_system_cumulative_pools_counts_and_averages_discussions():
    ai, gt = _discussion()
    first = calculate_cumulative_f1(ai, gt, discussion_id=1)  # tp 4, fp 1, fn 1
    second = calculate_cumulative_f1(gt, gt, discussion_id=2)  # tp 5 (2 people, 2 events, 1 bond)
    empty = calculate_cumulative_f1([{}], [{}], discussion_id=3)
    system = calculate_system_cumulative_f1([first, second, empty])
    assert system.aggregate_micro_f1 == pytest.approx(2 * 9 / (2 * 9 + 1 + 1))
    assert system.mean_discussion_f1 == pytest.approx((0.8 + 1.0 + 1.0) / 3)
    assert system.mean_discussion_f1_nontrivial == pytest.approx((0.8 + 1.0) / 2)
    assert (system.total_discussions, system.trivial_discussions) == (3, 1)
    assert system.exact_match_rate == pytest.approx(2 / 3)
    totals = sum_contributions([first, second, empty])
    assert system_cumulative_f1_from_totals(totals) == system
    assert SystemCumulativeF1Metrics.from_dict(json.loads(json.dumps(system.to_dict()))) == system
    stored = json.loads(json.dumps(first.to_dict()))
    assert CumulativeF1Metrics.from_dict(stored) == first
    assert statement_contribution(first)["discussions"] == {"1": 1}


def test_pooled_statement_and_cumulative_figures_differ_as_expected():
    ai, gt = _discussion()
    per_statement = [
        calculate_statement_f1(a, g, discussion_id=1) for a, g in zip(ai, gt, strict=True)
    ]
    system = calculate_system_f1(per_statement)
    # statement 1: people 2/0/0, bond 0/0/1; statement 2: events 2/0/0; statement 3: event 1/0/0
    assert (system.events_tp, system.events_fp, system.pair_bonds_fn) == (3, 0, 1)
    assert system.aggregate_micro_f1 == pytest.approx(2 * 5 / (2 * 5 + 0 + 1))
    assert system.total_discussions == 1


def test_the_library_keeps_exporting_the_accumulation_of_audit_pdp():
    assert cumulative is pdp.cumulative
