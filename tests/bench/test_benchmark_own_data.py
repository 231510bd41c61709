"""benchmark_own_data: one measurement (what the command runs in a fresh process per family)
computes the row and reports its CPU seconds, wall seconds and peak memory."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from audit.models import ExtractionRun
from metrics.models import MetricResult, StatementPiece
from metrics.registry import CALIBRATION, INTERAUDITOR, REVIEW_SAVINGS, TRIAGE
from metrics.results import run_key
from tests.bench.management.commands.benchmark_own_data import Command, _targets, _wait_fresh
from tests.metrics.test_own_data_pieces import World


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 50


def _measure(*args: str) -> dict[str, float]:
    out = io.StringIO()
    call_command("benchmark_own_data", "--measure", *args, stdout=out)
    return json.loads(out.getvalue().splitlines()[-1])


@pytest.mark.django_db
def test_a_measurement_computes_the_row_and_reports_its_cost() -> None:
    world = World(seed=7)
    run_id = world.runs[0].pk
    figures = _measure(CALIBRATION, "--run-id", str(run_id), "--force")
    assert set(figures) == {"cpu", "wall", "peak_mb"}
    assert figures["cpu"] > 0 and figures["wall"] > 0 and figures["peak_mb"] > 10
    assert MetricResult.objects.get(key=run_key(CALIBRATION, run_id)).is_fresh
    assert StatementPiece.objects.filter(family=CALIBRATION, run_id=run_id).exists()
    assert _measure(INTERAUDITOR, "--run-id", str(run_id))["peak_mb"] > 10
    assert _measure(TRIAGE, "--run-id", str(run_id))["cpu"] > 0
    assert MetricResult.objects.get(key=run_key(TRIAGE, run_id)).is_fresh
    for family in (TRIAGE, REVIEW_SAVINGS):  # triage's F1s are the review-savings pieces
        assert StatementPiece.objects.filter(family=family, run_id=run_id).exists()


@pytest.mark.django_db
def test_a_failed_row_is_reported(monkeypatch) -> None:
    world = World(seed=8)

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("metrics.own_data.calibration.calibration_pieces", broken)
    with pytest.raises(CommandError, match="calibration: the row is failed"):
        _measure(CALIBRATION, "--run-id", str(world.runs[0].pk))


@pytest.mark.django_db
def test_a_kept_run_is_measured_without_seeding_again(monkeypatch) -> None:
    world = World(seed=9)
    runs = ExtractionRun.objects.count()
    measured = []
    monkeypatch.setattr(
        Command,
        "_worker_peak",
        lambda self, run_id, families, other_runs: measured.append((run_id, families, other_runs)),
    )
    run_id = world.runs[0].pk
    call_command(
        "benchmark_own_data", "--worker-only", "--kept-run", str(run_id), "--families", TRIAGE
    )
    call_command("benchmark_own_data", "--worker-only", "--kept-run", str(run_id), "--other-runs")
    assert measured == [
        (run_id, [TRIAGE], False),
        (run_id, (REVIEW_SAVINGS, CALIBRATION, INTERAUDITOR, TRIAGE), True),
    ]
    assert ExtractionRun.objects.count() == runs
    with pytest.raises(CommandError, match="add --worker-only"):
        call_command("benchmark_own_data", "--kept-run", str(run_id))


@pytest.mark.django_db
def test_other_runs_rows_come_first_and_the_system_row_once() -> None:
    world = World(seed=10)
    partner, run = world.runs[0].pk, world.runs[1].pk
    families = [REVIEW_SAVINGS, CALIBRATION, INTERAUDITOR, TRIAGE]
    assert _targets(run, families, other_runs=False) == [
        (REVIEW_SAVINGS, run),
        (CALIBRATION, run),
        (INTERAUDITOR, None),
        (TRIAGE, run),
    ]
    assert _targets(run, families, other_runs=True) == [
        (REVIEW_SAVINGS, partner),
        (CALIBRATION, partner),
        (TRIAGE, partner),
        *_targets(run, families, other_runs=False),
    ]


@pytest.mark.django_db
def test_rows_are_reported_as_they_become_fresh(monkeypatch) -> None:
    world = World(seed=11)
    keys = [run_key(CALIBRATION, run.pk) for run in world.runs]
    rows = [MetricResult.objects.create(key=k, family=CALIBRATION, scope="run") for k in keys]
    naps = iter(rows[::-1])  # the second row becomes fresh first, then the first

    def sleep(seconds: float) -> None:
        row = next(naps)
        row.status = MetricResult.Status.FRESH
        row.save()

    monkeypatch.setattr("time.sleep", sleep)
    assert [key for key, _ in _wait_fresh(keys, Path("log"))] == [keys[1], keys[0]]
