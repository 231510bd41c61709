"""The gate a CI job calls, on demo-like data: ``compare_runs --fail-on worse`` exits 0 for a
replicate against its own configuration and 1 for a degraded candidate; the same comparison
over the API (ask, poll, read the verdict). On the same data (made once for the module), the
trend across these configurations."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from evalsite.celery import app
from metrics.engine import derived, trend

pytest_plugins = ["tests.metrics.loop_data"]
pytestmark = pytest.mark.django_db


def gate(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("compare_runs", *args, "--fail-on", "worse", stdout=out)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_a_replicate_passes_against_its_configuration_and_a_degraded_candidate_fails(loop):
    configuration = f"c{loop.configuration.pk}"
    code, out = gate("--baseline", configuration, "--candidate", f"r{loop.replicates[0].pk}")
    assert code == 0, out
    assert "3 replicates" in out and "intervals over discussions and replicates" in out
    assert out.rstrip().endswith("gate: not worse beyond noise")

    code, out = gate("--baseline", configuration, "--candidate", f"r{loop.degraded.pk}")
    assert code == 1, out
    assert "gate: WORSE beyond noise on aggregate" in out
    assert "aggregate" in out.split("(gated)")[0].splitlines()[-1]


def test_the_gate_checks_the_figures_named(loop):
    """The degraded candidate left out every pair bond and half the events, not people."""
    sides = ("--baseline", f"c{loop.configuration.pk}", "--candidate", f"r{loop.degraded.pk}")
    code, out = gate(*sides, "--figures", "people")
    assert code == 0, out
    code, out = gate(*sides, "--figures", "people", "pair_bonds", "--json")
    report = json.loads(out)
    assert code == 1
    assert report["gated"] == ["people", "pair_bonds"] and report["worse"] == ["pair_bonds"]
    assert report["passed"] is False and report["level"] == 0.95
    assert report["figure_verdicts"]["people"] == "within noise"
    bonds = next(f for f in report["figures"] if f["key"] == "pair_bonds")
    assert bonds["high"] < 0 and bonds["candidate"] < bonds["baseline"]


def test_a_side_that_does_not_exist_is_exit_2_not_a_verdict(loop):
    with pytest.raises(CommandError, match="no configuration 999999") as caught:
        gate("--baseline", "c999999", "--candidate", f"r{loop.degraded.pk}")
    assert caught.value.returncode == 2


@pytest.fixture
def api(loop) -> APIClient:
    client = APIClient()
    client.force_authenticate(loop.admin)
    return client


def test_the_api_asks_polls_and_reads_the_verdict(loop, api, monkeypatch):
    queued: list[dict] = []
    monkeypatch.setattr(derived, "task_enqueue", lambda task, **kw: queued.append(kw) or True)
    body = {"baseline": f"c{loop.configuration.pk}", "candidate": f"r{loop.degraded.pk}"}
    started = api.post("/api/v1/comparisons/", body, format="json")
    assert started.status_code == 202, started.content
    assert started.json()["status"] == "updating" and started.json()["gate"] is None
    assert queued == [{**body, "snapshot": None}]

    app.tasks["metrics.tasks.compute_run_comparison"].apply(kwargs=queued[0], throw=True)
    answer = api.get(started.json()["url"]).json()
    assert answer["status"] == "fresh"
    assert answer["gate"] == {"gated": ["aggregate"], "worse": ["aggregate"], "passed": False}
    assert answer["baseline"]["runs"] == [r.pk for r in loop.replicates]
    figures = {f["key"]: f for f in answer["figures"]}
    assert figures["aggregate"]["verdict"] == "worse" and len(figures) == 13
    assert figures["people"]["verdict"] == "within noise"

    again = api.post("/api/v1/comparisons/", {**body, "figures": ["people"]}, format="json")
    assert again.status_code == 200 and again.json()["gate"]["passed"] is True
    assert again.json()["url"].endswith("figures=people")


def test_the_api_answers_a_missing_side_404_and_auditors_403(loop, api):
    missing = api.get("/api/v1/comparisons/", {"baseline": "c999999", "candidate": "r1"})
    assert missing.status_code == 404 and "no configuration" in missing.json()["detail"]
    bad = api.get("/api/v1/comparisons/", {"baseline": "x1", "candidate": "r1"})
    assert bad.status_code == 400
    auditor = APIClient()
    auditor.force_authenticate(loop.auditor)
    body = {"baseline": f"c{loop.configuration.pk}", "candidate": f"r{loop.degraded.pk}"}
    assert auditor.post("/api/v1/comparisons/", body, format="json").status_code == 403


def test_a_page_reads_one_list_of_the_stored_comparison_as_the_whole_row_has_it(loop):
    """The database cuts the figures and one list with its statements' details out of the
    stored comparison (a page shows one list of many); they equal the whole row cut here."""
    from metrics.engine.comparison import LIST_FIGURES
    from metrics.engine.comparison_parts import _cut, comparison_part
    from metrics.models import MetricResult

    sides = {"baseline": f"c{loop.configuration.pk}", "candidate": f"r{loop.degraded.pk}"}
    app.tasks["metrics.tasks.compute_run_comparison"].apply(kwargs=sides, throw=True)
    key = derived.comparison_key(sides["baseline"], sides["candidate"])
    whole = MetricResult.objects.get(key=key).values
    assert whole["details"] and comparison_part(key) == _cut(whole, None)
    assert "statements" not in comparison_part(key) and "figures" in comparison_part(key)
    for figure in LIST_FIGURES:
        for direction in ("worse", "better"):
            part = comparison_part(key, listed=(figure, direction))
            assert part == _cut(whole, (figure, direction)), (figure, direction)
    bonds = comparison_part(key, listed=("pair_bonds", "worse"))
    listed = bonds["statements"]["pair_bonds"]["worse"]
    assert listed and set(bonds["details"]) == {str(row["statement_id"]) for row in listed}
    assert comparison_part("run_comparison:pair:c0:c0") is None


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
