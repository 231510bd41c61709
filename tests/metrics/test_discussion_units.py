"""Discussion-unit runs: one PDP per discussion, scored with cumulative F1 against the
discussion's cumulative approved ground truth; statement figures not applicable."""

from __future__ import annotations

import copy
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from audit.models import DiscussionExtraction, Extraction, Statement
from audit.services import discussions_import
from audit.services.runs import ConfigurationSpec, discussion_extractions_import, run_register
from metrics.engine.recompute import compute_job_run, metrics_recompute_all
from metrics.engine.services import EXTRACTION
from metrics.families.payload.items import cumulative
from metrics.models import MetricResult
from metrics.results import run_key
from tests.metrics.extraction_helpers import approve, make_world

pytest_plugins = ["tests.metrics.extraction_helpers", "tests.api_fixtures"]
pytestmark = pytest.mark.usefixtures("only_extraction_results")
RUNS = "/api/v1/extraction-runs/"


def whole_run(prompt: str = "extract_full"):
    spec = ConfigurationSpec(model_name="gpt-x", prompt_version=prompt, unit="discussion")
    return run_register(spec=spec)[0]


def discussion_rows(run) -> dict[int, MetricResult]:
    rows = MetricResult.objects.filter(family=EXTRACTION, scope="discussion", run=run)
    return {row.discussion_id: row for row in rows}


def accumulated(run, discussion) -> dict:
    """The statement-unit run's deltas of a discussion, accumulated into one PDP."""
    deltas = (
        Extraction.objects.filter(run=run, statement__discussion=discussion)
        .order_by("statement__order")
        .values_list("pdp_deltas", flat=True)
    )
    return {**cumulative(list(deltas)), "delete": []}


@pytest.fixture
def approved_world(auditor, admin_user, run_committed):
    world = make_world(auditor, discussions=2, statements=3)
    for statement in world.statements:
        approve(run_committed, world, statement, admin_user)
    return world


def test_a_whole_discussion_pdp_is_scored_like_the_accumulated_deltas(
    approved_world, run_committed
):
    world = approved_world
    run = whole_run()
    items = [{"discussion": d.pk, "pdp": accumulated(world.run, d)} for d in world.discussions]
    run_committed(discussion_extractions_import, run=run, items=items)
    whole, by_statement = discussion_rows(run), discussion_rows(world.run)
    assert set(whole) == {d.pk for d in world.discussions}
    for discussion_id, row in whole.items():
        assert row.status == "fresh"
        assert row.values == by_statement[discussion_id].values  # item for item
    run_row = MetricResult.objects.get(key=run_key(EXTRACTION, run.pk))
    statement_run = MetricResult.objects.get(key=run_key(EXTRACTION, world.run.pk))
    assert run_row.values["unit"] == "discussion"
    assert run_row.values["system"] is None and run_row.values["n_statements"] is None
    assert run_row.values["cumulative"] == statement_run.values["cumulative"]
    assert (run_row.values["n_discussions"], run_row.values["n_left_out"]) == (2, 0)
    assert not MetricResult.objects.filter(run=run, scope="statement").exists()


def test_a_partly_approved_discussion_is_left_out_until_it_is_complete(
    auditor, admin_user, run_committed
):
    world = make_world(auditor, discussions=2, statements=3)
    for statement in world.statements[:4]:  # the first discussion whole, the second in part
        approve(run_committed, world, statement, admin_user)
    run = whole_run()
    items = [{"discussion": d.pk, "pdp": accumulated(world.run, d)} for d in world.discussions]
    run_committed(discussion_extractions_import, run=run, items=items)
    assert set(discussion_rows(run)) == {world.discussions[0].pk}
    row = MetricResult.objects.get(key=run_key(EXTRACTION, run.pk))
    assert (row.values["n_discussions"], row.values["n_left_out"]) == (1, 1)
    for statement in world.statements[4:]:
        approve(run_committed, world, statement, admin_user)
    assert set(discussion_rows(run)) == {d.pk for d in world.discussions}
    row.refresh_from_db()
    assert (row.values["n_discussions"], row.values["n_left_out"]) == (2, 0)


def test_a_recompute_job_stores_the_same_rows(approved_world, run_committed):
    world = approved_world
    run = whole_run()
    items = [{"discussion": d.pk, "pdp": accumulated(world.run, d)} for d in world.discussions]
    run_committed(discussion_extractions_import, run=run, items=items)
    before = {k: (r.values, r.contribution) for k, r in discussion_rows(run).items()}
    MetricResult.objects.filter(run=run).delete()
    job = metrics_recompute_all(run_id=run.pk, queue=False)
    compute_job_run(job_id=job.pk)
    after = {k: (r.values, r.contribution) for k, r in discussion_rows(run).items()}
    assert after == before
    row = MetricResult.objects.get(key=run_key(EXTRACTION, run.pk))
    assert row.status == "fresh" and row.values["unit"] == "discussion"


def test_units_are_not_mixed(approved_world):
    world = approved_world
    run = whole_run()
    subject = world.statements[0]
    from audit.services import extractions_import
    from audit.services.runs import WrongUnit

    with pytest.raises(WrongUnit, match="extracts whole discussions"):
        extractions_import(run=run, items=[{"statement": subject.pk, "pdp_deltas": {}}])
    with pytest.raises(WrongUnit, match="statement by statement"):
        discussion_extractions_import(
            run=world.run, items=[{"discussion": subject.discussion_id, "pdp": {}}]
        )


