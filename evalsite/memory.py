"""Giving a long-lived worker's memory back between whole-run tasks.

A slow worker computes one whole-run row after another in one process (``--pool=solo``, or one
prefork child), and what a row's computation frees is not all given back to the system, so
the next row's peak starts from the last one's leftovers (docs/operations.md, "Memory"). What
stays:

- the extraction matcher's caches (date parses, normalised strings and names; up to 65,536
  entries each, filling up further with each run);
- with DEBUG on, Django's query log (up to 9,000 queries' SQL, bulk inserts of pieces among
  them), which a web request's start empties but a worker never does;
- freed heap that glibc keeps in its arenas instead of returning it.

``memory_release`` drops all three: the next whole-run task fills the caches again within its
first statements, as a fresh process does. evalsite/celery.py runs it after every task of the
slow queue; the stale sweep, which computes own-data rows in process, after each row. Fast
tasks (one statement each, many a second) keep their warm caches: a full collection would cost
more than they do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
from functools import cache

from django.conf import settings
from django.db import reset_queries

from metrics.families.extraction import clear_caches

log = logging.getLogger(__name__)

# The queues whose tasks compute whole runs (settings.CELERY_TASK_ROUTES).
RELEASING_QUEUES = frozenset({"slow"})


def memory_release() -> None:
    """Drop what the last whole-run computation left behind: the DEBUG query log, the
    matcher's caches, unreachable cycles, and the allocator's free pages."""
    reset_queries()
    clear_caches()
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
