"""Run comparison and error analysis are stored results: a page reads them; when their runs'
results change it shows the last figures as "updating" and queues one background computation;
a failure is stored and not retried until the inputs change."""

from __future__ import annotations

import pytest
from django.urls import reverse

from metrics import tasks
from metrics.engine import derived
from metrics.models import MetricResult
from tests.factories import ExtractionRunFactory
from tests.metrics.dashboard_rows import discussion_with_statements, settle, statement_row

pytestmark = pytest.mark.django_db
Status = MetricResult.Status


@pytest.fixture
def runs():
    left = ExtractionRunFactory(prompt_version="v1")
    right = ExtractionRunFactory(prompt_version="v2")
    _, (a1, a2) = discussion_with_statements(2)
    statement_row(left, a1, people_tp=2, fn_event_kinds=("married",))
    statement_row(left, a2, people_fn=1)
    statement_row(right, a1, people_tp=2)
    statement_row(right, a2, people_tp=1)
    settle(left)
    settle(right)
    return left, right


@pytest.fixture
def queued(monkeypatch):
    """The broker accepts tasks but no worker runs them (yet)."""
    calls: list[tuple[str, dict]] = []

    def enqueue(task, **kwargs):
        calls.append((task.name.rsplit(".", 1)[-1], kwargs))
        return True

    monkeypatch.setattr(derived, "task_enqueue", enqueue)
    return calls


def _change(run, statement_count: int = 1) -> None:
    _, statements = discussion_with_statements(statement_count)
    for statement in statements:
        statement_row(run, statement, events_fn=1, fn_event_kinds=("birth",))
    settle(run)


def _compare(client, left, right) -> str:
    response = client.get(reverse("metrics:run_compare"), {"left": left.pk, "right": right.pk})
    assert response.status_code == 200
    return response.content.decode()


def test_first_view_queues_one_computation_and_says_so(admin_client, runs, queued):
    left, right = runs
    html = _compare(admin_client, left, right)
    _compare(admin_client, left, right)

    sides = {"baseline": f"r{left.pk}", "candidate": f"r{right.pk}", "snapshot": None}
    assert queued == [("compute_run_comparison", sides)]
    assert 'data-testid="comparison-updating"' in html
    assert 'hx-trigger="every 1s"' in html
    tasks.compute_run_comparison(left_id=left.pk, right_id=right.pk)
    html = _compare(admin_client, left, right)
    assert "On <strong>2</strong> statements" in html
    assert "comparison-updating" not in html and 'hx-trigger="every 1s"' not in html


def test_changed_inputs_show_the_last_figures_as_updating(admin_client, runs, queued):
    left, right = runs
    derived.run_comparison_result_compute(left_id=left.pk, right_id=right.pk)
    _change(right)

    html = _compare(admin_client, left, right)

    assert "On <strong>2</strong> statements" in html  # the last figures
    assert 'data-testid="comparison-updating"' in html
    assert len(queued) == 1
    tasks.compute_run_comparison(left_id=left.pk, right_id=right.pk)
    assert "comparison-updating" not in _compare(admin_client, left, right)


def test_a_lost_task_is_queued_again_on_a_later_view(runs, queued):
    left, right = runs
    derived.run_comparison_read(left, right)
    MetricResult.objects.filter(key=derived.comparison_key(left.pk, right.pk)).update(
        stale_since=MetricResult.objects.get(
            key=derived.comparison_key(left.pk, right.pk)
        ).stale_since
        - derived.REQUEUE_AFTER
    )
    derived.run_comparison_read(left, right)
    assert len(queued) == 2


def test_a_failure_is_shown_and_not_retried_until_the_inputs_change(
    admin_client, runs, queued, monkeypatch
):
    left, right = runs

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("metrics.engine.comparison.comparison_compute", broken)
    row = derived.run_comparison_result_compute(left_id=left.pk, right_id=right.pk)
    assert row.status == Status.FAILED and "boom" in row.error

    html = _compare(admin_client, left, right)
    assert 'data-testid="comparison-failed"' in html
    assert queued == []
    _change(left)
    derived.run_comparison_read(left, right)
    assert len(queued) == 1


def test_a_run_change_refreshes_only_what_it_outdates(runs, queued):
    left, right = runs
    derived.run_comparison_result_compute(left_id=left.pk, right_id=right.pk)
    derived.error_analysis_result_compute(run_id=left.pk)
    derived.error_analysis_result_compute(run_id=right.pk)
    assert derived.derived_results_refresh(run_id=right.pk) == 0  # nothing changed

    _change(right)
    derived.derived_results_refresh(run_id=right.pk)

    assert sorted(name for name, _ in queued) == [
        "compute_error_analysis",
        "compute_run_comparison",
    ]
    assert ("compute_error_analysis", {"run_id": right.pk}) in queued


def test_error_analysis_page_reads_the_stored_event_kinds(admin_client, runs, queued):
    left, _ = runs
    url = reverse("metrics:errors")
    html = admin_client.get(url, {"run": left.pk}).content.decode()
    assert 'data-testid="event-kinds-updating"' in html and "Not counted yet." in html

    tasks.compute_error_analysis(run_id=left.pk)
    html = admin_client.get(url, {"run": left.pk}).content.decode()
    section = html.split('data-testid="event-kinds"')[1].split("</section>")[0]
    assert "married" in section and "updating" not in section

    _change(left)
    section = admin_client.get(url, {"run": left.pk}).content.decode()
    section = section.split('data-testid="event-kinds"')[1].split("</section>")[0]
    assert "married" in section and "birth" not in section and "updating" in section
    tasks.compute_error_analysis(run_id=left.pk)
    response = admin_client.get(url, {"run": left.pk, "table": "event-kinds", "format": "json"})
    assert {row["kind"] for row in response.json()["rows"]} == {"married", "birth"}
