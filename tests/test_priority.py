"""Background work gives way to the default queue (evalsite/perf/priority.py): a recompute's batch
waits while a fast worker runs a task or the default queue holds one, at most its limit; a
queue nobody serves, a dead worker's mark and a lost Redis never hold it."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest

from evalsite import celery as evalsite_celery
from evalsite.perf import priority
from tests.conftest import require_service
from tests.metrics.test_worker import REDIS_URL, redis_available, worker_app  # noqa: F401


@pytest.fixture
def signal(settings, monkeypatch):
    """The real Redis, with a busy set and a default queue of this test's own."""
    available, why = redis_available()
    require_service("Redis", available, why)
    import redis

    name = f"test-priority-{uuid.uuid4().hex}"
    settings.REDIS_URL = REDIS_URL
    settings.CELERY_TASK_DEFAULT_QUEUE = name
    settings.BACKGROUND_YIELD_SECONDS = 2
    monkeypatch.setattr(priority, "BUSY_KEY", f"{name}:busy")
    monkeypatch.setattr(priority._Unserved, "until", 0.0)
    priority._client.cache_clear()
    client = redis.Redis.from_url(REDIS_URL)
    yield SimpleNamespace(client=client, queue=name)
    client.delete(name, f"{name}:busy")
    priority._client.cache_clear()


def _timed(**kwargs) -> float:
    started = time.monotonic()
    waited = priority.background_yield(**kwargs)
    assert waited <= time.monotonic() - started + 0.001
    return waited


def test_a_batch_waits_while_a_fast_worker_runs_a_task(signal):
    assert priority.fast_work_waiting() == (0, 0)
    assert _timed() < 0.05  # nothing to give way to

    priority.fast_work_started()
    assert priority.fast_work_waiting() == (0, 1)
    assert 0.3 <= _timed(max_seconds=0.3) < 0.5  # at most its limit

    priority.fast_work_ended()
    assert priority.fast_work_waiting() == (0, 0)
    assert _timed() < 0.05


def test_the_wait_ends_when_the_fast_task_ends(signal):
    import threading

    priority.fast_work_started()
    threading.Timer(0.2, priority.fast_work_ended).start()

    assert 0.2 <= _timed(max_seconds=2) < 0.5


def test_a_dead_workers_mark_expires_and_is_dropped(signal):
    signal.client.zadd(priority.BUSY_KEY, {"gone:1": time.time() - 1})
    assert priority.fast_work_waiting() == (0, 0)
    assert _timed() < 0.05

    priority.fast_work_started()  # the next mark drops the expired ones
    assert signal.client.zrange(priority.BUSY_KEY, 0, -1) == [priority._worker_id().encode()]


def test_queued_fast_tasks_hold_a_batch_while_a_worker_serves_the_queue(signal, monkeypatch):
    monkeypatch.setattr(priority, "UNSERVED_SECONDS", 10)
    signal.client.rpush(signal.queue, "a task")
    priority.fast_work_started()
    assert priority.fast_work_waiting() == (1, 1)

    assert 0.3 <= _timed(max_seconds=0.3) < 0.5


def test_queued_tasks_nobody_takes_stop_holding_background_work(signal, monkeypatch):
    monkeypatch.setattr(priority, "UNSERVED_SECONDS", 0.1)
    signal.client.rpush(signal.queue, "a task")

    assert 0.1 <= _timed() < 0.3  # no fast worker took it: not worth waiting for
    assert _timed() < 0.05  # and for a while it is ignored
    priority.fast_work_started()  # a worker's mark still counts
    assert _timed(max_seconds=0.2) >= 0.2


def test_without_redis_or_with_waiting_off_nothing_waits(signal, settings):
    priority.fast_work_started()
    assert _timed(max_seconds=0) == 0.0
    settings.BACKGROUND_YIELD_SECONDS = 0
    assert _timed() == 0.0

    settings.REDIS_URL = ""
    priority._client.cache_clear()
    assert priority.fast_work_waiting() == (0, 0)
    assert _timed(max_seconds=1) < 0.05


def test_a_lost_redis_counts_as_no_fast_work_and_never_fails_a_task(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    priority._client.cache_clear()
    try:
        priority.fast_work_started()  # does not raise
        priority.fast_work_ended()
        assert priority.fast_work_waiting() == (0, 0)
        assert _timed(max_seconds=1) < 0.6
    finally:
        priority._client.cache_clear()


def _task(routing_key: str, *, eager: bool = False) -> SimpleNamespace:
    return SimpleNamespace(
        app=evalsite_celery.app,
        request=SimpleNamespace(is_eager=eager, delivery_info={"routing_key": routing_key}),
    )


def test_only_tasks_taken_from_the_default_queue_mark_the_worker_busy():
    assert evalsite_celery._from_fast_queue(_task("celery"))
    assert not evalsite_celery._from_fast_queue(_task("slow"))
    assert not evalsite_celery._from_fast_queue(_task("sweep"))
    assert not evalsite_celery._from_fast_queue(_task("celery", eager=True))


@pytest.mark.services
def test_a_real_worker_is_marked_busy_while_it_runs_a_task(signal, worker_app):  # noqa: F811
    """A worker takes a task from its default queue: while the task runs, the slow side sees
    it busy; once it ended, not."""
    from celery.contrib.testing.worker import start_worker

    seen = f"{signal.queue}:seen"

    @worker_app.task(name="tests.priority.busy")
    def busy() -> None:
        signal.client.rpush(seen, priority.fast_work_waiting()[1])

    with start_worker(worker_app, perform_ping_check=False, pool="solo", loglevel="WARNING"):
        busy.delay()
        reported = signal.client.blpop([seen], timeout=30)
        deadline = time.monotonic() + 5
        while priority.fast_work_waiting()[1] and time.monotonic() < deadline:
            time.sleep(0.05)
        after = priority.fast_work_waiting()[1]

    signal.client.delete(seen)
    assert reported is not None and int(reported[1]) == 1
    assert after == 0
