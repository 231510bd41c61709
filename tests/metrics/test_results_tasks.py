"""Tasks: idempotent, retried on transient errors, failures recorded, concurrent writers safe."""

import threading
from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.db import OperationalError, connection, connections
from django.db.models import F
from django.utils import timezone

from evalsite.queue import TRANSIENT_ERRORS
from metrics import tasks
from metrics.engine.recompute import compute_job_run, sweep
from metrics.engine.services import results_mark_stale, statement_result_compute
from metrics.models import ComputeJob, MetricResult
from tests.metrics.extraction_helpers import (
    approve,
    expected_run,
    make_world,
    run_row,
    statement_row,
    system_row,
)

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = pytest.mark.usefixtures("only_extraction_results")

Status = MetricResult.Status


@pytest.mark.django_db
def test_running_a_task_twice_stores_the_same_result_once(f1_world, admin_user, run_committed):
    statement = f1_world.statements[0]
    approve(run_committed, f1_world, statement, admin_user)
    first, totals = statement_row(statement, f1_world.run), run_row(f1_world.run).contribution

    tasks.compute_statement.delay(statement_id=statement.pk, run_id=f1_world.run.pk)
    tasks.compute_statement.delay(statement_id=statement.pk, run_id=f1_world.run.pk)

    again = statement_row(statement, f1_world.run)
    assert again.pk == first.pk and again.values == first.values
    assert again.computed_at == first.computed_at  # same input hash: skipped
    assert run_row(f1_world.run).contribution == totals
    assert run_row(f1_world.run).values["n_statements"] == 1


@pytest.mark.django_db
def test_stale_result_with_unchanged_inputs_is_confirmed_without_recomputing(
    f1_world, admin_user, run_committed
):
    statement = f1_world.statements[0]
    approve(run_committed, f1_world, statement, admin_user)
    results_mark_stale(statement_ids=[statement.pk])  # as if a task were lost
    with mock.patch("metrics.engine.services.children.calculate_statement_f1") as engine:
        tasks.compute_statement.delay(statement_id=statement.pk, run_id=f1_world.run.pk)
    engine.assert_not_called()
    assert statement_row(statement, f1_world.run).status == Status.FRESH


@pytest.mark.django_db
def test_a_bug_is_recorded_as_a_failed_result_with_its_error(f1_world, admin_user, run_committed):
    statement = f1_world.statements[0]
    boom = ValueError("matching exploded")
    with mock.patch("metrics.engine.services.children.calculate_statement_f1", side_effect=boom):
        approve(run_committed, f1_world, statement, admin_user)

    row = statement_row(statement, f1_world.run)
    assert row.status == Status.FAILED
    assert "ValueError: matching exploded" in row.error
    assert run_row(f1_world.run).status == Status.FAILED
    assert system_row().status == Status.FAILED

    # Fixed code: the next computation clears the failure.
    tasks.compute_statement.delay(statement_id=statement.pk, run_id=f1_world.run.pk)
    assert statement_row(statement, f1_world.run).status == Status.FRESH
    tasks.compute_discussion.delay(discussion_id=statement.discussion_id, run_id=f1_world.run.pk)
    assert run_row(f1_world.run).status == Status.FRESH
    assert system_row().status == Status.FRESH


