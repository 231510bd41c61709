"""benchmark_dashboard --compare prints a median and a query count for every page it times,
reading the stored comparison and error analysis, and leaves the database as it was."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from audit.models import Discussion, TriageStatement
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
    "weakest first: my queue",
    "weakest first: admin p.1",
    "weakest first: admin mid",
    "weakest first: admin last",
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
    assert "review triage scored every subject statement in" in text
    assert not Discussion.objects.exists() and not MetricResult.objects.exists()
    assert not TriageStatement.objects.exists()


@pytest.mark.django_db
def test_the_weakest_first_pages_are_timed_on_a_triaged_queue(monkeypatch):
    """The weakest-first pages see review triage's scores with "weakest AI first" on; the
    other pages are timed before, with neither."""
    from metrics.management.commands import benchmark_dashboard as command

    seen: list[tuple[str, int, bool]] = []
    timed = command.time_page

    def time_page(client, url, renders):
        from audit.models import TriageStatement
        from audit.selectors import triage_lowest_first

        seen.append((url, TriageStatement.objects.count(), triage_lowest_first()))
        return timed(client, url, renders)

    monkeypatch.setattr(command, "time_page", time_page)
    call_command(
        "benchmark_dashboard", discussions=4, statements=10, long=0, renders=1,
        pages=["weakest", "my queue"], stdout=io.StringIO(),
    )  # fmt: skip

    before = [s for s in seen if s[1] == 0]
    after = [s for s in seen if s[1] > 0]
    assert [url for url, *_ in before] == [
        "/audit/queue/",
        "/audit/queue/?status=done",
        "/audit/queue/?status=in_progress",
        "/audit/queue/",
    ]
    assert not any(lowest for *_, lowest in before) and all(lowest for *_, lowest in after)
    assert len(after) == 5 and after[-1][0] == "/audit/queue/?page=1"  # 4 discussions: one page
