"""benchmark_dashboard --compare prints a median and a query count for every page it times,
reading the stored comparison and error analysis, and leaves the database as it was."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from audit.models import Discussion
from metrics.models import MetricResult

PAGES = [
    "auditor dashboard",
    "admin dashboard",
    "runs",
    "run comparison",
    "discussions",
    "errors",
    "review queue",
    "audit page (2)",
]


@pytest.mark.django_db
def test_every_page_gets_a_median_and_a_query_count():
    out = io.StringIO()
    call_command(
        "benchmark_dashboard", discussions=3, statements=2, renders=1, compare=True, stdout=out
    )
    text = out.getvalue()

    for page in PAGES:
        assert re.search(rf"^{re.escape(page)}\s+median\s+[\d.]+ ms .* \d+ queries", text, re.M), (
            page
        )
    assert "run comparison computed in the background in" in text
    assert "error analysis computed in the background in" in text
    assert not Discussion.objects.exists() and not MetricResult.objects.exists()
