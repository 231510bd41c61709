"""The synthetic workload generator of the demo data and the benchmarks."""

from __future__ import annotations

import random

from audit.synthetic import extraction_run, generate_discussion, generate_workload
from metrics.families.extraction import (
    calculate_statement_f1,
    calculate_system_f1,
    normalize_for_exact_match,
)
from metrics.families.payload.items import payload_ids
from metrics.families.payload.rules import pdp_problems


def test_same_seed_same_discussion():
    assert generate_discussion(7, 6).to_dict() == generate_discussion(7, 6).to_dict()
    assert generate_discussion(7, 6).to_dict() != generate_discussion(8, 6).to_dict()
    assert generate_discussion("demo-1", 3).to_dict() == generate_discussion("demo-1", 3).to_dict()


def test_a_random_instance_seeds_deterministically():
    first = generate_discussion(random.Random(5), 3)
    again = generate_discussion(random.Random(5), 3)
    assert first.to_dict() == again.to_dict()


def test_statements_alternate_expert_questions_and_subject_answers():
    discussion = generate_discussion(1, 5)
    assert [s.speaker for s in discussion.statements] == ["expert", "subject"] * 5
    assert [s.order for s in discussion.statements] == list(range(10))
    for statement in discussion.statements:
        assert statement.text.strip()
        carries = statement.gt_delta is not None and statement.ai_delta is not None
        assert carries == (statement.speaker == "subject")
    no_experts = generate_discussion(1, 5, expert_turns=False)
    assert [s.speaker for s in no_experts.statements] == ["subject"] * 5


def test_ground_truth_deltas_have_the_typical_shape_and_consistent_links():
    for statement in generate_discussion(2, 30).subject_statements():
        delta = statement.gt_delta
        assert 3 <= len(delta["people"]) <= 8
        assert 3 <= len(delta["events"]) <= 8
        assert 1 <= len(delta["pair_bonds"]) <= 3
        people = {p["id"] for p in delta["people"]}
        for event in delta["events"]:
            assert event["person"] in people
            assert set(event.get("relationshipTargets") or []) <= people
        for bond in delta["pair_bonds"]:
            assert {bond["person_a"], bond["person_b"]} <= people
        assert all(p["id"] < 0 for p in delta["people"])


def test_ground_truth_names_only_what_it_or_an_earlier_statement_told():
    # The demo's ground truth must pass the review rules, so its export imports again.
    for seed in range(8):
        earlier: list[dict] = []
        for statement in generate_discussion(seed, 50).subject_statements():
            assert pdp_problems(statement.gt_delta, known=payload_ids(earlier)) == []
            earlier.append(statement.gt_delta)


def test_ground_truth_does_not_depend_on_noise():
    clean, noisy = generate_discussion(4, 8, noise=0.0), generate_discussion(4, 8, noise=0.6)
    assert [s.gt_delta for s in clean.statements] == [s.gt_delta for s in noisy.statements]
    assert [s.ai_delta for s in clean.statements] != [s.ai_delta for s in noisy.statements]


def test_without_noise_the_ai_delta_is_the_ground_truth_up_to_confidence_and_bond_order():
    for statement in generate_discussion(5, 10, noise=0.0).subject_statements():
        assert normalize_for_exact_match(statement.ai_delta) == normalize_for_exact_match(
            statement.gt_delta
        )
        metrics = calculate_statement_f1(statement.ai_delta, statement.gt_delta)
        assert metrics.aggregate_micro_f1 == 1.0 and metrics.exact_match


def test_more_noise_lowers_the_f1():
    def system_f1(noise):
        statements = generate_discussion(6, 40, noise=noise).subject_statements()
        return calculate_system_f1(
            calculate_statement_f1(s.ai_delta, s.gt_delta) for s in statements
        ).aggregate_micro_f1

    low, medium, high = system_f1(0.1), system_f1(0.3), system_f1(0.8)
    assert 1.0 > low > medium > high > 0.3


def test_extraction_run_reproduces_the_built_in_run_and_makes_other_runs():
    discussion = generate_discussion("x", 6, noise=0.3, ai_run=2)
    built_in = [s.ai_delta for s in discussion.subject_statements()]
    assert extraction_run(discussion, noise=0.3, ai_run=2) == built_in
    assert extraction_run(discussion, noise=0.3, ai_run=3) != built_in


def test_noisy_runs_contain_typical_extraction_errors():
    statements = [
        s for d in generate_workload(3, 20, seed=1, noise=0.5) for s in d.subject_statements()
    ]
    ai_names = {p["name"] for s in statements for p in s.ai_delta["people"]}
    gt_names = {p["name"] for s in statements for p in s.gt_delta["people"]}
    assert ai_names - gt_names  # typos
    assert any(len(s.ai_delta["events"]) < len(s.gt_delta["events"]) for s in statements)
    assert any(e["id"] <= -100_000 for s in statements for e in s.ai_delta["events"])  # invented
    assert any(
        a["description"] != g["description"]
        for s in statements
        for a, g in zip(s.ai_delta["events"], s.gt_delta["events"], strict=False)
        if a["id"] == g["id"]
    )


def test_generate_workload_sizes():
    workload = generate_workload(3, 4, seed=9)
    assert len(workload) == 3
    assert all(len(d.subject_statements()) == 4 == len(d.statements) for d in workload)
