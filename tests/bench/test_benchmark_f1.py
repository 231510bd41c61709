"""benchmark_f1: its library part (a function returning figures) and the command, which
prints them and leaves nothing of what it seeded."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from audit.models import Discussion, ExtractionRun
from metrics.models import MetricResult
from tests.bench.management.commands.benchmark_f1 import run_benchmark

pytest_plugins = ["tests.metrics.extraction_helpers"]


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


@pytest.mark.django_db(transaction=True)  # approvals must really commit to run their hooks
@pytest.mark.usefixtures("only_extraction_results")
def test_benchmark_prints_figures_and_cleans_up():
    out = io.StringIO()
    call_command(
        "benchmark_f1", discussions=2, statements=4, approvals=2, stdout=out, stderr=io.StringIO()
    )
    text = out.getvalue()
    assert "statements/s" in text and "library (optimal):" in text
    assert "full recompute of" in text and "approve → fresh" in text
    # The timing itself is not a test; that the goal is printed is.
    assert "extraction pipeline" in text and "goal: median < 0.5 s, p95 < 1.0 s" in text
    assert not Discussion.objects.exists() and not ExtractionRun.objects.exists()
    left = MetricResult.objects.filter(family="extraction")
    assert [r.scope for r in left] == ["system"]  # only the (empty) trend is left


@pytest.mark.django_db
@pytest.mark.usefixtures("only_extraction_results")
def test_benchmark_during_a_recompute_needs_real_workers():
    with pytest.raises(CommandError, match="--during-recompute needs --worker"):
        call_command(
            "benchmark_f1",
            "--skip-library",
            "--during-recompute",
            discussions=1,
            statements=2,
            approvals=1,
            stdout=io.StringIO(),
        )
    assert not Discussion.objects.exists()  # what it seeded is gone
