"""evalsite.queue: publishing fails fast on a dead broker, waits for the commit, and every task
a route or the beat schedule names exists under that name."""

from unittest import mock

import pytest
from celery.app.task import Task
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError as KombuOperationalError

from audit import tasks as audit_tasks
from evalsite.celery import app
from evalsite.queue import broker_circuit, task_enqueue, task_enqueue_on_commit
from metrics import tasks


@pytest.fixture(autouse=True)
def closed_circuit():
    broker_circuit.reset()
    yield
    broker_circuit.reset()


@pytest.fixture
def not_eager():
    # Celery's settings object cannot be monkeypatched (no attribute to delete on undo).
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = eager


@pytest.mark.usefixtures("not_eager")
def test_a_failed_publish_opens_the_circuit_and_later_tasks_are_not_tried():
    down = KombuOperationalError("Connection refused.")
    with mock.patch.object(Task, "apply_async", side_effect=down) as apply_async:
        assert task_enqueue(tasks.compute_system) is False
        assert task_enqueue(tasks.compute_run, run_id=1) is False
    assert apply_async.call_count == 1
    assert broker_circuit.is_open()


@pytest.mark.django_db
def test_publishing_waits_for_the_commit(django_capture_on_commit_callbacks):
    with (
        mock.patch.object(Task, "apply_async") as apply_async,
        django_capture_on_commit_callbacks(execute=True),
    ):
        with transaction.atomic():
            task_enqueue_on_commit(tasks.compute_run, run_id=7)
        assert not apply_async.called  # the test's own transaction has not committed
    apply_async.assert_called_once_with(kwargs={"run_id": 7}, retry=False)


def test_every_routed_or_scheduled_task_name_is_a_registered_task():
    names = set(settings.CELERY_TASK_ROUTES)
    names |= {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert names <= set(app.tasks), sorted(names - set(app.tasks))


@pytest.mark.parametrize("module", [tasks, audit_tasks])
def test_a_task_is_named_after_its_module(module):
    found = {name: getattr(module, name) for name in dir(module)}
    found = {name: task for name, task in found.items() if isinstance(task, Task)}
    assert found
    assert {task.name for task in found.values()} == {f"{module.__name__}.{n}" for n in found}


def test_a_message_queued_under_a_job_task_first_name_still_runs(monkeypatch):
    ran = []
    monkeypatch.setattr(
        audit_tasks, "ground_truth_export_job_run", lambda job_id: ran.append(job_id)
    )
    monkeypatch.setattr(
        audit_tasks, "ground_truth_import_job_run", lambda job_id: ran.append(-job_id)
    )
    app.tasks["metrics.tasks.export_ground_truth_job"](7)
    app.tasks["metrics.tasks.import_ground_truth_job"](8)
    assert ran == [7, -8]
    assert settings.CELERY_TASK_ROUTES["metrics.tasks.export_ground_truth_job"]["queue"] == "slow"
