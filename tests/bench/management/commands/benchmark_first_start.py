"""A newcomer's first minutes: from a fresh clone of this repository, ``make venv`` (pip,
reported apart), then ``make run`` timed phase by phase (migrations, demo seed, the first page
served), then a second ``make run`` until it serves.

The clone runs as ``make run`` does on a developer's machine: SQLite under its var/ and the
filesystem broker (DATABASE_URL, REDIS_URL and CACHE_URL are left out of its environment).
The phases are read from the lines ``make run`` prints, as they appear; the first page is the
login page, asked for until it answers 200. Everything runs in a temporary folder, deleted at
the end (--keep: kept, and printed).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

GOAL_FIRST_S = 30.0  # migrations + demo seed + first page
GOAL_SECOND_S = 10.0  # a second make run until it serves
# (phase, the lines of make run that end it: now, and before the demo applied the migrations
# itself, when make's echo of the seed's command followed them)
MARKS = (
    ("migrations", ("Migrations applied.", "No migrations to apply.", "manage.py seed_demo\n")),
    ("demo seed", ("demo users:",)),
)
LEFT_OUT = ("DATABASE_URL", "REDIS_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE")


@dataclass
class Started:
    """One ``make run``: when each marked line appeared and when the first page answered."""

    seen: dict[str, float] = field(default_factory=dict)
    served: float | None = None
    cpu: float = 0.0


class Command(BaseCommand):
    help = "Time a fresh clone's first make run phase by phase (pip apart), then a second one."

    def add_arguments(self, parser):
        parser.add_argument(
            "--venv", type=Path, help="use this virtualenv instead of installing one (no pip)"
        )
        parser.add_argument("--timeout", type=float, default=600.0, help="seconds per make run")
        parser.add_argument("--keep", action="store_true", help="keep the clone")

    def handle(self, *args, venv: Path | None, timeout: float, keep: bool, **options):
        folder = Path(tempfile.mkdtemp(prefix="first-start-"))
        clone = folder / "evalsite"
        try:
            subprocess.run(["git", "clone", "-q", str(settings.BASE_DIR), str(clone)], check=True)
            self._venv(clone, venv)
            first = self._run(clone, timeout)
            self._report_first(first)
            second = self._run(clone, timeout)
            self._report_second(second)
        finally:
            if keep:
                self.stdout.write(f"the clone is kept: {clone}")
            else:
                shutil.rmtree(folder, ignore_errors=True)

    def _venv(self, clone: Path, venv: Path | None) -> None:
        if venv is not None:
            (clone / ".venv").symlink_to(venv.resolve())
            (clone / ".venv" / ".runtime").touch()
            self.stdout.write(f"pip: not run (the virtualenv {venv} is used)")
            return
        started, cpu = time.perf_counter(), _children_cpu()
        subprocess.run(["make", "-s", "venv"], cwd=clone, check=True, env=_env())
        self.stdout.write(
            f"pip (make venv, apart): {time.perf_counter() - started:.1f} s "
            f"({_children_cpu() - cpu:.1f} CPU s)"
        )

    def _run(self, clone: Path, timeout: float) -> Started:
        """``make run`` on a free port until its login page answers; then stopped."""
        port = _free_port()
        run, cpu = Started(), _children_cpu()
        started = time.perf_counter()
        process = subprocess.Popen(
            ["make", "run", f"PORT={port}"],
            cwd=clone,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, stopped whole below
        )
        reader = threading.Thread(target=_lines, args=(process, run, started), daemon=True)
        reader.start()
        try:
            url = f"http://127.0.0.1:{port}/accounts/login/"
            while time.perf_counter() - started < timeout and process.poll() is None:
                if _answers(url):
                    run.served = time.perf_counter() - started
                    break
                time.sleep(0.2)
        finally:
            _stop(process)
            reader.join(timeout=10)
        run.cpu = _children_cpu() - cpu
        if run.served is None:
            raise CommandError(f"make run did not serve within {timeout:.0f} s: {run.seen}")
        return run

    def _report_first(self, run: Started) -> None:
        previous, parts = 0.0, []
        for phase, _ in MARKS:
            at = run.seen.get(phase)
            if at is not None:
                parts.append(f"{phase} {at - previous:.1f} s")
                previous = at
        parts.append(f"first page served {(run.served or 0) - previous:.1f} s later")
        served = run.served or 0.0
        verdict = "met" if served <= GOAL_FIRST_S else "NOT met"
        self.stdout.write(
            f"first make run: {', '.join(parts)}; in all {served:.1f} s "
            f"({run.cpu:.1f} CPU s of make and what it ran); goal ≤ {GOAL_FIRST_S:.0f} s: {verdict}"
        )

    def _report_second(self, run: Started) -> None:
        served = run.served or 0.0
        verdict = "met" if served <= GOAL_SECOND_S else "NOT met"
        self.stdout.write(
            f"second make run: first page served after {served:.1f} s ({run.cpu:.1f} CPU s); "
            f"goal ≤ {GOAL_SECOND_S:.0f} s: {verdict}"
        )


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LEFT_OUT}
    return {**env, "DEBUG": "1"}


def _lines(process: subprocess.Popen, run: Started, started: float) -> None:
    """Note when each marked line first appears (the output is read to its end)."""
    assert process.stdout is not None
    for line in process.stdout:
        for phase, marks in MARKS:
            if any(mark in line for mark in marks) and phase not in run.seen:
                run.seen[phase] = time.perf_counter() - started


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _stop(process: subprocess.Popen) -> None:
    """The make run started here, and everything it started (its own process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
