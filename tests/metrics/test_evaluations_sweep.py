"""An evaluation uploaded while the broker is down stays queued until the sweep (or an
admin's retry) queues it again."""

from __future__ import annotations

from unittest import mock

import pytest
from celery.app.task import Task
from django.urls import reverse
from kombu.exceptions import OperationalError as KombuOperationalError

from evalsite.queue import broker_circuit
from metrics import tasks
from metrics.evaluations import services
from metrics.models import Evaluation
from tests.metrics.test_evaluations_fixtures import example_files

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = pytest.mark.django_db
Status = Evaluation.Status


@pytest.fixture(autouse=True)
def closed_circuit():
    broker_circuit.reset()
    yield
    broker_circuit.reset()


def upload_while_broker_down(run_on_commit) -> Evaluation:
    down = KombuOperationalError("Connection refused")
    with mock.patch.object(Task, "apply_async", side_effect=down), run_on_commit():
        evaluation = services.evaluation_create(
            family="agreement", name="x", files=example_files("agreement"), options={}
        )
    broker_circuit.reset()
    evaluation.refresh_from_db()
    assert evaluation.status == Status.QUEUED and evaluation.enqueued_at is None
    return evaluation


def test_the_sweep_queues_an_evaluation_the_broker_never_got(media, run_on_commit, settings):
    settings.STALE_SWEEP_GRACE_SECONDS = 0
    evaluation = upload_while_broker_down(run_on_commit)

    counts = tasks.recompute_stale.delay().get()  # eager: the evaluation is computed now

    evaluation.refresh_from_db()
    assert counts["evaluations"] == 1
    assert evaluation.status == Status.DONE and evaluation.enqueued_at


def test_the_sweep_leaves_a_fresh_upload_to_its_own_task(media, run_on_commit):
    evaluation = upload_while_broker_down(run_on_commit)  # within the grace period
    assert tasks.recompute_stale.delay().get()["evaluations"] == 0
    evaluation.refresh_from_db()
    assert evaluation.status == Status.QUEUED


def test_an_admin_can_queue_a_waiting_evaluation_again(
    media, run_on_commit, client, admin_user, auditor
):
    evaluation = upload_while_broker_down(run_on_commit)
    detail = reverse("metrics:evaluation_detail", args=[evaluation.pk])
    client.force_login(auditor)
    assert b"Queue again" not in client.get(detail).content
    client.force_login(admin_user)
    assert b"Queue again" in client.get(detail).content

    with run_on_commit():
        response = client.post(reverse("metrics:evaluation_retry", args=[evaluation.pk]))

    assert response.status_code in (200, 302)
    evaluation.refresh_from_db()
    assert evaluation.status == Status.DONE
