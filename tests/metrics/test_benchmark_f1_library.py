"""The library part of benchmark_f1: a function returning figures."""

from __future__ import annotations

from metrics.management.commands.benchmark_f1 import run_benchmark


def test_run_benchmark_reports_timings_and_headline_figures():
    figures = run_benchmark(n_discussions=2, n_statements=5, seed=3)
    assert figures["statements"] == 10 and figures["discussions"] == 2
    assert figures["system_seconds"] > 0 and figures["cumulative_seconds"] > 0
    assert figures["total_seconds"] >= figures["system_seconds"]
    assert figures["statements_per_second"] > 0
    assert 0.0 < figures["system_aggregate_micro_f1"] <= 1.0
