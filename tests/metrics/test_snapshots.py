"""Frozen ground-truth snapshots: freezing, the same export bytes whatever happens later,
figures computed once on them and never stale from ground truth, deletion logged; and the
figures of runs and configurations on either ground truth."""

from __future__ import annotations

import hashlib
import json
import statistics

import pytest
from django.core.files.storage import default_storage

from audit.models import AuditLogEntry, GroundTruthSnapshot, SnapshotCoding
from audit.services import feedback_unapprove
from audit.services.exports import ground_truth_export_text
from audit.services.runs import ConfigurationSpec, discussion_extractions_import, run_register
from audit.services.snapshots import snapshot_delete, snapshot_export_open, snapshot_freeze
from metrics.engine.services import EXTRACTION
from metrics.engine.snapshots import SNAPSHOT_FAMILY, snapshot_results_compute
from metrics.experiments import Basis, configuration_figures, cumulative_comparison, run_figures
from metrics.families.payload.items import cumulative
from metrics.models import MetricResult
from metrics.results import run_key
from tests.factories import ExtractionFactory
from tests.metrics.extraction_helpers import AI, approve

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = pytest.mark.usefixtures("only_extraction_results")


@pytest.fixture
def world(approved_but_the_last, db):
    """Two discussions of three statements; all approved but the last statement (made once for
    the module: extraction_helpers.approved_but_the_last)."""
    return approved_but_the_last.fresh()


@pytest.fixture
def auditor(approved_but_the_last, db, django_user_model):
    return django_user_model.objects.get(pk=approved_but_the_last.auditor_id)


@pytest.fixture
def admin_user(approved_but_the_last, db, django_user_model):
    return django_user_model.objects.get(pk=approved_but_the_last.admin_id)


def _bytes(snapshot) -> bytes:
    with snapshot_export_open(snapshot=snapshot) as file:
        return file.read()


def _live_figures(run) -> dict:
    return MetricResult.objects.get(key=run_key(EXTRACTION, run.pk)).values


def test_freezing_counts_what_it_froze_and_is_logged(world, admin_user):
    snapshot = snapshot_freeze(name=" GT v12 ", note="before the new guidelines", by=admin_user)
    assert snapshot.name == "GT v12"
    assert (snapshot.discussions, snapshot.complete_discussions, snapshot.codings) == (2, 1, 5)
    assert snapshot.items == {"people": 11, "events": 5, "pair_bonds": 3}
    assert SnapshotCoding.objects.filter(snapshot=snapshot).count() == 6
    assert SnapshotCoding.objects.filter(snapshot=snapshot, payload__isnull=True).count() == 1
    data = _bytes(snapshot)
    assert hashlib.sha256(data).hexdigest() == snapshot.export_sha256
    assert len(data) == snapshot.export_size
    exported = json.loads(data)
    assert all(s["pdp_deltas"] is None for d in exported["discussions"] for s in d["statements"])
    entry = AuditLogEntry.objects.get(action="snapshot_freeze")
    assert (
        entry.details["codings"] == 5 and entry.details["export_sha256"] == snapshot.export_sha256
    )


def test_a_snapshot_exports_the_same_bytes_after_ground_truth_changes(
    world, admin_user, run_committed
):
    snapshot = snapshot_freeze(name="GT v1", by=admin_user)
    at_freezing = _bytes(snapshot)
    live_before = "".join(ground_truth_export_text(all_discussions=True))
    # Ground truth moves on: one coding taken back, the last statement approved.
    run_committed(feedback_unapprove, feedback=world.fb(world.statements[0]), admin=admin_user)
    approve(run_committed, world, world.statements[5], admin_user)
    live_after = "".join(ground_truth_export_text(all_discussions=True))
    assert live_after != live_before
    snapshot = GroundTruthSnapshot.objects.get(pk=snapshot.pk)  # read afresh, as next month
    assert _bytes(snapshot) == at_freezing
    assert SnapshotCoding.objects.filter(snapshot=snapshot, payload__isnull=True).count() == 1
    with pytest.raises(ValueError, match="immutable"):
        snapshot.save()
    with pytest.raises(Exception):  # noqa: B017 - the name is unique: a second freeze is refused
        snapshot_freeze(name="GT v1", by=admin_user)


def test_figures_on_a_snapshot_are_computed_once_and_never_stale_from_ground_truth(
    world, admin_user, run_committed
):
    snapshot = snapshot_freeze(name="GT v1", by=admin_user)
    live_at_freezing = _live_figures(world.run)
    row = snapshot_results_compute(run_id=world.run.pk, snapshot_id=snapshot.pk)
    assert row.status == "fresh" and row.snapshot_id == snapshot.pk
    assert row.values["system"] == live_at_freezing["system"]
    assert row.values["cumulative"] == live_at_freezing["cumulative"]
    computed_at = row.computed_at
    run_committed(feedback_unapprove, feedback=world.fb(world.statements[0]), admin=admin_user)
    approve(run_committed, world, world.statements[5], admin_user)
    assert _live_figures(world.run)["system"] != live_at_freezing["system"]
    on_snapshot = run_figures(world.run, Basis(snapshot))
    assert on_snapshot["status"] == "fresh" and on_snapshot["computed_at"] == computed_at
    assert (
        on_snapshot["statement"]["aggregate_micro_f1"]
        == (live_at_freezing["system"]["aggregate_micro_f1"])
    )
    assert on_snapshot["ground_truth"]["label"] == "on GT v1"
    assert run_figures(world.run, Basis())["ground_truth"]["label"] == "on live ground truth"