def test_the_api_takes_one_pdp_per_discussion(api, admin_user, approved_world, run_committed):
    """The issue's reproduction: a whole-discussion extraction had to be attached to the last
    statement and gave no result at all."""
    world = approved_world
    client = api(admin_user)
    run = client.post(
        RUNS, {"model_name": "gpt-x", "prompt_version": "full", "unit": "discussion"}, format="json"
    ).json()
    url = f"{RUNS}{run['id']}/discussion-extractions/"
    discussion = world.discussions[0]
    body = {
        "extractions": [{"discussion": discussion.pk, "pdp": accumulated(world.run, discussion)}]
    }
    response = run_committed(client.post, url, body, format="json")
    assert response.status_code == 201, response.json()
    assert client.get(url).json()["count"] == 1
    rows = discussion_rows(run["id"])
    assert list(rows) == [discussion.pk] and rows[discussion.pk].values["aggregate_micro_f1"] > 0
    statements_url = f"{RUNS}{run['id']}/extractions/"
    wrong = client.post(
        statements_url,
        {"extractions": [{"statement": world.statements[0].pk, "pdp_deltas": {}}]},
        format="json",
    )
    assert wrong.status_code == 409
    bad = client.post(
        url,
        {"extractions": [{"discussion": 10**9, "pdp": {"people": [{"name": "no id"}]}}]},
        format="json",
    )
    assert bad.status_code == 400
    assert any("[0].pdp.people[0]: missing required field 'id'" in e for e in bad.json()["errors"])
    assert any("[0].discussion: no discussion" in e for e in bad.json()["errors"])


def test_an_import_file_carries_a_discussion_extraction(admin_user, run_committed):
    statements = [
        {"text": "Q?", "speaker_type": "Expert"},
        {"text": "My father John.", "speaker_type": "Subject", "ground_truth": _gt(1)},
        {"text": "He married Mary.", "speaker_type": "Subject", "ground_truth": _gt(2)},
    ]
    entry = {
        "extraction_run": {"model_name": "gpt-x", "prompt_version": "full"},
        "pdp": {"people": [{"id": -1, "name": "John"}, {"id": -2, "name": "Mary"}]},
    }
    data = {
        "discussion": {"external_id": "d1", "summary": "s", "discussion_extraction": entry},
        "statements": statements,
    }
    summary = run_committed(discussions_import, data=copy.deepcopy(data), by=admin_user)
    assert summary.extractions_created == 1
    extraction = DiscussionExtraction.objects.get()
    assert extraction.run.unit == "discussion"
    row = discussion_rows(extraction.run)[extraction.discussion_id]
    assert row.values["people_tp"] == 2 and row.values["people_fp"] == 0
    assert Statement.objects.filter(discussion=extraction.discussion).count() == 3


def _gt(index: int) -> dict:
    names = {1: "John", 2: "Mary"}
    return {"people": [{"id": -index, "name": names[index]}], "events": [], "pair_bonds": []}


def _whole_file(external_id: str) -> bytes:
    """One discussion whose whole-discussion PDP names no run: the import's run takes it."""
    data = {
        "discussion": {
            "external_id": external_id,
            "summary": "s",
            "discussion_extraction": {"pdp": {"people": [{"id": -1, "name": "John"}]}},
        },
        "statements": [
            {"text": "My father John.", "speaker_type": "Subject", "ground_truth": _gt(1)}
        ],
    }
    return json.dumps(data).encode()


def test_the_upload_page_and_the_api_register_a_discussion_unit_replicate(
    admin_client, api, admin_user, run_committed
):
    """The upload page, the API's import and the command take the same run description: a
    model and prompt version make a new replicate, of the unit and with the notes given."""
    page = run_committed(
        admin_client.post,
        reverse("audit:import"),
        {
            "file": SimpleUploadedFile("whole.json", _whole_file("d1")),
            "model_name": "gpt-x",
            "prompt_version": "full",
            "unit": "discussion",
            "notes": "first try",
        },
    )
    assert page.status_code == 200, page.content.decode()[-2000:]
    first = DiscussionExtraction.objects.get().run
    assert (first.unit, first.replicate, first.notes) == ("discussion", 1, "first try")
    assert discussion_rows(first)  # scored: its one statement is approved
    query = "model_name=gpt-x&prompt_version=full&unit=discussion&notes=again&external_id=k2"
    url = f"/api/v1/ground-truth/import?{query}"
    response = run_committed(
        api(admin_user).post, url, _whole_file("d2"), content_type="application/json"
    )
    assert response.status_code == 200, response.json()
    second = DiscussionExtraction.objects.get(discussion__external_id="d2").run
    assert (second.configuration_id, second.replicate) == (first.configuration_id, 2)
    assert (second.notes, second.external_id) == ("again", "k2")
    wrong = api(admin_user).post(
        "/api/v1/ground-truth/import?unit=discussion", b"{}", content_type="application/json"
    )
    assert wrong.status_code == 400 and "unit" in wrong.json()["errors"][0]


def test_triage_compares_a_run_with_the_newest_statement_unit_run(db):
    """Triage's consistency signal compares each statement's extraction with another run's: a
    whole-discussion run has none, so the partner is the newest run of statements."""
    from metrics.own_data.triage import _partner_run
    from tests.factories import ExtractionRunFactory

    older, run = ExtractionRunFactory(), ExtractionRunFactory()
    assert _partner_run(run) == older
    whole_run()  # the newest run, extracting whole discussions
    assert _partner_run(run) == older
