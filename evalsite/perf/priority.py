"""Background work gives way to the work an approval waits for.

On shared cores a recompute-all (the slow queue) and the results an approval refreshes (the
default queue) compete for the CPU and for PostgreSQL. ``WORKER_NICE`` lowers the slow
worker's CPU priority, but not that of its database backend, which runs the heavier half of a
batch. So the fast side says when it has work, and a recompute's batches wait while it has:

- a fast worker marks itself busy for the length of each task it takes from the default queue
  (``fast_work_started`` / ``fast_work_ended``, connected in evalsite/celery.py); a mark
  expires after FAST_MARK_SECONDS, so a worker killed mid-task does not hold the slow side;
- ``fast_work_waiting``: tasks queued on the default queue, and fast workers busy;
- ``background_yield``: before each batch, a recompute waits while fast work is waiting, at
  most BACKGROUND_YIELD_SECONDS per batch, so a steady stream of approvals slows a
  recompute-all down but never stops it. Tasks queued that no worker takes (no fast worker
  is running) stop holding it after UNSERVED_SECONDS.

The signal lives beside the broker, in Redis. Without Redis (the embedded default runs one
process per queue on SQLite) nothing waits, and a Redis error counts as "no fast work":
background work never stops on the signal's account.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from functools import lru_cache
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

BUSY_KEY = "evalsite:fast-busy"  # a sorted set: worker -> when its mark expires (epoch s)
FAST_MARK_SECONDS = 30.0  # longer than any fast task should take
POLL_SECONDS = 0.01
# Queued fast tasks that nobody takes for this long mean no fast worker runs: the queue is then
# ignored for a minute (a fast worker's busy mark still counts).
UNSERVED_SECONDS = 0.5
IGNORE_UNSERVED_SECONDS = 60.0


@lru_cache(maxsize=1)
def _client() -> Any:
    """This process's Redis client for the signal (None without Redis): short timeouts, since
    a batch asks before it starts."""
    if not settings.REDIS_URL:
        return None
    import redis  # the embedded default never needs it

    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def fast_work_started() -> None:
    """This fast worker took a task: background work waits until it ends (or the mark
    expires). Marks of workers that died mid-task are dropped on the way."""

    def mark(client: Any) -> None:
        now = time.time()
        pipe = client.pipeline(transaction=False)
        pipe.zremrangebyscore(BUSY_KEY, "-inf", now)
        pipe.zadd(BUSY_KEY, {_worker_id(): now + FAST_MARK_SECONDS})
        pipe.execute()

    _signal(mark)


def fast_work_ended() -> None:
    _signal(lambda client: client.zrem(BUSY_KEY, _worker_id()))


def fast_work_waiting() -> tuple[int, int]:
    """(tasks queued on the default queue, fast workers running one), in one round trip;
    (0, 0) without Redis, or when it cannot be asked."""
    client = _client()
    if client is None:
        return 0, 0
    try:
        pipe = client.pipeline(transaction=False)
        pipe.llen(settings.CELERY_TASK_DEFAULT_QUEUE)
        pipe.zcount(BUSY_KEY, time.time(), "+inf")
        queued, busy = pipe.execute()
    except Exception as exc:  # the signal is advice: never fail or hold background work on it
        log.debug("could not read the fast queue's signal: %s", exc)
        return 0, 0
    return int(queued), int(busy)


class _Unserved:
    """Tasks queued that no fast worker takes (none is running: it takes one within
    milliseconds otherwise): the queue's length is ignored for a while, so that background
    work does not wait for workers that are not there."""

    until = 0.0


def background_yield(*, max_seconds: float | None = None) -> float:
    """Wait while fast work is waiting, at most ``max_seconds`` (BACKGROUND_YIELD_SECONDS by
    default; 0 turns waiting off). Returns the seconds waited."""
    limit = settings.BACKGROUND_YIELD_SECONDS if max_seconds is None else max_seconds
    if limit <= 0:
        return 0.0
    started = time.monotonic()
    unserved_since: float | None = None
    while (now := time.monotonic()) - started < limit:
        queued, busy = fast_work_waiting()
        if queued and not busy and now >= _Unserved.until:
            unserved_since = unserved_since or now
            if now - unserved_since >= UNSERVED_SECONDS:
                _Unserved.until = now + IGNORE_UNSERVED_SECONDS
                log.warning("the default queue holds tasks no worker takes; not waiting for it")
                break
        elif not busy:
            break
        time.sleep(POLL_SECONDS)
    return time.monotonic() - started


def _signal(write: Any) -> None:
    client = _client()
    if client is None:
        return
    try:
        write(client)
    except Exception as exc:  # a fast task never fails because Redis could not be told
        log.debug("could not write the fast queue's signal: %s", exc)
