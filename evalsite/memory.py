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

The other half is the collector's time: once Django, the views and the templates are loaded,
every full collection walks all of their objects, a large share of a long page's render.
``heap_freeze`` moves what the process holds out of the collector's sight (``gc.freeze``)
after its 1st, 10th and 100th request or task (``served_one``): by then it has loaded what
it serves. Frozen objects are still freed when nothing refers to them; only cycles among them
are not (the collection just before each freeze leaves none).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import logging
from functools import cache
from typing import Any

from django.conf import settings
from django.core.signals import request_finished
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


# The requests (or tasks) of a process after which it freezes its heap: by the 100th it has
# loaded the templates and code of what it serves.
FREEZE_AFTER = frozenset({1, 10, 100})
_served = itertools.count(1)  # next() is atomic under the GIL: threads may share it


def heap_freeze() -> None:
    """Collect, then move every object left out of the collector's sight (``gc.freeze``):
    later collections walk only what was allocated since."""
    gc.collect()
    gc.freeze()


def served_one() -> bool:
    """Count a request or task this process finished; after the 1st, 10th and 100th its heap
    is frozen (when HEAP_FREEZE is on). Returns whether it froze now."""
    if not settings.HEAP_FREEZE or next(_served) not in FREEZE_AFTER:
        return False
    heap_freeze()
    return True


def _request_served(sender: Any, **kwargs: Any) -> None:
    served_one()


def heap_freeze_as_served() -> None:
    """Have this (web) process freeze its heap as it serves (see ``served_one``); the WSGI and
    ASGI entry points call this, and the page benchmark, which times pages as the server
    serves them."""
    request_finished.connect(_request_served, dispatch_uid="evalsite.memory.served")
