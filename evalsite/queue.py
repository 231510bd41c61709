"""Queueing Celery tasks for both apps (audit's jobs, metrics' results): after commit, never
waiting on a dead broker.

- ``task_enqueue``: publish now; on a broker error, trip the circuit and return False (the work
  stays stale for the periodic sweep, ``metrics.tasks.recompute_stale``).
- ``task_enqueue_on_commit``: the same, once the current transaction commits, so a worker
  never reads the database before the change that queued it.
- ``TRANSIENT_ERRORS``: database errors a task retries (lock timeouts, deadlocks, a restarted
  server); any other error is a bug, recorded on its result row.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import current_app
from django.db import InterfaceError, OperationalError

from evalsite.post_commit import after_commit

log = logging.getLogger(__name__)

TRANSIENT_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError)
# Every task's options: transient errors retried with backoff, anything else left to the task.
RETRYING: dict[str, Any] = {
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": True,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 5,
}


def _broker_errors() -> tuple[type[Exception], ...]:
    # Imported here: the web process needs neither client library until it first publishes.
    from kombu.exceptions import OperationalError as KombuOperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return (KombuOperationalError, RedisConnectionError, RedisTimeoutError, OSError)


class _BrokerCircuit:
    """After a failed publish, skip publishing for a while.

    Each attempt on a dead broker can cost up to the connect timeout and one approval queues
    several tasks; a user's request must not wait on that. Skipped work stays stale.
    """

    def __init__(self, pause_seconds: float):
        self.pause_seconds = pause_seconds
        self.open_until = 0.0

    def is_open(self) -> bool:
        return time.monotonic() < self.open_until

    def trip(self) -> None:
        self.open_until = time.monotonic() + self.pause_seconds

    def reset(self) -> None:
        self.open_until = 0.0


broker_circuit = _BrokerCircuit(pause_seconds=15.0)


def task_enqueue(task: Any, **kwargs: Any) -> bool:
    """Queue a task without waiting on a dead broker. On failure the rows stay stale and the
    periodic sweep (or `recompute_metrics --stale`) computes them later."""
    eager = task.app.conf.task_always_eager
    if not eager and broker_circuit.is_open():
        log.info("broker recently down: not queueing %s%s; left stale", task.name, kwargs)
        return False
    try:
        task.apply_async(kwargs=kwargs, retry=False)
    except _broker_errors() as exc:
        broker_circuit.trip()
        log.warning("could not queue %s%s (%s); left stale for the sweep", task.name, kwargs, exc)
        return False
    return True


def named_task(name: str) -> Any:
    """The task registered under this name: for services whose task module imports them (a
    task runs its service), so they need not import the task module back."""
    return current_app.tasks[name]


def task_enqueue_named(name: str, **kwargs: Any) -> bool:
    """task_enqueue by the task's registered name (see ``named_task``)."""
    return task_enqueue(named_task(name), **kwargs)


def task_enqueue_on_commit(task: Any, **kwargs: Any) -> None:
    """Queue the task (or the task of that registered name) once the current transaction
    commits (at once outside one)."""
    if isinstance(task, str):
        after_commit(lambda: task_enqueue_named(task, **kwargs))
    else:
        after_commit(lambda: task_enqueue(task, **kwargs))
