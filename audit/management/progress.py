"""A terminal progress bar for long management commands (quiet when not on a terminal)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(self, label: str, *, stream: TextIO | None = None, width: int = 30):
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.enabled = self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or not total:
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
