"""How a plan spreads statements over auditors: round-robin, balanced, the overlap sample.
Pure functions over ids: no database."""

from __future__ import annotations

from collections import Counter

from audit.services.assignments import Strategy, distribute, overlap_sample

UNITS = {1: [11, 12, 13, 14, 15], 2: [21, 22, 23], 3: [31, 32]}  # discussion -> statement ids


def test_round_robin_gives_whole_discussions_in_turn():
    owner = distribute(UNITS, [7, 8], Strategy.ROUND_ROBIN)
    assert {owner[pk] for pk in UNITS[1]} == {7}
    assert {owner[pk] for pk in UNITS[2]} == {8}
    assert {owner[pk] for pk in UNITS[3]} == {7}


def test_balanced_gives_each_discussion_to_the_least_loaded_auditor():
    owner = distribute(UNITS, [7, 8], Strategy.BALANCED)
    assert Counter(owner.values()) == {7: 5, 8: 5}
    assert {owner[pk] for pk in UNITS[1]} == {7}  # the largest first, to the first auditor


def test_the_overlap_sample_has_the_asked_share_and_k_coders():
    owner = distribute(UNITS, [7, 8, 9], Strategy.ROUND_ROBIN)
    extra = overlap_sample(owner, [7, 8, 9], share=0.5, k=3, seed=1)
    assert len(extra) == 5  # half of ten statements
    for pk, others in extra.items():
        assert len(others) == 2 and owner[pk] not in others and len(set(others)) == 2


def test_the_overlap_sample_is_repeatable_and_spreads_the_extra_work():
    owner = distribute(UNITS, [7, 8], Strategy.ROUND_ROBIN)
    first = overlap_sample(owner, [7, 8], share=0.4, k=2, seed=5)
    assert first == overlap_sample(owner, [7, 8], share=0.4, k=2, seed=5)
    assert overlap_sample(owner, [7, 8], share=0.0, k=2, seed=5) == {}
    extra_load = Counter(a for others in first.values() for a in others)
    assert sum(extra_load.values()) == 4
