"""A terminal progress bar for long management commands (quiet when not on a terminal)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(
        self, label: str, *, stream: TextIO | None = None, width: int = 30, uncounted: str = ""
    ):
        self.label = label
        self.uncounted = uncounted
        self.stream = stream or sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.enabled = self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        """``total`` 0: the work is not counted yet (``uncounted`` says what happens then)."""
        if not self.enabled or not (total or self.uncounted):
            return
        if not total:
            elapsed = time.monotonic() - self.started
            self.stream.write(f"\r{self.label}: {self.uncounted}, elapsed {elapsed:5.1f}s")
            self.stream.flush()
            return
        filled = int(self.width * done / total)
        elapsed = time.monotonic() - self.started
        eta = elapsed / done * (total - done) if done else 0.0
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {done}/{total} {100 * done // total:3d}% "
            f"elapsed {elapsed:5.1f}s eta {eta:5.1f}s"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
