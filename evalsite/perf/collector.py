"""Python's cyclic garbage collector paused while many results are scored at once.

Scoring thousands of statements allocates hundreds of thousands of small lists and dicts
(every result holds its matches, ids and SARF pairs), and CPython runs a full collection
each time enough allocations pile up: one that walks the process's whole heap and finds
nothing to free, since nothing the extraction library builds forms a reference cycle (its
results are plain trees). So a recompute's batches and a run's statement F1 on request pause
the collector while they score, as Mercurial's ``nogc`` does for the same reason, and
restore its previous state. Reference counting frees everything as usual meanwhile.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_pause_lock = threading.Lock()
_pausing = 0  # blocks inside collector_paused now, in every thread
_resume = False  # whether the collector was enabled when the first of them entered


@contextmanager
def collector_paused() -> Iterator[None]:
    """Suspend the cyclic garbage collector for the block; leave it disabled if it already
    was. Threads may pause it at once (a web process's request threads): it resumes when the
    last of them leaves."""
    global _pausing, _resume
    with _pause_lock:
        if _pausing == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pausing -= 1
            if _pausing == 0 and _resume:
                _age_young_objects()
                gc.enable()


def _age_young_objects() -> None:
    """Move every tracked object to the oldest generation without scanning it.

    Everything the block built sits in the youngest generation, far past its threshold, so
    the first allocation after gc.enable() would scan all of it and find nothing to free
    (see above); objects that survive are promoted towards the oldest generation anyway.
    freeze() then unfreeze() moves them there directly; full collections still visit them.
    Skipped when the process froze objects itself, since unfreeze() would release those too.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
