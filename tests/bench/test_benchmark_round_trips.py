"""benchmark_round_trips times each round trip of a coder and a reviewer on the server, then
the key press to the next statement in headless Chromium, at a tiny size (a smoke: what it
prints, never how fast), and deletes what it seeded."""

from __future__ import annotations

import io
import os
import re

import pytest
from django.core.management import call_command

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


def test_round_trips_are_timed_on_the_server_and_in_chromium():
    require_service("Chromium", os.path.exists(CHROMIUM), "apt-get install chromium")
    out = io.StringIO()
    call_command(
        "benchmark_round_trips", discussions=4, statements=20, repeat=1, presses=1, stdout=out
    )
    report = out.getvalue()
    for step in STEPS:
        assert re.search(rf"{re.escape(step)}\s+median +\d+\.\d ms", report), report
    assert not Discussion.objects.exists() and not ExtractionRun.objects.exists()
    assert not Feedback.objects.exists()
