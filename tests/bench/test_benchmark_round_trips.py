"""benchmark_round_trips times each round trip of a coder and a reviewer on the server, then
the key press to the next statement in headless Chromium, at a tiny size (a smoke: what it
prints, never how fast), and deletes what it seeded. It runs as a command of its own on this
test database: its Chromium is not the one this process's other browser tests hold."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from audit.models import Discussion, ExtractionRun, Feedback
from tests.conftest import CHROMIUM, require_service

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]

STEPS = [
    "open the editor (code my next)",
    "the editor page alone",
    "an autosave",
    "submit and next",
    "approve and next",
    "Chromium: key to next usable",
]


def test_round_trips_are_timed_on_the_server_and_in_chromium(tmp_path):
    require_service("Chromium", os.path.exists(CHROMIUM), "apt-get install chromium")
    if connection.vendor != "postgresql":
        pytest.skip("another process reaches the test database only on a database server")
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "SECRET_KEY": settings.SECRET_KEY,
    }
    command = [sys.executable, "manage.py", "benchmark_round_trips", "--discussions", "4"]
    profile = tmp_path / "round_trips.txt"
    command += ["--statements", "20", "--repeat", "1", "--presses", "1", "--profile", str(profile)]
    done = subprocess.run(
        command, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    for step in STEPS:
        assert re.search(rf"{re.escape(step)}\s+median +\d+\.\d ms", report), report
    assert re.search(r"Chromium: its CPU a press +median +\d+\.\d ms", report), report
    assert re.search(r"the editor page, as parsed +[\d,.]+ KB of HTML, [\d,]+ elements", report), (
        report
    )
    for step in STEPS[:-1]:  # the server's steps count what they sent to the database
        assert re.search(rf"{re.escape(step)}.* [1-9]\d* queries, \d+ commits", report), report
    profiled = profile.read_text()  # pyinstrument's report of the two steps' requests
    assert "submit_next" in profiled and "approve_next" in profiled, profiled[:2000]
    assert not Discussion.objects.exists() and not ExtractionRun.objects.exists()
    assert not Feedback.objects.exists()
