"""collector_paused (evalsite/perf/collector.py) pauses Python's cyclic collector for a block
of scoring, leaves it as it found it, and hands what the block built to the oldest generation
so that resuming does not scan it at once."""

from __future__ import annotations

import gc
import threading

import pytest

from audit.synthetic import generate_workload
from evalsite.perf.collector import collector_paused
from metrics.families.extraction import calculate_statements_f1


def _statements(n_discussions: int, n_statements: int) -> list[tuple]:
    workload = generate_workload(n_discussions, n_statements, seed=11, noise=0.5)
    return [
        (s.ai_delta, s.gt_delta) for discussion in workload for s in discussion.subject_statements()
    ]


def test_the_collector_is_left_as_it_was_found():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(TypeError), collector_paused():
        calculate_statements_f1([("not a payload", {})])
    assert gc.isenabled()


def test_threads_pausing_the_collector_at_once_resume_it_when_the_last_leaves():
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def second() -> None:
        first_in.wait()
        with collector_paused():
            second_in.set()
            first_out.wait()
            seen["after the first left"] = gc.isenabled()

    thread = threading.Thread(target=second)
    thread.start()
    with collector_paused():
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    # The first thread left while the second was inside: still paused for the second.
    assert seen == {"after the first left": False}
    assert gc.isenabled()


def test_what_the_block_built_is_left_for_no_young_collection_to_scan():
    items = _statements(2, 10)
    gc.collect()
    young_scans = gc.get_stats()[0]["collections"]
    with collector_paused():
        results = calculate_statements_f1(items)
    assert len(results) == len(items)
    # Without the hand-over to the oldest generation, every object the block built counts
    # towards the youngest one, and re-enabling the collector scans them all.
    assert gc.get_stats()[0]["collections"] == young_scans
    assert gc.get_count()[0] < 100


def test_what_the_process_froze_stays_frozen():
    items = _statements(1, 3)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            results = calculate_statements_f1(items)
        # Unfreezing would empty the permanent generation; a frozen object freed meanwhile
        # only lowers the count by one.
        assert gc.get_freeze_count() > frozen * 0.9
        assert len(results) == len(items)
    finally:
        gc.unfreeze()
