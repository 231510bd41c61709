"""With the broker down, an approval is saved all the same; its results stay stale until
`recompute_metrics --stale` or the periodic sweep computes them."""

import logging
import time
from unittest import mock

import pytest
from celery.app.task import Task
from django.core.management import call_command
from kombu.exceptions import OperationalError as KombuOperationalError

from audit.models import Feedback
from evalsite.queue import broker_circuit
from metrics.engine.recompute import results_recompute_stale
from metrics.models import MetricResult
from tests.metrics.extraction_helpers import (
    approve,
    celery_broker,
    expected_run,
    run_row,
    statement_row,
    system_row,
)

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]
Status = MetricResult.Status


@pytest.fixture(autouse=True)
def closed_circuit():
    broker_circuit.reset()
    yield
    broker_circuit.reset()


def assert_saved_and_stale(f1_world, statement) -> None:
    assert Feedback.objects.get(statement=statement).status == Feedback.Status.APPROVED
    assert statement_row(statement, f1_world.run).status == Status.STALE
    assert run_row(f1_world.run).status == Status.STALE


def test_approval_survives_a_broker_that_refuses_messages(
    f1_world, admin_user, run_committed, caplog
):
    statement = f1_world.statements[0]
    down = KombuOperationalError("Error 111 connecting to redis. Connection refused.")
    with (
        mock.patch.object(Task, "apply_async", side_effect=down) as apply_async,
        caplog.at_level(logging.WARNING, logger="evalsite.queue"),
    ):
        approve(run_committed, f1_world, statement, admin_user)

    assert apply_async.called
    assert all(call.kwargs.get("retry") is False for call in apply_async.call_args_list)
    assert_saved_and_stale(f1_world, statement)
    assert "could not queue" in caplog.text and "left stale for the sweep" in caplog.text

    call_command("recompute_metrics", "--stale")

    assert statement_row(statement, f1_world.run).status == Status.FRESH
    assert run_row(f1_world.run).status == Status.FRESH
    assert system_row().status == Status.FRESH
    assert (
        run_row(f1_world.run).values["n_statements"] == expected_run(f1_world.run)["n_statements"]
    )


def test_approval_survives_a_closed_broker_port(f1_world, admin_user, run_committed, caplog):
    statement = f1_world.statements[0]
    # Default kombu options here (no max_retries): each publish would retry for ~2 s.
    with (
        celery_broker("redis://127.0.0.1:1/0", socket_connect_timeout=1),
        caplog.at_level(logging.INFO, logger="evalsite.queue"),
    ):
        started = time.monotonic()
        approve(run_committed, f1_world, statement, admin_user)
        elapsed = time.monotonic() - started
        # Later approvals do not even try while the circuit is open.
        started = time.monotonic()
        approve(run_committed, f1_world, f1_world.statements[1], admin_user)
        second = time.monotonic() - started

    assert_saved_and_stale(f1_world, statement)
    assert caplog.text.count("could not queue") == 1  # then the circuit opened
    assert "broker recently down" in caplog.text
    # One slow attempt (kombu's default retry, ~6 s here) instead of one per task.
    assert elapsed < 10.0 and second < 1.0, (elapsed, second)

    # The sweep (what the beat task runs) picks the results up once things are back.
    results_recompute_stale()
    assert statement_row(statement, f1_world.run).status == Status.FRESH
    assert run_row(f1_world.run).values["n_statements"] == 2
    assert system_row().status == Status.FRESH


def test_production_broker_options_fail_fast(f1_world, admin_user, run_committed):
    options = {"socket_connect_timeout": 2, "socket_timeout": 5, "max_retries": 0}
    with celery_broker("redis://127.0.0.1:1/0", **options):
        started = time.monotonic()
        approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    assert time.monotonic() - started < 1.5
    assert_saved_and_stale(f1_world, f1_world.statements[0])


def test_a_recompute_job_queued_while_the_broker_was_down_is_requeued(admin_user):
    from metrics.engine.recompute import metrics_recompute_all
    from metrics.models import ComputeJob

    down = KombuOperationalError("down")
    with mock.patch.object(Task, "apply_async", side_effect=down):
        job = metrics_recompute_all(user=admin_user, queue=False)
    results_recompute_stale()  # eager: the re-queued job runs now
    job.refresh_from_db()
    assert job.status == ComputeJob.Status.DONE
