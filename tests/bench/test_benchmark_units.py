"""benchmark_units: a discussion-unit run scored against the cumulative F1 of a statement-unit
run on the same data, in the library and through the stored results, at a tiny size; it
checks that both get the same figures and leaves nothing of what it seeded."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from audit.models import Discussion, DiscussionExtraction, ExtractionRun, RunConfiguration
from metrics.models import MetricResult

pytest_plugins = ["tests.metrics.extraction_helpers"]


@pytest.mark.django_db
@pytest.mark.usefixtures("only_extraction_results")
def test_the_command_times_both_units_and_cleans_up():
    out = io.StringIO()
    call_command("benchmark_units", "--discussions=3", "--statements=4", "--repeat=2", stdout=out)
    lines = out.getvalue().splitlines()
    library = next(line for line in lines if line.startswith("library (median of 2): "))
    database = next(line for line in lines if line.startswith("database (median of 2): "))
    for line in (library, database):
        assert "statement-unit run's cumulative F1" in line and "discussion-unit run" in line
        assert line.endswith("same figures in 3 of 3")  # item for item, both ways
    assert lines[-1].startswith("goal: a discussion-unit run scored within 2× ")
    assert not Discussion.objects.exists() and not DiscussionExtraction.objects.exists()
    assert not ExtractionRun.objects.exists()
    assert not RunConfiguration.objects.filter(unit="discussion").exists()
    assert not MetricResult.objects.filter(scope__in=["statement", "discussion", "run"]).exists()


def test_the_command_refuses_no_rounds():
    with pytest.raises(CommandError, match="--repeat"):
        call_command("benchmark_units", "--skip-db", "--repeat=0", stdout=io.StringIO())
