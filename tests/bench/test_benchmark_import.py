"""benchmark_import exports N x M approved ground truth, imports the file back into a site
without it, prints the time and peak memory of each, and leaves nothing behind."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from audit.models import Discussion, ExtractionRun, Feedback


@pytest.mark.django_db(transaction=True)  # each phase runs in a process of its own
def test_benchmark_import_times_the_export_and_the_import_back_and_cleans_up():
    out = io.StringIO()
    call_command("benchmark_import", discussions=2, statements=3, stdout=out)
    report = out.getvalue()
    timed = r"[\d.]+ s \([\d.]+ s of CPU\), peak memory \+-?\d+ MB"
    assert re.search(r"export: " + timed + r", file \d+ MB", report), report
    imported = r"import: " + timed + r" \(2 discussions created, 0 already"
    assert re.search(imported + r" present, 6 statements, 6 extractions, 6 approved", report)
    assert not Discussion.objects.exists() and not Feedback.objects.exists()
    assert not ExtractionRun.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="bench-").exists()
