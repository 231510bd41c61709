import copy
import io
import json
import re
from datetime import UTC, datetime
from unittest import mock

import jsonschema
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from audit.models import AuditLogEntry, Discussion, Extraction, Feedback, Statement, history_purge
from audit.services import discussions_import, exports, ground_truth_export
from audit.services import imports as transfer
from audit.services.exports import NothingToExport
from metrics.families.payload.schema import GROUND_TRUTH_EXPORT_SCHEMA, PayloadError
from tests.factories import SIMPLE_PDP, pdp

pytestmark = pytest.mark.django_db

GT = pdp(people=[{"id": -1, "name": "John", "last_name": "Smith", "gender": "male"}])


def discussion_file(external_id="ext-1", *, gt_key="approved_feedback") -> dict:
    subject = {
        "text": "My father John married Mary.",
        "speaker_type": "Subject",
        "pdp_deltas": SIMPLE_PDP,
    }
    if gt_key == "approved_feedback":
        subject["approved_feedback"] = {
            "auditor_id": "pat@example.com",
            "edited_extraction": GT,
            "approved": True,
        }
    else:
        subject["ground_truth"] = GT
    return {
        "discussion": {
            "id": 30,
            "external_id": external_id,
            "summary": "Smith family",
            "created_at": "2025-01-15T10:30:00Z",
        },
        "statements": [
            {"text": "Tell me about your parents.", "speaker_type": "Expert"},
            subject,
            {"text": "Nothing else.", "speaker_type": "Subject", "pdp_deltas": pdp()},
        ],
    }


def test_import_creates_discussion_statements_extractions_and_ground_truth(admin_user):
    summary = discussions_import(by=admin_user, data=discussion_file())
    assert summary.discussions_created == 1
    assert summary.statements_created == 3
    assert summary.extractions_created == 2  # only subject statements carry extractions
    assert summary.approved_created == 1
    feedback = Feedback.objects.get()
    assert feedback.status == Feedback.Status.APPROVED
    assert feedback.edited_extraction["people"][0]["name"] == "John"
    assert feedback.auditor.username == "pat@example.com"


def test_import_twice_changes_nothing(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    counts = (
        Discussion.objects.count(),
        Statement.objects.count(),
        Extraction.objects.count(),
        Feedback.objects.count(),
    )
    summary = discussions_import(by=admin_user, data=discussion_file())
    assert summary.discussions_existing == 1 and summary.discussions_created == 0
    assert (
        Discussion.objects.count(),
        Statement.objects.count(),
        Extraction.objects.count(),
        Feedback.objects.count(),
    ) == counts


def test_legacy_ground_truth_key_is_accepted(admin_user):
    discussions_import(by=admin_user, data=discussion_file(gt_key="ground_truth"))
    assert Feedback.objects.approved().count() == 1


def test_list_of_discussions_is_accepted(admin_user):
    data = {"discussions": [discussion_file("a"), discussion_file("b")]}
    assert discussions_import(by=admin_user, data=data).discussions_created == 2


def test_bad_file_stores_nothing_and_names_each_problem(admin_user):
    good = discussion_file("good")
    bad = discussion_file("bad")
    bad["statements"][1]["pdp_deltas"] = {"events": [{"id": 1, "kind": "party"}]}
    bad["statements"][2]["speaker_type"] = "Robot"
    with pytest.raises(PayloadError) as info:
        discussions_import(by=admin_user, data={"discussions": [good, bad]})
    messages = info.value.messages()
    assert (
        "discussions[1].statements[1].pdp_deltas.events[0].kind: 'party' is not one of"
        in messages[0]
    )
    assert any("discussions[1].statements[2].speaker_type" in m for m in messages)
    # The good discussion was written as it was read, then rolled back with its new auditor.
    assert Discussion.objects.count() == 0
    assert not get_user_model().objects.filter(username="pat@example.com").exists()


def test_the_checks_problems_come_before_a_write_that_failed(admin_user):
    """A refused write (statement extractions for a run of whole discussions) stops the
    writing; the rest of the file is still checked, and its problems are what is said."""
    whole = {"model_name": "gpt-x", "prompt_version": "full", "unit": "discussion"}
    bad = discussion_file("bad")
    bad["statements"][0]["text"] = 1
    data = {"discussions": [discussion_file("ok"), bad]}
    with pytest.raises(PayloadError) as info:
        discussions_import(by=admin_user, data=data, run_info=whole)
    assert info.value.messages() == ["discussions[1].statements[0].text: missing or not a string"]
    with pytest.raises(PayloadError, match="extracts whole discussions"):
        discussions_import(
            by=admin_user, data={"discussions": [data["discussions"][0]]}, run_info=whole
        )
    assert Discussion.objects.count() == 0


def test_progress_counts_the_discussions_written_of_an_estimate_that_ends_exact(
    tmp_path, admin_user
):
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"discussions": [discussion_file(f"d{i}") for i in range(4)]}))
    seen: list[tuple[int, int]] = []
    transfer.discussions_import_file(
        open_file=lambda: path.open("rb"),
        by=admin_user,
        progress=lambda done, total: seen.append((done, total)),
        chunk_size=64,
    )
    assert [done for done, _ in seen] == [1, 2, 3, 4] and seen[-1] == (4, 4)
    assert all(total >= done for done, total in seen)


