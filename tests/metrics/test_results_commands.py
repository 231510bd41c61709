"""recompute_metrics."""

import io

import pytest
from django.core.management import CommandError, call_command

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
