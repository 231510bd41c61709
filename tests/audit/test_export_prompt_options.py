"""The ground-truth export for prompt work, on demo-like data: auditors' notes and comment
threads, and a run's F1 figures with matched, missed and spurious items, each off by default;
the default export is unchanged and the round trip through an import stays lossless."""

from __future__ import annotations

import copy
import io
import json

import jsonschema
import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import Discussion, Feedback, history_purge
from audit.selectors.statement_f1 import run_statement_f1
from audit.services import discussions_import, ground_truth_export
from audit.services.exports import F1_FIGURES
from metrics.families.payload.items import ENTITY_KINDS
from metrics.families.payload.schema import GROUND_TRUTH_EXPORT_SCHEMA
from metrics.models import MetricResult

pytest_plugins = ["tests.metrics.loop_data"]
pytestmark = pytest.mark.django_db
ADDED = ("comment", "comments")


def _without_options(export: dict) -> dict:
    plain = copy.deepcopy(export)
    plain.pop("exported_at")
    for discussion in plain["discussions"]:
        for statement in discussion["statements"]:
            statement.pop("f1", None)
            for key in ADDED:
                (statement["approved_feedback"] or {}).pop(key, None)
    return plain


def _statements(export: dict) -> list[dict]:
    return [s for d in export["discussions"] for s in d["statements"]]


def test_notes_threads_and_f1_are_added_only_when_asked(loop):
    run = loop.replicates[0]
    default = ground_truth_export(all_discussions=True, run=run)
    full = ground_truth_export(all_discussions=True, run=run, include_notes=True, include_f1=True)
    jsonschema.validate(full, GROUND_TRUTH_EXPORT_SCHEMA)
    assert _without_options(full) == _without_options(default)
    assert not any("f1" in s for s in _statements(default))
    assert not any(
        key in (s["approved_feedback"] or {}) for s in _statements(default) for key in ADDED
    )

    by_id = {s["id"]: s for s in _statements(full)}
    for statement_id, note in loop.noted.items():
        assert by_id[statement_id]["approved_feedback"]["comment"] == note
    for statement_id, bodies in loop.comments.items():
        thread = by_id[statement_id]["approved_feedback"]["comments"]
        assert [c["body"] for c in thread] == bodies
        assert thread[0]["author"] == loop.auditor.username
    stored = {
        r.statement_id: r.values
        for r in MetricResult.objects.filter(family="extraction", scope="statement", run=run)
    }
    for statement in loop.statements:
        f1 = by_id[statement.pk]["f1"]
        values = stored[statement.pk]
        gt = by_id[statement.pk]["approved_feedback"]["edited_extraction"]
        assert f1["status"] == "fresh" and f1["run"]["external_id"] == run.external_id
        assert f1["figures"]["aggregate_micro_f1"] == values["aggregate_micro_f1"]
        assert f1["matched"]["people"] == values["people_matches"]
        missed = [b["id"] for b in f1["missed"]["pair_bonds"]]
        assert missed == [
            b["id"] for b in gt["pair_bonds"] if b["id"] in values["pair_bonds_fn_ids"]
        ]
        assert len(f1["spurious"]["events"]) == values["events_fp"]
    expert = next(s for s in _statements(full) if s["speaker_type"] == "Expert")
    assert expert["f1"] is None and expert["approved_feedback"] is None


def test_the_exported_f1_is_what_the_engine_stores(loop):
    """The export scores each statement itself, through the library: its figures are the
    engine's stored statement results, figure for figure, for every run."""
    for run in loop.replicates:
        stored = {
            r.statement_id: r.values
            for r in MetricResult.objects.filter(family="extraction", scope="statement", run=run)
        }
        assert stored and not MetricResult.objects.filter(run=run).exclude(status="fresh").exists()
        export = ground_truth_export(all_discussions=True, run=run, include_f1=True)
        exported = json.loads(json.dumps(export))  # as the file and the API carry it
        f1 = {s["id"]: s["f1"] for s in _statements(exported) if s["f1"] is not None}
        assert f1.keys() == stored.keys()
        for statement_id, values in stored.items():
            assert f1[statement_id]["figures"] == {name: values[name] for name in F1_FIGURES}
            matched = {kind: values[f"{kind}_matches"] for kind in ENTITY_KINDS}
            assert f1[statement_id]["matched"] == matched
        scored = run_statement_f1(run_id=run.pk, statement_ids=stored)
        assert {pk: json.loads(json.dumps(r.values)) for pk, r in scored.items()} == stored
    assert any(v["aggregate_micro_f1"] < 1 for v in stored.values())  # not all trivially equal


def test_the_round_trip_stays_lossless_with_the_options(loop):
    run = loop.replicates[0]
    full = ground_truth_export(all_discussions=True, run=run, include_notes=True, include_f1=True)
    before = ground_truth_export(all_discussions=True, run=run)
    with history_purge():
        Discussion.objects.all().delete()
    summary = discussions_import(by=loop.admin, data=copy.deepcopy(full))
    assert summary.discussions_created == len(loop.discussions)
    assert not any("f1" in line or "comments" in line for line in summary.details())
    after = ground_truth_export(all_discussions=True, run=run)

    def essentials(export: dict) -> list:
        return [
            (
                d["external_id"],
                s["order"],
                s["text"],
                s["pdp_deltas"],
                s["approved_feedback"] and s["approved_feedback"]["edited_extraction"],
            )
            for d in export["discussions"]
            for s in d["statements"]
        ]

    assert essentials(after) == essentials(before)
    noted = Feedback.objects.approved().filter(comment__contains="Checked the dates")
    assert noted.count() == len(loop.noted)  # the note is kept in the imported coding's note


def test_the_api_the_command_and_the_form(loop, client, tmp_path):
    run = loop.replicates[0]
    api = APIClient()
    api.force_authenticate(loop.admin)
    url = reverse("api-ground-truth-export")
    refused = api.get(url, {"all": "true", "include_f1": "true"})
    assert refused.status_code == 400 and "include_f1" in refused.json()["detail"]
    answer = api.get(
        url, {"all": "true", "run": run.pk, "include_f1": "true", "include_notes": "true"}
    )
    assert answer.status_code == 200
    data = json.loads(answer.content)
    assert all("f1" in s for s in _statements(data))

    path = tmp_path / "export.json"
    call_command(
        "export_ground_truth",
        "--all",
        "--run",
        str(run.pk),
        "--include-notes",
        "-o",
        str(path),
        stderr=io.StringIO(),
    )
    exported = json.loads(path.read_text(encoding="utf-8"))
    assert any("comments" in (s["approved_feedback"] or {}) for s in _statements(exported))
    assert not any("f1" in s for s in _statements(exported))

    client.force_login(loop.admin)
    html = client.get(reverse("metrics:dashboard")).content.decode()
    assert 'data-testid="export-options"' in html
    form = reverse("audit:ground_truth_export")
    sent = client.get(form, {"include_notes": "on", "run": str(run.pk), "include_f1": "on"})
    assert sent.status_code == 302
    assert sent["Location"] == f"{url}?all=true&run={run.pk}&include_notes=true&include_f1=true"
    assert client.get(form, {"include_notes": "on", "run": ""})["Location"] == (
        f"{url}?all=true&include_notes=true"
    )
    assert client.get(form, {"include_f1": "on", "run": ""}).status_code == 400
