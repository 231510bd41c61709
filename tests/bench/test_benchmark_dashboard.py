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
    "triage on: admin dashboard",
]


@pytest.mark.django_db
def test_every_page_gets_a_median_and_a_query_count():
    out = io.StringIO()
    call_command(
        "benchmark_dashboard", discussions=3, statements=2, long=12, renders=1, compare=True,
        stdout=out,
    )  # fmt: skip
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
    from tests.bench.management.commands import benchmark_dashboard as command

    seen: list[tuple[str, int, bool]] = []
    timed = command.time_page

    def time_page(client, url, renders, **kwargs):
        from audit.models import TriageStatement
        from audit.selectors.queues import triage_lowest_first

        seen.append((url, TriageStatement.objects.count(), triage_lowest_first()))
        return timed(client, url, renders, **kwargs)

    monkeypatch.setattr(command, "time_page", time_page)
    call_command(
        "benchmark_dashboard", discussions=4, statements=4, long=0, renders=1,
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


@pytest.mark.django_db
def test_seeded_times_the_data_a_keep_run_left_and_writes_nothing(monkeypatch):
    """--seeded finds what --keep committed (the long discussion, the far rejected coding, the
    second auditor's submission), times the plain pages with "weakest AI first" off and the
    weakest-first ones with it on, and leaves the setting as it was."""
    from audit.models import Feedback, TriageSettings
    from audit.selectors.queues import triage_lowest_first
    from tests.bench.management.commands import benchmark_dashboard as command

    call_command(
        "benchmark_dashboard", discussions=3, statements=4, long=12, renders=1, keep=True,
        pages=["weakest first: my queue"], stdout=io.StringIO(),
    )  # fmt: skip
    rows = {"feedback": Feedback.objects.count(), "triage": TriageStatement.objects.count()}
    seen: list[tuple[str, bool]] = []
    timed = command.time_page

    def time_page(client, url, renders, **kwargs):
        seen.append((url, triage_lowest_first()))
        return timed(client, url, renders, **kwargs)

    monkeypatch.setattr(command, "time_page", time_page)
    out = io.StringIO()
    # The pages that read what the kept run left (its discussions, the far rejected coding, the
    # submission, the runs) and the weakest-first ones: every page is timed by the first test.
    kept = ["audit page", "editor", "statement review", "run comparison", "scrolled through"]
    call_command(
        "benchmark_dashboard", seeded=True, renders=1, pages=[*kept, "weakest", "triage on"],
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()

    assert "the kept 3 discussions x 4 statements + a long one, not seeded" in text
    for page in [
        "audit page (4)",
        "audit page (12)",
        "editor (far statement)",
        "statement review",
        "run comparison",
        *PAGES[-5:],
    ]:
        assert re.search(rf"^{re.escape(page)}\s+median\s+[\d.]+ ms", text, re.M), page
    assert "review triage scored" not in text  # the kept scores are timed, not written again
    plain, weakest = seen[:-6], seen[-6:]
    assert not any(on for _, on in plain) and all(on for _, on in weakest)
    assert TriageSettings.objects.get().lowest_first
    assert rows == {"feedback": Feedback.objects.count(), "triage": TriageStatement.objects.count()}


@pytest.mark.django_db
def test_seeded_without_kept_data_says_what_to_run():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="run benchmark_dashboard --keep first"):
        call_command("benchmark_dashboard", seeded=True, stdout=io.StringIO())


@pytest.mark.django_db
def test_the_long_discussion_is_scrolled_through_window_by_window():
    """The scroll figure follows what the page loads as it is read to its foot: each window
    (three for 45 statements) and the batches of placeholders in them."""
    from audit.views.discussion import WINDOW

    out = io.StringIO()
    call_command(
        "benchmark_dashboard", discussions=2, statements=2, long=45, renders=1,
        pages=["scrolled through"], stdout=out,
    )  # fmt: skip
    found = re.search(
        r"^audit page \(45\) scrolled through: (\d+) requests, (\d+) ms", out.getvalue(), re.M
    )
    assert found, out.getvalue()
    windows = -(-45 // WINDOW)
    assert windows < int(found.group(1)) < 45
