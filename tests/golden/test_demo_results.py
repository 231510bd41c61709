"""Golden test: every stored result of the demo data, compared with a committed snapshot.

Seeds the demo data (with its runs as experiments: replicates, a whole-discussion run, a
snapshot), computes every metric family (own-data families through their Celery
tasks, run synchronously; each uploaded family from its example files through
``import_evaluation --now``), then compares every stored row with ``demo_results.json``:
all fields but ids, timestamps and durations (and ``input_hash``, which hashes the inputs'
``updated_at`` clocks). Refactors must leave this snapshot unchanged.

Regenerate it (only when a change of results is intended, and say so in the commit):

    GOLDEN_UPDATE=1 DEBUG=1 .venv/bin/python -m pytest tests/golden -q

Sequences are reset so ids, which some inputs hash, are the same on every run.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.core.management import call_command

from audit.models import ExtractionRun, GroundTruthSnapshot
from audit.services.demo import demo_experiments_seed, demo_seed
from evalsite.celery import app
from metrics.models import Evaluation, MetricResult
from tests.metrics.test_evaluations_fixtures import EXAMPLE_UPLOADS, EXAMPLES

SNAPSHOT = Path(__file__).with_name("demo_results.json")
# Compared with 12 significant digits: a refactor may reorder a float sum, not change a figure.
DIGITS = 12
RESULT_FIELDS = (
    "key",
    "family",
    "scope",
    "run_id",
    "discussion_id",
    "statement_id",
    "match_settings",
    "code_version",
    "values",
    "contribution",
    "status",
    "error",
)
EVALUATION_FIELDS = ("family", "name", "options", "status", "error", "artifact")
# Clocks stored inside result JSON (e.g. when inputs were read) differ on every run.
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def _task(name: str, *args: Any) -> None:
    """Run a task by its registered name, in this process: names are the stable interface."""
    app.tasks[name].apply(args=args, throw=True)


def _own_data_compute(run_ids: list[int]) -> None:
    call_command("recompute_metrics", stdout=io.StringIO())
    for run_id in run_ids:
        _task("metrics.tasks.compute_run", run_id)
        _task("metrics.tasks.compute_error_analysis", run_id)
        _task("metrics.tasks.compute_own_data", "review_savings", run_id)
        _task("metrics.tasks.compute_own_data", "calibration", run_id)
    _task("metrics.tasks.compute_run_comparison", *run_ids[:2])  # the first two runs
    _task("metrics.tasks.compute_system")
    _task("metrics.tasks.compute_own_data", "interauditor")


def _experiments_compute(run_ids: list[int]) -> None:
    """The runs as experiments: every run's figures on the demo's snapshot, and the two
    configurations of three replicates compared, on live ground truth and on the snapshot."""
    snapshot = GroundTruthSnapshot.objects.get()
    for run_id in run_ids:
        _task("metrics.tasks.compute_snapshot_results", run_id, snapshot.pk)
    for frozen in (None, snapshot.pk):
        _task("metrics.tasks.compute_run_comparison", "c1", "c2", frozen)


def _uploaded_compute() -> None:
    for family, (roles, options) in sorted(EXAMPLE_UPLOADS.items()):
        files = [f"{role}={EXAMPLES / name}" for role, names in roles.items() for name in names]
        flags = [f"--option={key}={value}" for key, value in sorted(options.items())]
        call_command(
            "import_evaluation",
            "--family",
            family,
            "--name",
            f"golden {family}",
            "--now",
            *flags,
            *files,
            stdout=io.StringIO(),
        )


def _plain(value: Any) -> Any:
    """Stored JSON without clocks, floats rounded to DIGITS significant digits."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, str) and TIMESTAMP.match(value):
        return "<timestamp>"
    return value


def stored_results() -> dict[str, Any]:
    results = MetricResult.objects.order_by("key").values(*RESULT_FIELDS)
    evaluations = Evaluation.objects.order_by("family", "name").values(*EVALUATION_FIELDS)
    return {
        "metric_results": {row["key"]: _plain(row) for row in results},
        "evaluations": [_plain(row) for row in evaluations],
    }


def _snapshot_compare(actual: dict[str, Any]) -> None:
    expected = json.loads(SNAPSHOT.read_text())
    assert sorted(actual["metric_results"]) == sorted(expected["metric_results"])
    for key, row in expected["metric_results"].items():
        assert actual["metric_results"][key] == row, f"stored result {key} changed"
    assert len(actual["evaluations"]) == len(expected["evaluations"])
    for got, want in zip(actual["evaluations"], expected["evaluations"], strict=True):
        assert got == want, f"evaluation {want['family']} changed"


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_demo_data_results_match_the_snapshot(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    demo_seed()
    # The replicates' F1 results are computed below by recompute_metrics, in batches: computed
    # one task each as the seed announces them (tasks run in this process), twice the work.
    with mock.patch("metrics.engine.services.stale._queue_recompute"):
        demo_experiments_seed()
    run_ids = sorted(ExtractionRun.objects.values_list("pk", flat=True))
    _own_data_compute(run_ids)
    _experiments_compute(run_ids)
    _uploaded_compute()
    actual = stored_results()
    assert len(actual["metric_results"]) > 100 and len(actual["evaluations"]) == 4
    assert not [k for k, r in actual["metric_results"].items() if r["status"] != "fresh"]
    if os.environ.get("GOLDEN_UPDATE") == "1":
        SNAPSHOT.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
    _snapshot_compare(actual)
