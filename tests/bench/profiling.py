"""pyinstrument's report of what a benchmark times, for the commands' ``--profile FILE``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def profiled(path: str | None) -> Iterator[None]:
    """Profile the block into ``path`` (HTML for a name ending in .html, else text); with no
    path, run it as it is."""
    if not path:
        yield
        return
    from pyinstrument import Profiler  # a development tool: only when asked for

    profiler = Profiler(interval=0.002)
    profiler.start()
    try:
        yield
    finally:
        profiler.stop()
        report = profiler.output_html() if path.endswith(".html") else profiler.output_text()
        Path(path).write_text(report, encoding="utf-8")
