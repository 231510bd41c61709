"""Giving a long-lived worker's memory back between whole-run tasks.

A slow worker computes one whole-run row after another in one process (``--pool=solo``, or one
prefork child). What a row's computation frees is not all given back to the system: glibc keeps
freed heap pages in its arenas (numpy's large arrays land there once glibc has raised its
mmap threshold after the first one is freed), and with DEBUG on Django keeps every query's SQL
(up to 9,000, each bulk insert of pieces a few hundred kB) until ``reset_queries``, which
runs at each web request but never in a worker. The next row's peak then starts from the last
one's leftovers: seven whole-run rows in one worker reached 522 MB where each alone stays
under 400 MB (docs/operations.md, "The slow worker with a partner run").

``memory_release`` empties the query log, collects cycles and asks glibc to return its free
pages (``malloc_trim``; a no-op where the C library has none). evalsite/celery.py runs it after
every task of the slow queue; the stale sweep, which computes own-data rows in process, runs it
after each row. Fast tasks (one statement each, many a second) are left alone: a full
collection costs more than they do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
from functools import cache

from django.conf import settings
from django.db import reset_queries

log = logging.getLogger(__name__)

# The queues whose tasks compute whole runs (settings.CELERY_TASK_ROUTES).
RELEASING_QUEUES = frozenset({"slow"})


def memory_release() -> None:
    """Drop what the last whole-run computation left behind: the DEBUG query log, unreachable
    cycles, and the allocator's free pages."""
    reset_queries()
    gc.collect()
    malloc_trim()


def malloc_trim() -> bool:
    """Ask glibc to return free heap pages to the system; False where there is no glibc."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


@cache
def _libc() -> ctypes.CDLL | None:
    # musl (Alpine), macOS and Windows have no malloc_trim: releasing then is gc only.
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        log.info("no malloc_trim in %s: worker memory is released by gc only", name)
        return None
    return libc


def releases_after(task_name: str) -> bool:
    """Whether a task's queue is one whose tasks compute whole runs (by its route)."""
    route = settings.CELERY_TASK_ROUTES.get(task_name) or {}
    return route.get("queue") in RELEASING_QUEUES
