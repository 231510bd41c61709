"""The shapes of file users already have, each imported through the command, the API and the
import page with the same result; problems as one line each; runs an import makes."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from audit.models import Discussion, Extraction, ExtractionRun, Feedback, Statement
from audit.services import discussions_import, import_shapes
from audit.services.imports import IMPORT_RUN_MODEL, ImportRun
from audit.services.imports.reading import canonical
from metrics.families.json_input import JsonListReader
from metrics.families.payload.schema import PayloadError
from tests.audit.test_views_support import hx_get

pytest_plugins = ["tests.api_fixtures"]
pytestmark = pytest.mark.django_db
FILES = Path(__file__).with_name("import_files")
URL = "/api/v1/ground-truth/import"


def _by_command(path: Path, admin) -> list[str]:
    out = io.StringIO()
    call_command("import_discussions", str(path), "--by", admin.username, stdout=out)
    return [line.strip() for line in out.getvalue().splitlines()[1:]]


def _by_api(path: Path, admin, api) -> list[str]:
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    response = api(admin).post(URL, {"file": upload}, format="multipart")
    assert response.status_code == 200, response.json()
    return response.json()["details"]


def _by_page(path: Path, admin, client) -> list[str]:
    client.force_login(admin)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    response = client.post(reverse("audit:import"), {"file": upload})
    assert response.status_code == 200, response.content.decode()[:3000]
    html = response.content.decode()
    assert 'data-testid="import-summary"' in html
    return [line for line in response.context["summary"]["details"]]


def _state() -> dict:
    """What an import wrote, as a person would compare it (run names carry the time)."""
    statements = Statement.objects.select_related("speaker", "discussion").order_by(
        "discussion__external_id", "order"
    )
    return {
        "discussions": sorted(Discussion.objects.values_list("external_id", "summary")),
        "statements": [
            (s.discussion.external_id, s.order, s.text, s.speaker.name, s.speaker.type)
            for s in statements
        ],
        "extractions": sorted(
            (e.statement.order, e.run.model_name, json.dumps(e.pdp_deltas, sort_keys=True))
            for e in Extraction.objects.select_related("statement", "run")
        ),
        "ground_truth": sorted(
            (f.statement.order, json.dumps(f.edited_extraction, sort_keys=True), f.comment)
            for f in Feedback.objects.approved().select_related("statement")
        ),
        "runs": sorted(ExtractionRun.objects.values_list("model_name", flat=True)),
    }


@contextmanager
def _undone() -> Iterator[None]:
    """Roll back what the block wrote (a savepoint): the next import starts from the same
    database without deleting anything (imported ground truth carries revisions, which a
    delete would refuse to lose)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


EXPECTED = {
    "spec_example.json": {
        "statements": 3,
        "extractions": 2,  # the expert statement has none
        "ground_truth": 2,
        "lines": [
            "read as: single discussion",
            "extractions in run: import · spec_example.json",
            "warning: statements[2].approved_feedback.edited_extraction.events[0].person: "
            "a shift event needs a person",
        ],
    },
    "origin_admin_export.json": {
        "statements": 3,
        "extractions": 2,
        "ground_truth": 1,
        "lines": [
            "read as: admin export with speakers",
            "extractions in run: import · origin_admin_export.json",
            "not imported: ground truth marked not approved (1)",
            "not imported: extraction (pdp_deltas) of an expert statement (1)",
            "ignored keys: discussions[].chat_ai_speaker_id (1)",
        ],
    },
    "case_list.json": {
        "statements": 2,
        "extractions": 2,
        "ground_truth": 2,
        "lines": ["read as: case list", "extractions in run: import · case_list.json"],
    },
}


def _matches(lines: list[str], expected: list[str]) -> bool:
    """Each expected line begins one of the summary's lines (run names and key lists go on)."""
    return all(any(line.startswith(want) for line in lines) for want in expected)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_shape_imports_alike_through_the_command_the_api_and_the_page(
    name, admin_user, api, client
):
    path = FILES / name
    doors = {
        "command": lambda: _by_command(path, admin_user),
        "api": lambda: _by_api(path, admin_user, api),
        "page": lambda: _by_page(path, admin_user, client),
    }
    states, details = {}, {}
    for door, run in doors.items():
        with _undone():
            details[door] = run()
            states[door] = _state()
    assert states["command"] == states["api"] == states["page"]
    state, expected = states["command"], EXPECTED[name]
    assert len(state["statements"]) == expected["statements"]
    assert len(state["extractions"]) == expected["extractions"]
    assert len(state["ground_truth"]) == expected["ground_truth"]
    assert state["runs"] == [IMPORT_RUN_MODEL]  # a run of the import's own
    for door, lines in details.items():
        assert _matches(lines, expected["lines"]), (door, lines)


def test_the_admin_export_maps_speakers_to_their_types(admin_user):
    data = json.loads((FILES / "origin_admin_export.json").read_text())
    discussions_import(data=data, by=admin_user)
    speakers = Statement.objects.order_by("order").values_list("speaker__name", "speaker__type")
    assert list(speakers) == [("Coach", "expert"), ("Dana", "subject"), ("Dana", "subject")]


def test_the_case_list_keeps_each_comment_and_imports_once(admin_user):
    data = json.loads((FILES / "case_list.json").read_text())
    discussions_import(data=copy.deepcopy(data), by=admin_user)
    again = discussions_import(data=copy.deepcopy(data), by=admin_user)
    assert (again.discussions_created, again.discussions_existing) == (0, 1)
    comments = sorted(Feedback.objects.approved().values_list("comment", flat=True))
    assert comments == ["Imported.\nAI got it right", "Imported.\nAI missed the anxiety shift"]