def test_export_round_trips_through_import(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    exported = ground_truth_export(all_discussions=True)
    jsonschema.validate(exported, GROUND_TRUTH_EXPORT_SCHEMA)
    # Into an empty database, the export rebuilds the same ground truth.
    with history_purge():
        Discussion.objects.all().delete()
        Feedback.objects.all().delete()
    discussions_import(by=admin_user, data=copy.deepcopy(exported))
    again = ground_truth_export(all_discussions=True)
    strip = lambda d: [  # noqa: E731 - ids and timestamps differ between databases
        [
            (
                s["order"],
                s["text"],
                s["pdp_deltas"],
                s["approved_feedback"] and s["approved_feedback"]["edited_extraction"],
            )
            for s in disc["statements"]
        ]
        for disc in d["discussions"]
    ]
    assert strip(again) == strip(exported)
    # ... and re-importing into the same database is a no-op.
    assert discussions_import(by=admin_user, data=again).discussions_created == 0


def test_the_export_text_is_the_dump_of_the_export_piece_by_piece(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    discussions_import(by=admin_user, data=discussion_file(external_id="second"))
    now = datetime(2026, 11, 24, 10, tzinfo=UTC)
    with (
        mock.patch.object(exports, "EXPORT_CHUNK", 1),  # several rounds of queries
        mock.patch.object(exports.timezone, "now", return_value=now),
    ):
        exported = ground_truth_export(all_discussions=True)
        pieces = list(exports.ground_truth_export_text(all_discussions=True))
    whole = json.dumps(exported, indent=2, ensure_ascii=False)
    assert "".join(pieces) == whole + "\n"
    assert len(pieces) == 2 + 2  # header, one per discussion, the end


def test_the_export_text_refuses_before_writing_anything(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    Feedback.objects.update(status=Feedback.Status.SUBMITTED)
    with pytest.raises(NothingToExport):
        exports.ground_truth_export_text(all_discussions=True)


def test_export_contains_only_approved_ground_truth(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    Feedback.objects.update(status=Feedback.Status.SUBMITTED)
    with pytest.raises(NothingToExport):
        ground_truth_export(all_discussions=True)


def test_export_requires_a_choice():
    with pytest.raises(ValueError):
        ground_truth_export()


def test_commands_round_trip(tmp_path, admin_user):
    source = tmp_path / "in.json"
    source.write_text(json.dumps(discussion_file()))
    call_command("import_discussions", str(source), "--by", admin_user.username)
    out = tmp_path / "out.json"
    call_command("export_ground_truth", "--all", "-o", str(out))
    data = json.loads(out.read_text())
    assert data["schema_version"] == "1"
    assert data["discussions"][0]["statements"][1]["approved_feedback"]["edited_extraction"] == GT


def test_import_command_reports_bad_json(tmp_path, admin_user):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("import_discussions", str(bad), "--by", admin_user.username)


def test_export_command_needs_a_choice():
    with pytest.raises(CommandError, match="--all"):
        call_command("export_ground_truth")


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        ("discussion", "2025-13-45", "discussion.date: '2025-13-45' is not a valid date"),
        (
            "feedback",
            "yesterday",
            "statements[1].approved_feedback.approved_at: 'yesterday' is not a valid date",
        ),
    ],
)
def test_impossible_dates_are_refused_with_their_location(where, value, expected, admin_user):
    data = discussion_file()
    if where == "discussion":
        data["discussion"]["date"] = value
    else:
        data["statements"][1]["approved_feedback"]["approved_at"] = value
    with pytest.raises(PayloadError) as info:
        discussions_import(by=admin_user, data=data)
    assert any(expected in m for m in info.value.messages()), info.value.messages()
    assert Discussion.objects.count() == 0


# --- files are read a discussion at a time ---------------------------------------------------


def _problems(call) -> list[str]:
    with pytest.raises(PayloadError) as caught:
        call()
    return caught.value.messages()


def _from_file(data: dict, tmp_path, **options) -> list[str]:
    path = tmp_path / "import.json"
    path.write_text(json.dumps(data, indent=1))
    return _problems(
        lambda: transfer.discussions_import_file(
            open_file=lambda: path.open("rb"), chunk_size=5, **options
        )
    )


@pytest.fixture
def export_doc(admin_user) -> dict:
    """A valid export of one discussion, taken from a site then emptied."""
    discussions_import(by=admin_user, data=discussion_file())
    data = ground_truth_export(all_discussions=True)
    with history_purge():
        Feedback.objects.all().delete()
        Discussion.objects.all().delete()
    return json.loads(json.dumps(data))


def _many_bad(doc: dict) -> dict:
    """Twelve discussions with five schema problems each: more than are shown, and indexes
    whose text order ("10" before "2") decides which come first."""
    [first] = doc["discussions"]
    doc["discussions"] = []
    for index in range(12):
        entry = copy.deepcopy(first)
        entry.update(id=100 + index, external_id=f"e{index}", summary=index)
        for statement in entry["statements"]:
            statement["text"] = 1
        entry["statements"][0]["order"] = "first"
        doc["discussions"].append(entry)
    doc["surprise"] = True
    return doc


SPOILERS = {
    "many schema problems": _many_bad,
    "rule in the third": lambda d: d.update(discussions=[*d["discussions"] * 2, _bad_date(d)]),
    "not a list": lambda d: d.update(discussions={"a": 1}),
    "an item not an object": lambda d: d["discussions"].append(5),
    "no discussions": lambda d: d.pop("discussions"),
}


def _bad_date(doc: dict) -> dict:
    entry = copy.deepcopy(doc["discussions"][0])
    entry["date"] = "2025-02-30"
    return entry


@pytest.mark.parametrize("spoil", SPOILERS.values(), ids=SPOILERS.keys())
def test_a_file_is_refused_with_the_problems_its_parsed_data_gets(
    tmp_path, admin_user, export_doc, spoil
):
    spoil(export_doc)
    options = {"by": admin_user}
    parsed = _problems(lambda: discussions_import(data=copy.deepcopy(export_doc), **options))
    assert _from_file(export_doc, tmp_path, **options) == parsed
    assert Discussion.objects.count() == 0


def test_many_problems_are_one_line_each_with_a_count_and_where(tmp_path, admin_user, export_doc):
    problems = _from_file(_many_bad(export_doc), tmp_path, by=admin_user)
    assert len(problems) < 10
    text = next(p for p in problems if p.startswith("discussions[].statements[].text"))
    assert "missing or not a string — " in text and " times, first at discussions[0]" in text


def test_a_file_is_imported_from_tiny_chunks(tmp_path, admin_user):
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"discussions": [discussion_file(f"d{i}") for i in range(4)]}))
    summary = transfer.discussions_import_file(
        open_file=lambda: path.open("rb"), by=admin_user, chunk_size=3
    )
    assert (summary.discussions_created, summary.approved_created) == (4, 4)
    assert Feedback.objects.approved().count() == 4


