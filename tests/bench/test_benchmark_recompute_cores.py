"""The recompute benchmark's reading of the host's cores (no database): what bounds the gain
of a second worker on a small machine is printed, not guessed."""

from __future__ import annotations

import os
import sys
import time

import pytest

from tests.bench.management.commands import benchmark_recompute as command


def test_cores_busy_is_the_busy_share_of_the_ticks_times_the_cores(monkeypatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert command.cores_busy((100, 1000), (400, 1600)) == pytest.approx(2.0)  # 300 of 600
    assert command.cores_busy((100, 1000), (100, 1000)) is None  # no time passed
    assert command.cores_busy(None, (1, 2)) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_a_busy_loop_shows_as_at_least_most_of_one_core() -> None:
    before = command.host_cpu_ticks()
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        pass
    busy = command.cores_busy(before, command.host_cpu_ticks())
    assert busy is not None and 0.8 <= busy <= (os.cpu_count() or 1) + 0.01


def test_the_ceiling_is_said_only_when_the_cores_bound_the_workers(monkeypatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    report = command.Command()
    report.busy = {1: 1.25}
    assert report._ceiling(2) == "; this host's 2 cores allow at most ×1.60"
    report.busy = {1: 0.9}
    assert report._ceiling(2) == ""  # 2 x 0.9 cores fit: the cores are not the bound