def _cases(groups: str) -> list[dict]:
    """One case per letter, its discussion the letter: "aab" is two cases of a, one of b."""
    return [
        {
            "statement_text": f"{group} {n}",
            "ai_extraction": {"people": [{"id": -1, "name": f"P{n}"}]},
            "gt_extraction": {"people": [{"id": -1, "name": f"P{n}"}]},
            "discussion": group,
        }
        for n, group in enumerate(groups)
    ]


def _statements() -> list[tuple[str, int, str]]:
    rows = Statement.objects.order_by("discussion__external_id", "order")
    return [(s.discussion.external_id[19:], s.order, s.text) for s in rows]


def test_a_case_list_is_grouped_by_its_discussion_key_and_read_a_few_cases_at_a_time(
    admin_user, monkeypatch, tmp_path
):
    """Cases of one discussion apart from each other, or more than a part holds, go to the same
    discussion in the order of the file; the file is read a case at a time, the parsed list
    the same way, with the same result; importing it again adds nothing."""
    monkeypatch.setattr(import_shapes, "CASES_PER_PART", 2)
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(_cases("aaabba")))
    with _undone():
        call_command(
            "import_discussions", str(path), "--by", admin_user.username, stdout=io.StringIO()
        )
        from_file = _statements()
    summary = discussions_import(data=_cases("aaabba"), by=admin_user)
    assert _statements() == from_file == [
        ("a", 0, "a 0"), ("a", 1, "a 1"), ("a", 2, "a 2"), ("a", 3, "a 5"),
        ("b", 0, "b 3"), ("b", 1, "b 4"),
    ]  # fmt: skip
    assert (summary.discussions_created, summary.discussions_existing) == (2, 0)
    assert (summary.statements_created, summary.approved_created) == (6, 6)
    again = discussions_import(data=_cases("aaabba"), by=admin_user)
    assert (again.discussions_created, again.discussions_existing) == (0, 2)
    assert again.statements_created == again.approved_created == 0


def test_a_case_list_file_gives_its_first_discussion_before_it_is_read_to_its_end():
    file = io.BytesIO(json.dumps(_cases("aa" + "b" * 3000)).encode())
    reader = JsonListReader(file, list_key="discussions", chunk_size=1024)
    path, first = next(canonical(reader, import_shapes.ImportNotes()))
    assert (path, [s["text"] for s in first["statements"]]) == ("[0]", ["a 0", "a 1"])
    assert file.tell() < len(file.getvalue()) / 100


def test_a_case_list_with_something_else_than_cases_is_refused_by_its_place(admin_user):
    with pytest.raises(PayloadError) as refused:
        discussions_import(data=[*_cases("ab"), 5], by=admin_user)
    assert refused.value.messages() == [
        "expected a JSON object at the top level, or a list of case objects ([2] is not an object)"
    ]
    assert not Discussion.objects.exists()


def test_a_problem_in_500_statements_is_fewer_than_20_lines(admin_user):
    statements = [
        {"text": f"s{i}", "speaker_type": "Subject", "pdp_deltas": {"events": [{"id": -1}]}}
        for i in range(500)
    ]
    statements[7]["speaker_type"] = "narrator " * 200  # a long value: only an excerpt shown
    data = {"discussions": [{"external_id": "many", "summary": "x", "statements": statements}]}
    with pytest.raises(PayloadError) as refused:
        discussions_import(data=data, by=admin_user)
    lines = refused.value.messages()
    assert len(lines) < 20
    assert any("500 times, first at discussions[0].statements[0]" in line for line in lines)
    assert all(len(line) < 400 for line in lines)
    assert not Discussion.objects.exists()


def test_the_api_takes_the_run_as_the_command_does(admin_user, api):
    path = FILES / "case_list.json"
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    body = {"file": upload, "model_name": "gpt-5", "prompt_version": "p9"}
    with _undone():
        assert api(admin_user).post(URL, body, format="multipart").status_code == 200
        run = ExtractionRun.objects.get()
        assert (run.model_name, run.prompt_version, run.extractions.count()) == ("gpt-5", "p9", 2)
    assert not ExtractionRun.objects.exists()
    existing = ExtractionRun.objects.create(model_name="m", prompt_version="v")
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    assert api(admin_user).post(URL, {"file": upload, "run": existing.pk}).status_code == 200
    assert list(ExtractionRun.objects.all()) == [existing]
    assert existing.extractions.count() == 2


def test_an_import_without_extractions_makes_no_run(admin_user):
    data = json.loads((FILES / "case_list.json").read_text())
    for case in data:
        case.pop("ai_extraction")
    summary = discussions_import(data=data, by=admin_user, run=ImportRun(source="gt.json"))
    assert summary.approved_created == 2 and summary.run is None
    assert not ExtractionRun.objects.exists()


def test_the_import_page_is_for_admins(client, auditor):
    client.force_login(auditor)
    assert client.get(reverse("audit:import")).status_code == 403


def test_the_editor_shows_what_the_import_warned_about(admin_user, client):
    """The warning the summary lists (a shift event without a person: a rule the spec does not
    state) shows at its field in the editor of the imported ground truth, never a problem."""
    data = json.loads((FILES / "spec_example.json").read_text())
    summary = discussions_import(data=data, by=admin_user)
    assert summary.warnings == [
        "statements[2].approved_feedback.edited_extraction.events[0].person: "
        "a shift event needs a person"
    ]
    imported = Feedback.objects.approved().get(statement__text="Things got tense after that.")
    client.force_login(admin_user)
    html = hx_get(client, reverse("audit:feedback_edit", args=[imported.pk])).content.decode()
    assert "1 warning" in html and "problem to fix" not in html
    assert "warning: a shift event needs a person (submit allowed)" in html
