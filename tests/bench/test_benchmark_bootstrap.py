"""The bootstrap benchmark: the figures function and the command that prints them."""

import json
from io import StringIO

from django.core.management import call_command

from tests.bench.management.commands.benchmark_bootstrap import (
    TARGET_MS,
    run_benchmark,
    synthetic_items,
)


def test_benchmark_bootstrap_prints_figures_and_identical_numbers():
    out = StringIO()
    call_command(
        "benchmark_bootstrap",
        "--participants",
        "6",
        "--resamples",
        "200",
        "--repeats",
        "1",
        stdout=out,
    )
    text = out.getvalue()
    assert "6 participants x 8 items, 200 resamples" in text
    assert "identical replicates: True" in text
    assert "identical results: True" in text


def test_benchmark_reports_identical_numbers_and_timings() -> None:
    figures = run_benchmark(n_participants=10, n_resamples=300, repeats=1)
    assert figures["identical_replicates"] is True
    assert figures["identical_results"] is True
    assert figures["max_abs_difference"] == 0.0
    assert figures["vectorised"] == figures["loop"]
    assert figures["n_items"] == 80
    assert figures["vectorised_ms"] > 0 and figures["loop_ms"] > 0
    assert figures["speedup"] == figures["loop_ms"] / figures["vectorised_ms"]
    assert figures["target_ms"] == TARGET_MS
    json.dumps(figures, allow_nan=False)


def test_benchmark_with_the_issue_sizes_gives_identical_replicates_both_ways() -> None:
    # 41 participants x 8 items, continuous confidences; few resamples: how much faster the
    # vectorised path is, the command prints (a test does not time it).
    figures = run_benchmark(n_resamples=200, repeats=1)
    assert figures["n_items"] == 41 * 8
    assert figures["identical_replicates"] is True
    assert figures["speedup"] > 0


def test_synthetic_items_are_reproducible_and_continuous() -> None:
    first = synthetic_items(n_participants=5, items_per_participant=8, abstention_rate=0.3, seed=1)
    again = synthetic_items(n_participants=5, items_per_participant=8, abstention_rate=0.3, seed=1)
    assert first == again
    assert len({item.confidence for item in first}) == len(first)
    assert any(item.pred is None for item in first)
