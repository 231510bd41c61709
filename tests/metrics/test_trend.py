"""The trend across prompt versions on the loop's data: the page reads one stored summary per
configuration (a worker computes it; the page queues what is missing or outdated), draws the
points in time order with their notes, and marks the step that is not comparable."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from metrics.engine import trend

pytest_plugins = ["tests.metrics.loop_data"]
pytestmark = pytest.mark.django_db


def test_the_trend_reads_stored_summaries_and_marks_the_step_not_comparable(
    loop, client, monkeypatch
):
    from tests.metrics.loop_data import partial_run_create, summaries_compute

    queued: list[dict] = []
    monkeypatch.setattr(trend, "task_enqueue", lambda task, **kw: queued.append(kw) or True)
    partial = partial_run_create(loop)
    client.force_login(loop.admin)
    url = reverse("metrics:trend")

    before = client.get(url)
    assert before.status_code == 200
    assert b'data-testid="trend-updating"' in before.content
    ids = [loop.configuration.pk, loop.degraded.configuration_id, partial.configuration_id]
    assert queued == [{"configuration_id": pk, "snapshot": None} for pk in ids]

    summaries_compute()
    queued.clear()
    page = client.get(url).content.decode()
    assert queued == [] and 'data-testid="trend-updating"' not in page
    labels = ["gpt-4o · v2-examples", "gpt-4o · v3-terse", "gpt-4o · v4-partial"]
    assert [page.index(label) for label in labels] == sorted(page.index(x) for x in labels)
    assert "replicate 2: replicate 2" in page and "shorter prompt" in page
    assert page.count(">not comparable</text>") == 1  # the chart's one break
    assert "scored on different discussions" in page

    rows = list(csv.DictReader(io.StringIO(client.get(url, {"format": "csv"}).content.decode())))
    assert [r["label"] for r in rows] == labels
    assert [r["not_comparable_with_previous"] for r in rows] == [
        "",
        "",
        "scored on different discussions",
    ]
    assert rows[0]["replicates"] == "3" and float(rows[1]["mean"]) < float(rows[0]["mean"])
