"""The library part of benchmark_f1: a function returning figures."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from metrics.management.commands.benchmark_f1 import run_benchmark


def test_run_benchmark_reports_timings_and_headline_figures():
    figures = run_benchmark(n_discussions=2, n_statements=5, seed=3)
    assert figures["statements"] == 10 and figures["discussions"] == 2
    assert figures["system_seconds"] > 0 and figures["cumulative_seconds"] > 0
    assert figures["total_seconds"] >= figures["system_seconds"]
    assert figures["statements_per_second"] > 0
    assert 0.0 < figures["system_aggregate_micro_f1"] <= 1.0
    assert figures["statements_per_cpu_second"] > 0


def test_the_command_compares_strategies_over_repeated_runs():
    out = io.StringIO()
    call_command(
        "benchmark_f1",
        "--skip-db",
        "--strategy=both",
        "--repeat=2",
        "--discussions=2",
        "--statements=4",
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    for strategy in ("optimal", "greedy"):
        runs = [line for line in lines if line.startswith(f"library ({strategy}):")]
        assert len(runs) == 2 and all("statements/s" in line and "CPU" in line for line in runs)
        assert any(line.startswith(f"library ({strategy}, median of 2):") for line in lines)
    assert lines[-1].startswith("joint search (optimal against greedy, CPU time): statements ")


def test_the_command_refuses_no_runs():
    with pytest.raises(CommandError, match="--repeat"):
        call_command("benchmark_f1", "--skip-db", "--repeat=0", stdout=io.StringIO())