def test_an_export_is_read_once_checked_and_written_as_it_goes(admin_user):
    opened = []

    def open_file():
        data = json.dumps({"discussions": [discussion_file(f"d{i}") for i in range(3)]})
        opened.append(io.BytesIO(data.encode()))
        return opened[-1]

    summary = transfer.discussions_import_file(open_file=open_file, by=admin_user)
    assert (len(opened), summary.discussions_created) == (1, 3)


def test_a_case_list_that_changes_between_its_two_readings_imports_nothing(admin_user):
    """A case list is read twice (its discussions are named by the digest of all of it)."""
    case = {"statement_text": "checked", "gt_extraction": {"people": [{"id": -1, "name": "A"}]}}
    versions = iter(
        [json.dumps([case]).encode(), json.dumps([{**case, "statement_text": "swapped"}]).encode()]
    )
    with pytest.raises(PayloadError, match="the file changed while it was imported"):
        transfer.discussions_import_file(
            open_file=lambda: io.BytesIO(next(versions)), by=admin_user
        )
    assert Discussion.objects.count() == 0


def test_the_import_command_reads_many_discussions_and_prints_its_peak_memory(tmp_path, admin_user):
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"discussions": [discussion_file(f"d{i}") for i in range(3)]}))
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_discussions", str(path), "--by", admin_user.username, stdout=out, stderr=err
    )
    assert "3 discussions created" in out.getvalue()
    assert re.search(r"peak memory \d+ MB", err.getvalue())


def test_what_an_import_keeps_in_memory_does_not_grow_with_its_size(admin_user, monkeypatch):
    """Each touched statement once (not once for its extraction and again for its ground
    truth), and only the feedback ids the audit log names."""
    monkeypatch.setattr(transfer.ground_truth, "LOGGED_FEEDBACK_IDS", 2)
    data = {"discussions": [discussion_file(f"d{i}") for i in range(3)]}
    summary = discussions_import(by=admin_user, data=data)
    touched = Statement.objects.filter(extractions__isnull=False).order_by("pk")
    assert list(summary.touched_statement_ids) == list(touched.values_list("pk", flat=True))
    assert len(summary.touched_statement_ids) == 6 and summary.approved_created == 3
    first_two = list(Feedback.objects.order_by("pk").values_list("pk", flat=True)[:2])
    assert summary.imported_feedback_ids == first_two
    logged = AuditLogEntry.objects.get(object_type="import")
    assert logged.details["imported_feedback"] == first_two
