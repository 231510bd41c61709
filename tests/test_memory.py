"""A worker gives back what a whole-run task freed (evalsite/memory.py): after each task of the
slow queue the query log is emptied, cycles collected and glibc's free pages returned; after
a fast task only the query log is emptied."""

from __future__ import annotations

import ctypes
import gc
import sys

import pytest
from celery.signals import task_postrun
from django.db import connection

from evalsite import memory
from evalsite.celery import app
from tests.conftest import require_service
from tests.metrics.test_worker import redis_available, worker_app  # noqa: F401 (fixture)

SLOW_TASK = "metrics.tasks.compute_own_data"
FAST_TASK = "metrics.tasks.compute_statement"
SWEEP_TASK = "metrics.tasks.recompute_stale"


@pytest.fixture
def releases(monkeypatch) -> list[str]:
    """What the task_postrun handler did, in order: 'release' or 'reset'."""
    calls: list[str] = []
    monkeypatch.setattr(memory, "memory_release", lambda: calls.append("release"))
    monkeypatch.setattr("django.db.reset_queries", lambda: calls.append("reset"))
    return calls


def _postrun(task_name: str) -> None:
    """task_postrun as a worker sends it after running the task (not eager)."""
    task = app.tasks[task_name]
    task_postrun.send(sender=task, task_id="t", task=task, args=(), kwargs={}, state="SUCCESS")


def test_only_the_slow_queue_releases() -> None:
    assert memory.releases_after(SLOW_TASK)
    assert memory.releases_after("metrics.tasks.compute_job_chunk")
    assert not memory.releases_after(FAST_TASK)
    assert not memory.releases_after(SWEEP_TASK)  # it releases row by row itself
    assert not memory.releases_after("no.such.task")


def test_a_slow_task_releases_memory_a_fast_one_only_the_query_log(releases) -> None:
    _postrun(SLOW_TASK)
    assert releases == ["release"]
    _postrun(FAST_TASK)
    _postrun(SWEEP_TASK)
    assert releases == ["release", "reset", "reset"]


def test_an_eager_task_releases_nothing(releases) -> None:
    # Eager: the task ran inside a web request or a test, whose memory is not a worker's.
    app.tasks[SLOW_TASK].push_request(is_eager=True)
    try:
        _postrun(SLOW_TASK)
    finally:
        app.tasks[SLOW_TASK].pop_request()
    assert releases == []


@pytest.mark.django_db
def test_release_empties_the_debug_query_log(settings) -> None:
    settings.DEBUG = True
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.queries
    memory.memory_release()
    assert connection.queries == []


def test_release_forgets_the_matchers_caches() -> None:
    # Bounded, but each run fills them further: kept between runs, they grow the base.
    from metrics.families.extraction import dates, text

    assert text.normalize_text("  Some   Name ") == "some name"
    dates.event_date({"dateTime": "2003-03-12", "dateCertainty": "certain"})
    assert text._normalize_string.cache_info().currsize > 0
    assert dates._event_date.cache_info().currsize > 0
    memory.memory_release()
    assert text._normalize_string.cache_info().currsize == 0
    assert dates._event_date.cache_info().currsize == 0


def test_release_collects_unreachable_cycles() -> None:
    gc.disable()
    try:

        class Node:
            pass

        for _ in range(100):
            node = Node()
            node.me = node  # type: ignore[attr-defined]
        del node
        # type(), not isinstance(): the heap may hold weak proxies whose referent is gone, and
        # isinstance() on one raises ReferenceError.
        before = sum(1 for o in gc.get_objects() if type(o) is Node)
        memory.memory_release()
        after = sum(1 for o in gc.get_objects() if type(o) is Node)
    finally:
        gc.enable()
    assert before == 100 and after == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_malloc_trim_runs_where_glibc_is() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("not glibc")
    assert memory.malloc_trim() is True


def test_without_malloc_trim_release_still_works(monkeypatch) -> None:
    def no_libc(*args, **kwargs):
        raise OSError("no such library")

    memory._libc.cache_clear()
    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    try:
        assert memory.malloc_trim() is False
        memory.memory_release()  # gc and the query log only
    finally:
        memory._libc.cache_clear()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_releases_after_a_slow_task(request, monkeypatch) -> None:
    available, why = redis_available()
    require_service("Redis", available, why)
    from celery.contrib.testing.worker import start_worker

    released: list[str] = []
    monkeypatch.setattr(memory, "memory_release", lambda: released.append("release"))
    worker_app = request.getfixturevalue("worker_app")  # noqa: F811
    with start_worker(worker_app, perform_ping_check=False, pool="solo", loglevel="WARNING"):
        # The inter-auditor row of an empty database: a whole-run task that ends at once.
        # Its own queue: the routes would send it to "slow", which other workers may serve.
        queue = worker_app.conf.task_default_queue
        result = worker_app.tasks[SLOW_TASK].apply_async(
            kwargs={"family": "interauditor"}, queue=queue
        )
        _wait_for(lambda: released, result)
    assert released == ["release"]


def _wait_for(condition, result, seconds: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert condition(), f"the worker did not run {result.id} within {seconds:.0f} s"