@pytest.mark.django_db
def test_transient_database_errors_are_retried(f1_world, admin_user, run_committed):
    statement = f1_world.statements[0]
    approve(run_committed, f1_world, statement, admin_user)
    results_mark_stale(statement_ids=[statement.pk])
    real = statement_result_compute
    calls = []

    def flaky(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise OperationalError("database is locked")
        return real(**kwargs)

    with mock.patch("metrics.engine.services.statement_result_compute", side_effect=flaky):
        tasks.compute_statement.apply(
            kwargs={"statement_id": statement.pk, "run_id": f1_world.run.pk}, throw=False
        )
    assert len(calls) == 2
    assert statement_row(statement, f1_world.run).status == Status.FRESH


def test_transient_errors_are_not_recorded_as_failures():
    assert tasks.compute_statement.autoretry_for == (OperationalError, *TRANSIENT_ERRORS[1:])
    assert tasks.compute_statement.max_retries and tasks.compute_statement.retry_backoff


@pytest.mark.django_db
def test_the_sweep_computes_results_whose_task_was_lost(f1_world, admin_user, run_committed):
    for statement in f1_world.statements[:2]:
        approve(run_committed, f1_world, statement, admin_user)
    # Lost tasks: rows marked stale a while ago, nothing queued.
    results_mark_stale(statement_ids=[s.pk for s in f1_world.statements[:3]])
    grace = timedelta(seconds=settings.STALE_SWEEP_GRACE_SECONDS)
    MetricResult.objects.update(stale_since=F("stale_since") - grace * 2)
    MetricResult.objects.filter(scope="statement").update(input_hash="")  # must recompute

    counts = tasks.recompute_stale.delay().get()

    assert counts["statement"] == 2 and counts["system"] == 1
    assert not MetricResult.objects.exclude(status=Status.FRESH).exists()
    assert (
        run_row(f1_world.run).values["n_statements"] == expected_run(f1_world.run)["n_statements"]
    )


@pytest.mark.django_db
def test_the_sweep_leaves_just_marked_results_to_their_own_task(
    f1_world, admin_user, run_committed
):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    results_mark_stale(statement_ids=[f1_world.statements[0].pk])
    counts = tasks.recompute_stale.delay().get()
    assert not any(counts.get(scope) for scope in ("statement", "discussion", "run", "system"))
    assert statement_row(f1_world.statements[0], f1_world.run).status == Status.STALE


def _in_threads(target, n: int = 2) -> list:
    barrier, errors = threading.Barrier(n), []

    def worker():
        try:
            barrier.wait()
            target()
        except Exception as exc:  # reported to the test thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return errors


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("force", [False, True])
def test_two_workers_computing_the_same_result_count_it_once(auditor, admin_user, force):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL (SQLite serializes every writer anyway)")
    f1_world = make_world(auditor, discussions=1, statements=2)
    statement = f1_world.statements[0]
    from audit.models import Feedback

    Feedback.objects.filter(pk=f1_world.fb(statement).pk).update(status=Feedback.Status.APPROVED)

    errors = _in_threads(
        lambda: statement_result_compute(
            statement_id=statement.pk, run_id=f1_world.run.pk, force=force
        )
    )

    assert errors == []
    assert MetricResult.objects.filter(scope="statement").count() == 1
    row = run_row(f1_world.run)
    assert row.contribution["statements"]["count"] == 1
    assert row.contribution["statements"] == statement_row(statement, f1_world.run).contribution


def _lost_tasks(world, statements) -> None:
    """Rows marked stale long enough ago for the sweep, their tasks never run."""
    results_mark_stale(statement_ids=[s.pk for s in statements])
    grace = timedelta(seconds=settings.STALE_SWEEP_GRACE_SECONDS)
    MetricResult.objects.update(stale_since=F("stale_since") - grace * 2)


@pytest.mark.django_db
def test_the_sweep_leaves_an_active_recompute_jobs_rows_to_it(
    f1_world, auditor, admin_user, run_committed
):
    """A recompute-all's rows are stale for minutes: the sweep, which may run on the fast
    worker, computes only the rows no active job covers, and not the system row."""
    other = make_world(auditor, discussions=1, statements=2)
    for world in (f1_world, other):
        for statement in world.statements:
            approve(run_committed, world, statement, admin_user)
    _lost_tasks(f1_world, [*f1_world.statements[:2], other.statements[0]])
    job = ComputeJob.objects.create(
        kind=ComputeJob.Kind.RECOMPUTE,
        status=ComputeJob.Status.RUNNING,
        params={"run_id": f1_world.run.pk, "stale_only": False},
        heartbeat_at=timezone.now(),
    )

    counts = tasks.recompute_stale.delay().get()

    assert counts["statement"] == 1 and not counts.get("system")
    assert statement_row(other.statements[0], other.run).status == Status.FRESH
    assert statement_row(f1_world.statements[0], f1_world.run).status == Status.STALE
    ComputeJob.objects.filter(pk=job.pk).update(params={"run_id": None, "stale_only": True})
    _lost_tasks(other, other.statements)
    assert not any(tasks.recompute_stale.delay().get().get(s) for s in ("statement", "system"))


@pytest.mark.django_db
def test_the_sweep_turns_many_stale_rows_into_one_job(
    f1_world, admin_user, run_committed, settings, monkeypatch
):
    """More than a chunk's worth: one stale-only job on the slow queue, not a worker's
    minutes in place."""
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    _lost_tasks(f1_world, f1_world.statements)
    settings.RECOMPUTE_CHUNK_ITEMS = 3
    computed = []
    monkeypatch.setattr(sweep, "_item_compute", lambda item, force: computed.append(item))

    counts = tasks.recompute_stale.delay().get()  # the job is queued on commit: not here

    assert counts["job"] == 1 and computed == []
    job = ComputeJob.objects.get(kind=ComputeJob.Kind.RECOMPUTE)
    assert job.params["stale_only"] is True and job.params["run_id"] is None


@pytest.mark.django_db
def test_the_sweep_sends_a_run_whose_totals_are_unknown_to_the_slow_queue(
    f1_world, admin_user, run_committed, monkeypatch
):
    """A fresh run row whose totals were set aside (migration 0011 leaves them so) is found at
    once, without the grace: its rebuild reads every contribution of the run, so it becomes a
    stale-only job rather than minutes of the sweep's worker; the job rebuilds the same totals."""
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    totals, values = run_row(f1_world.run).contribution, run_row(f1_world.run).values
    MetricResult.objects.filter(scope="run").update(contribution=None)
    computed: list = []
    real = sweep._item_compute
    monkeypatch.setattr(sweep, "_item_compute", lambda item, force: computed.append(item))

    counts = tasks.recompute_stale.delay().get()  # the job is queued on commit: not here

    assert counts["job"] == 1 and computed == []
    monkeypatch.setattr(sweep, "_item_compute", real)
    job = ComputeJob.objects.get(kind=ComputeJob.Kind.RECOMPUTE)
    assert job.params["stale_only"] is True
    compute_job_run(job_id=job.pk)
    row = run_row(f1_world.run)
    assert (row.contribution, row.values, row.status) == (totals, values, Status.FRESH)
