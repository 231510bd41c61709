"""Error patterns of the failure packets (no database): keys, SARF cells, parent links."""

from __future__ import annotations

import re

import pytest

from metrics.families.extraction.patterns import (
    PATTERN_REGEX,
    parent_link_errors,
    pattern_cells,
    pattern_parse,
)


def test_keys_name_patterns_and_the_schema_regex_agrees() -> None:
    labels = {
        "pair_bonds_fn": "missed pair bonds",
        "events_fp": "spurious events",
        "events_fn:Shift ": "missed shift events",
        "sarf_high:anxiety": "anxiety coded too high",
        "sarf_wrong:relationship": "relationship coded wrong",
        "parent_links": "wrong parent links",
    }
    for key, label in labels.items():
        assert pattern_parse(key).label == label
        assert re.match(PATTERN_REGEX, key.strip())
    for bad in ("pair_bonds", "sarf_high:relationship", "events_fn:", "sarf_low:mood", "x_fn"):
        with pytest.raises(ValueError, match="expected"):
            pattern_parse(bad)
        assert not re.match(PATTERN_REGEX, bad)


def test_too_high_and_too_low_follow_down_same_up() -> None:
    # AI value first, then the ground truth's: {ai: {gt: n}}
    confusion = {"up": {"none": 2, "down": 1, "up": 7}, "same": {"down": 3}, "down": {"up": 4}}
    assert pattern_cells(pattern_parse("sarf_high:anxiety"), confusion) == 6
    assert pattern_cells(pattern_parse("sarf_low:anxiety"), confusion) == 4
    assert pattern_cells(pattern_parse("sarf_wrong:anxiety"), confusion) == 10


def test_parent_links_are_read_through_the_people_map() -> None:
    """The AI gives Paul the right parents under its own ids, and Ann a wrong mother."""
    ai = {
        "people": [
            {"id": -1, "name": "Mark"},
            {"id": -2, "name": "Betty"},
            {"id": -3, "name": "Paul", "parents": -9},
            {"id": -4, "name": "Ann", "parents": -8},
        ],
        "pair_bonds": [
            {"id": -9, "person_a": -1, "person_b": -2},
            {"id": -8, "person_a": -1, "person_b": -3},
        ],
    }
    gt = {
        "people": [
            {"id": 1, "name": "Mark"},
            {"id": 2, "name": "Betty"},
            {"id": 3, "name": "Paul", "parents": 9},
            {"id": 4, "name": "Ann", "parents": 9},
        ],
        "pair_bonds": [{"id": 9, "person_a": 1, "person_b": 2}],
    }
    matches = [{"ai_id": -i, "gt_id": i} for i in (1, 2, 3, 4)]
    [error] = parent_link_errors(ai, gt, matches)
    assert (error.ai_id, error.gt_id) == (-4, 4)
    assert (error.ai_parents, error.gt_parents) == ([1, 3], [1, 2])
