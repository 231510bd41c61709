"""benchmark_comparison at a tiny size: it seeds two configurations with replicates, has the
worker's tasks compute the comparison and the trend summaries, prints a median, a p95 and a
query count for the comparison and trend pages read from those stored rows, and leaves the
database as it was (or, with --keep, the data --seeded times again)."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.models import Discussion, ExtractionRun, RunConfiguration
from metrics.models import MetricResult

PAGES = ["comparison page", "comparison: pair bonds better", "trend page"]


def _timed(text: str) -> None:
    for page in PAGES:
        found = re.search(
            rf"^{re.escape(page)}\s+median\s+[\d.]+ ms\s+p95\s+[\d.]+ ms\s+\d+ queries", text, re.M
        )
        assert found, text
    assert "the pages read stored rows only" in text


@pytest.mark.django_db
def test_it_times_both_pages_on_stored_rows_and_leaves_nothing_behind():
    out = io.StringIO()
    call_command(
        "benchmark_comparison", discussions=3, statements=4, replicates=2, renders=1, stdout=out
    )
    text = out.getvalue()

    assert "seeded 3 discussions x 4 statements, 2 configurations x 2 replicates" in text
    assert re.search(r"^comparison computed by the worker in [\d.]+ s", text, re.M)
    assert text.count("computed by the worker in") == 3  # the comparison, two trend summaries
    _timed(text)
    assert not Discussion.objects.exists() and not MetricResult.objects.exists()
    assert not ExtractionRun.objects.exists() and not RunConfiguration.objects.exists()


@pytest.mark.django_db
def test_seeded_times_the_data_a_keep_run_left():
    call_command(
        "benchmark_comparison", discussions=2, statements=3, replicates=2, renders=1, keep=True,
        stdout=io.StringIO(),
    )  # fmt: skip
    kept = MetricResult.objects.count()
    out = io.StringIO()
    call_command("benchmark_comparison", seeded=True, renders=1, stdout=out)

    text = out.getvalue()
    assert "the kept 2 discussions x 3 statements, 2 configurations x 2 replicates" in text
    _timed(text)
    assert MetricResult.objects.count() == kept
    with pytest.raises(CommandError, match="--seeded times kept data"):
        call_command("benchmark_comparison", seeded=True, keep=True, stdout=io.StringIO())


@pytest.mark.django_db
def test_seeded_without_kept_data_says_what_to_run():
    with pytest.raises(CommandError, match="run benchmark_comparison --keep first"):
        call_command("benchmark_comparison", seeded=True, stdout=io.StringIO())
