"""benchmark_first_start reads make run's phases from the lines it prints, as they appear, and
reports them against the goals. (The command itself clones the repository and runs make run
twice: a minute or more, so it is not run here.)"""

from __future__ import annotations

import io
from types import SimpleNamespace

from tests.bench.management.commands import benchmark_first_start as command


def _phases_seen(lines: list[str]) -> dict[str, float]:
    run = command.Started()
    command._lines(SimpleNamespace(stdout=iter(lines)), run, started=0.0)
    return run.seen


def test_the_phases_are_read_from_make_runs_lines_now_and_before():
    now = ["Preparing the database and the demo data ...\n", "Migrations applied.\n",
           "demo data: 20 discussions created\n", "demo users:\n", "  admin ...\n"]  # fmt: skip
    before = ["  Applying audit.0001_initial... OK\n", ".venv/bin/python manage.py seed_demo\n",
              "demo data: ...\n", "demo users:\n"]  # fmt: skip
    again = ["The database and the demo data are ready (rm var/.demo-seeded to seed again).\n"]
    assert set(_phases_seen(now)) == {"migrations", "demo seed"}
    assert set(_phases_seen(before)) == {"migrations", "demo seed"}
    assert _phases_seen(again) == {}


def test_the_report_names_each_phase_and_the_goal():
    out = io.StringIO()
    report = command.Command(stdout=out)
    report._report_first(command.Started({"migrations": 10.0, "demo seed": 18.0}, 26.0, 9.5))
    report._report_second(command.Started({}, 12.5, 3.0))
    text = out.getvalue()
    assert "migrations 10.0 s, demo seed 8.0 s, first page served 8.0 s later" in text
    assert "in all 26.0 s (9.5 CPU s" in text and "goal ≤ 30 s: met" in text
    assert (
        "second make run: first page served after 12.5 s (3.0 CPU s); goal ≤ 10 s: NOT met" in text
    )
