"""recompute_metrics and benchmark_f1."""

import io

import pytest
from django.core.management import CommandError, call_command

from audit.models import Discussion, ExtractionRun
from metrics.models import ComputeJob, MetricResult
from tests.metrics.extraction_helpers import approve, expected_run, run_row

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]


def test_recompute_metrics_recomputes_everything(f1_world, admin_user, run_committed):
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    MetricResult.objects.filter(scope="run").update(contribution=None, values=None)
    out = io.StringIO()
    call_command("recompute_metrics", stdout=out)
    assert "done: 10/10 extraction results recomputed" in out.getvalue()
    assert "0 failed" in out.getvalue()
    assert (
        run_row(f1_world.run).values["n_statements"] == expected_run(f1_world.run)["n_statements"]
    )
    assert ComputeJob.objects.get().status == ComputeJob.Status.DONE


def test_recompute_metrics_for_one_run_and_only_stale(f1_world, admin_user, run_committed):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    out = io.StringIO()
    call_command("recompute_metrics", "--run", str(f1_world.run.pk), "--stale", stdout=out)
    assert "done: 0/0" in out.getvalue()  # nothing stale
    with pytest.raises(CommandError, match="No extraction run 999"):
        call_command("recompute_metrics", "--run", "999")
    with pytest.raises(CommandError):
        call_command("recompute_metrics", "--family", "nonsense")


@pytest.mark.django_db(transaction=True)  # approvals must really commit to run their hooks
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