def test_a_change_of_the_runs_extractions_recomputes_them_on_the_same_snapshot(
    world, admin_user, run_committed
):
    snapshot = snapshot_freeze(name="GT v1", by=admin_user)
    snapshot_results_compute(run_id=world.run.pk, snapshot_id=snapshot.pk)
    before = run_figures(world.run, Basis(snapshot))["statement"]["aggregate_micro_f1"]
    extraction = world.run.extractions.get(statement=world.statements[1])
    extraction.pdp_deltas = {"people": [], "events": [], "pair_bonds": [], "delete": []}
    from audit.services import extractions_import

    run_committed(
        extractions_import,
        run=world.run,
        items=[{"statement": world.statements[1].pk, "pdp_deltas": extraction.pdp_deltas}],
    )
    after = run_figures(world.run, Basis(snapshot))
    assert after["status"] == "fresh" and after["statement"]["aggregate_micro_f1"] != before


def test_requesting_figures_on_a_snapshot_queues_them_once(world, admin_user, run_committed):
    snapshot = snapshot_freeze(name="GT v1", by=admin_user)
    figures = run_committed(run_figures, world.run, Basis(snapshot))
    rows = MetricResult.objects.filter(family=SNAPSHOT_FAMILY, run=world.run, scope="run")
    assert rows.count() == 1
    # Eager tasks: computed by the time the request's commit hooks ran.
    assert run_figures(world.run, Basis(snapshot))["status"] == "fresh"
    assert figures["ground_truth"]["name"] == "GT v1"


def test_a_discussion_unit_run_on_a_snapshot_is_scored_on_its_complete_discussions(
    world, admin_user, run_committed
):
    snapshot = snapshot_freeze(name="GT v1", by=admin_user)
    spec = ConfigurationSpec(model_name="m", prompt_version="full", unit="discussion")
    whole = run_register(spec=spec)[0]
    items = [
        {"discussion": d.pk, "pdp": {**cumulative([AI] * 3), "delete": []}}
        for d in world.discussions
    ]
    run_committed(discussion_extractions_import, run=whole, items=items)
    row = snapshot_results_compute(run_id=whole.pk, snapshot_id=snapshot.pk)
    assert row.values["system"] is None and row.values["unit"] == "discussion"
    assert (row.values["n_discussions"], row.values["n_left_out"]) == (1, 1)
    snapshot_results_compute(run_id=world.run.pk, snapshot_id=snapshot.pk)
    comparison = cumulative_comparison(world.run, whole, Basis(snapshot))
    assert comparison["n_shared"] == 1 and comparison["n_left_only"] == 1
    [pair] = comparison["discussions"]
    assert pair["left"] == pair["right"]  # the same accumulated PDP: the same cumulative F1
    assert comparison["left_pooled"] == comparison["right_pooled"]


def test_deleting_a_snapshot_is_logged_and_takes_its_figures_with_it(
    world, admin_user, run_committed
):
    snapshot = snapshot_freeze(name="GT v1", by=admin_user)
    snapshot_results_compute(run_id=world.run.pk, snapshot_id=snapshot.pk)
    name, sha = snapshot.export_file.name, snapshot.export_sha256
    run_committed(snapshot_delete, snapshot=snapshot, by=admin_user, reason="frozen by mistake")
    assert not GroundTruthSnapshot.objects.exists()
    assert not SnapshotCoding.objects.exists()
    assert not MetricResult.objects.filter(family=SNAPSHOT_FAMILY).exists()
    assert not default_storage.exists(name)
    entry = AuditLogEntry.objects.get(action="snapshot_delete")
    assert "frozen by mistake" in entry.message and entry.details["export_sha256"] == sha


def test_a_configurations_figures_are_its_replicates_mean_spread_and_each_replicate(
    world, admin_user, run_committed
):
    configuration = world.run.configuration
    others = [run_register(configuration=configuration)[0] for _ in range(2)]
    for run, missing in zip(others, (1, 2), strict=True):
        for statement in world.statements[:5]:
            if statement.order != missing:  # each replicate extracts differently
                ExtractionFactory(statement=statement, run=run, pdp_deltas=AI)
    from metrics.engine.services import results_mark_stale

    run_committed(results_mark_stale, statement_ids=[s.pk for s in world.statements])
    figures = configuration_figures(configuration, Basis())
    assert [r["replicate"] for r in figures["replicates"]] == [1, 2, 3]
    assert figures["complete"] is True
    values = [r["statement"]["aggregate_micro_f1"] for r in figures["replicates"]]
    spread = figures["statement"]["aggregate_micro_f1"]
    assert spread["n"] == 3
    assert spread["mean"] == pytest.approx(statistics.mean(values))
    assert spread["sd"] == pytest.approx(statistics.stdev(values))
    assert (spread["min"], spread["max"]) == (min(values), max(values))
    assert len(set(values)) > 1  # the replicates differ: the spread is not trivially zero
