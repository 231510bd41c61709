"""Runs as experiments on the pages: runs grouped by configuration with the replicates' mean and
spread, every figure naming the ground truth it is on (live or a snapshot), a whole-discussion
run's statement figures "not applicable" (never 0), and freezing a snapshot from its page."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from audit.models import AuditLogEntry, GroundTruthSnapshot
from audit.services import extractions_import
from audit.services.runs import ConfigurationSpec, discussion_extractions_import, run_register
from audit.services.snapshots import snapshot_freeze
from metrics.engine.snapshots import SNAPSHOT_FAMILY
from metrics.families.payload.items import cumulative
from metrics.models import MetricResult
from tests.metrics.extraction_helpers import AI, approve, make_world

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = pytest.mark.usefixtures("only_extraction_results")
RUNS = reverse("metrics:runs")
SNAPSHOTS = reverse("audit:snapshots")


@pytest.fixture
def experiments(auditor, admin_user, run_committed):
    """Two discussions of three approved statements; the statement-unit run has a second
    replicate (which missed the last statement of each discussion) and a discussion-unit run
    extracted both discussions whole."""
    world = make_world(auditor, discussions=2, statements=3)
    for statement in world.statements:
        approve(run_committed, world, statement, admin_user)
    spec = ConfigurationSpec(
        model_name=world.run.model_name, prompt_version=world.run.prompt_version
    )
    second, _ = run_register(spec=spec, notes="second try")
    items = [{"statement": s.pk, "pdp_deltas": AI} for s in world.statements if s.order < 2]
    run_committed(extractions_import, run=second, items=items)
    whole_spec = ConfigurationSpec(model_name="gpt-x", prompt_version="full", unit="discussion")
    whole, _ = run_register(spec=whole_spec, notes="whole")
    items = [
        {"discussion": d.pk, "pdp": {**cumulative([AI]), "delete": []}} for d in world.discussions
    ]
    run_committed(discussion_extractions_import, run=whole, items=items)
    return world, second, whole


def _html(response) -> str:
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def _group(html: str, configuration_id: int) -> str:
    start = html.index(f'data-testid="configuration-{configuration_id}"')
    return html[start : html.index("</tbody>", start)]


def test_runs_page_groups_replicates_with_their_mean_and_spread(admin_client, experiments):
    world, second, whole = experiments
    html = _html(admin_client.get(RUNS))
    assert html.count("on live ground truth") >= 2  # beside the figures' columns
    group = _group(html, world.run.configuration_id)
    assert "2 replicates" in group
    assert (
        f'data-testid="run-{world.run.pk}"' in group and f'data-testid="run-{second.pk}"' in group
    )
    figures = [
        row.values["system"]["aggregate_micro_f1"]
        for row in MetricResult.objects.filter(scope="run", family="extraction").exclude(run=whole)
    ]
    mean = sum(figures) / 2
    assert f"<strong>{mean:.3f}</strong>" in group
    assert f"{min(figures):.3f}–{max(figures):.3f}, SD" in group
    assert "second try" in group
    # a replicate is reachable from its row
    assert f"{reverse('metrics:dashboard')}?run={second.pk}" in group


def test_a_whole_discussion_run_shows_not_applicable_never_zero(admin_client, experiments):
    _, _, whole = experiments
    group = _group(_html(admin_client.get(RUNS)), whole.configuration_id)
    assert group.count("not applicable") == 2  # the configuration's and the run's overall F1
    assert "2 discussions" in group and "0.000" not in group
    card = _html(admin_client.get(reverse("metrics:dashboard"), {"run": whole.pk}))
    assert 'data-testid="not-applicable"' in card
    overall = re.search(r"Overall F1</span>\s*(.*?)</div>", card).group(1)
    assert "not applicable" in overall
    assert "on live ground truth" in card
    errors = _html(admin_client.get(reverse("metrics:errors"), {"run": whole.pk}))
    assert 'data-testid="not-applicable"' in errors


def test_the_dashboard_and_tables_show_each_replicate_of_the_configuration(
    admin_client, experiments
):
    world, second, _ = experiments
    for name in ("metrics:dashboard", "metrics:discussions"):
        html = _html(admin_client.get(reverse(name), {"run": second.pk}))
        replicates = html.split('data-testid="replicates"')[1].split("</section>")[0]
        assert f'?run={world.run.pk}">#1</a>' in replicates  # the other replicate, reachable
        assert "#2 <span" in replicates and "Mean" in replicates and ", SD " in replicates
        assert "on live ground truth" in html


def test_runs_page_on_a_snapshot_names_it_and_computes_its_figures_once(
    admin_client, admin_user, experiments, run_committed, django_capture_on_commit_callbacks
):
    _, _, whole = experiments
    snapshot = run_committed(snapshot_freeze, name="GT v12", note="", by=admin_user)
    with django_capture_on_commit_callbacks(execute=True):  # the worker computes them (eager)
        first = admin_client.get(RUNS, {"snapshot": snapshot.pk})
    assert "figures on GT v12" in _html(first)
    rows = MetricResult.objects.filter(family=SNAPSHOT_FAMILY, scope="run", snapshot=snapshot)
    assert sorted(rows.values_list("status", flat=True)) == ["fresh"] * 3
    html = _html(admin_client.get(RUNS, {"snapshot": snapshot.pk}))
    assert "on GT v12" in html and "computing…" not in html
    assert "not applicable" in _group(html, whole.configuration_id)
    bad = admin_client.get(RUNS, {"snapshot": "x"})
    assert bad.status_code == 400 and "snapshot: expected" in bad.content.decode()


def test_an_admin_freezes_and_deletes_a_snapshot_on_its_page(admin_client, experiments):
    assert "No snapshot yet" in _html(admin_client.get(SNAPSHOTS))
    response = admin_client.post(SNAPSHOTS, {"name": "GT v1", "note": "before the new guideline"})
    assert response.status_code == 302
    snapshot = GroundTruthSnapshot.objects.get()
    assert (snapshot.codings, snapshot.discussions, snapshot.complete_discussions) == (6, 2, 2)
    html = _html(admin_client.get(SNAPSHOTS))
    assert "Froze 6 approved codings of 2 discussions as GT v1." in html
    assert f"{RUNS}?snapshot={snapshot.pk}" in html and "before the new guideline" in html
    again = admin_client.post(SNAPSHOTS, {"name": "GT v1"})
    assert again.status_code == 409 and "exists already" in again.content.decode()
    delete = reverse("audit:snapshot_delete", args=[snapshot.pk])
    admin_client.post(delete, {"reason": "wrong"})  # not confirmed: kept
    assert GroundTruthSnapshot.objects.exists()
    admin_client.post(delete, {"reason": "wrong", "confirm": "on"})
    assert not GroundTruthSnapshot.objects.exists()
    logged = AuditLogEntry.objects.filter(object_type="snapshot").values_list("message", flat=True)
    assert list(logged.order_by("pk")) == [
        "Froze approved ground truth as GT v1.",
        "Deleted the ground-truth snapshot GT v1: wrong",
    ]


def test_auditors_cannot_freeze(auditor_client):
    assert auditor_client.get(SNAPSHOTS).status_code == 403
    assert auditor_client.post(SNAPSHOTS, {"name": "GT x"}).status_code == 403
    assert not GroundTruthSnapshot.objects.exists()


def test_the_trend_says_not_applicable_for_a_whole_discussion_configuration(
    admin_client, experiments, django_capture_on_commit_callbacks
):
    trend = reverse("metrics:trend")
    with django_capture_on_commit_callbacks(execute=True):  # the summaries (worker, eager)
        admin_client.get(trend)

    def table(**query) -> str:
        return _html(admin_client.get(trend, query)).split('data-testid="trend-table"')[1]

    assert table().count("not applicable") == 1  # overall F1: the whole-discussion run's
    assert "not applicable" not in table(figure="cumulative")


def test_the_comparison_names_each_replicate_by_its_configuration(admin_client, experiments):
    """Replicate links read "replicate 2 of gpt-4o · v1", not a run id a coder does not know."""
    _, second, whole = experiments
    configuration = second.configuration
    url = reverse("metrics:run_compare")
    query = {"baseline": f"c{configuration.pk}", "candidate": f"r{whole.pk}"}
    html = _html(admin_client.get(url, query))
    links = html[html.index('data-testid="replicate-links"') :]
    links = links[: links.index("</p>")]
    names = re.findall(r">(replicate \d+ of [^<]+)</a>", links)
    label = configuration.label
    assert names == [
        f"replicate 1 of {label}",
        f"replicate 2 of {label}",
        f"replicate 1 of {whole.configuration.label}",
    ]
    assert "(#" not in links and f'title="run {second.pk}: second try"' in links
