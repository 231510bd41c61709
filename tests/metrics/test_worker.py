"""A real Celery worker on Redis computes a queued statement result."""

import os
import time
import uuid

import pytest

from audit.models import Feedback
from metrics.models import MetricResult
from tests.conftest import require_service
from tests.metrics.extraction_helpers import make_world, statement_row

pytest_plugins = ["tests.metrics.extraction_helpers"]

REDIS_URL = os.environ.get("REDIS_URL", "")
WAIT_SECONDS = 30


def redis_available() -> tuple[bool, str]:
    if not REDIS_URL:
        return False, "REDIS_URL is not set"
    try:
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except Exception as exc:
        return False, f"{REDIS_URL}: {exc}"
    return True, ""


@pytest.fixture
def worker_app():
    """A separate app on the real broker, eager off, with a queue of its own: the shared app
    stays untouched and no other worker on the same Redis can take the test's message."""
    from celery import Celery

    app = Celery("evalsite-worker-test", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(
        broker_url=REDIS_URL,
        task_always_eager=False,
        task_default_queue=f"test-{uuid.uuid4().hex}",
    )
    yield app
    app.close()
    _forget_queue(app.conf.task_default_queue)
    # start_worker made the test app the current and default one; tasks queued by name
    # (evalsite.queue.named_task reads current_app) would go on reaching its broker, eager off.
    from evalsite.celery import app as evalsite_app

    evalsite_app.set_current()
    evalsite_app.set_default()


def _forget_queue(name: str) -> None:
    """Drop the throwaway queue's keys (kombu's Redis transport keeps its bindings)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(f"_kombu.binding*.{name}"):
        client.delete(key)
    client.delete(name)


@pytest.mark.services
@pytest.mark.usefixtures("only_extraction_results")
def test_worker_computes_a_queued_statement_result(transactional_db, auditor, request):
    available, why = redis_available()
    require_service("Redis", available, why)
    from celery.contrib.testing.worker import start_worker

    app = request.getfixturevalue("worker_app")
    world = make_world(auditor, discussions=1, statements=1)
    statement = world.statements[0]
    Feedback.objects.filter(statement=statement).update(status=Feedback.Status.APPROVED)

    with start_worker(app, perform_ping_check=False, pool="solo", loglevel="WARNING"):
        app.tasks["metrics.tasks.compute_statement"].delay(
            statement_id=statement.pk, run_id=world.run.pk
        )
        row = _wait_for_fresh(statement, world.run)

    assert row is not None, f"no fresh result within {WAIT_SECONDS} s"
    assert row.values["aggregate_micro_f1"] == 1.0


def _wait_for_fresh(statement, run) -> MetricResult | None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        row = statement_row(statement, run)
        if row is not None and row.status == MetricResult.Status.FRESH:
            return row
        time.sleep(0.2)
    return None
