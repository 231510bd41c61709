import copy
import json
from datetime import UTC, datetime
from unittest import mock

import jsonschema
import pytest
from django.core.management import CommandError, call_command

from audit.models import Discussion, Extraction, Feedback, Statement
from audit.schemas import GROUND_TRUTH_EXPORT_SCHEMA, PayloadError
from audit.services import discussions_import, ground_truth_export, transfer
from audit.services.transfer import NothingToExport
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
    assert Discussion.objects.count() == 0


def test_export_round_trips_through_import(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    exported = ground_truth_export(all_discussions=True)
    jsonschema.validate(exported, GROUND_TRUTH_EXPORT_SCHEMA)
    # Into an empty database, the export rebuilds the same ground truth.
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
        mock.patch.object(transfer, "EXPORT_CHUNK", 1),  # several rounds of queries
        mock.patch.object(transfer.timezone, "now", return_value=now),
    ):
        exported = ground_truth_export(all_discussions=True)
        pieces = list(transfer.ground_truth_export_text(all_discussions=True))
    whole = json.dumps(exported, indent=2, ensure_ascii=False)
    assert "".join(pieces) == whole + "\n"
    assert len(pieces) == 2 + 2  # header, one per discussion, the end


def test_the_export_text_refuses_before_writing_anything(admin_user):
    discussions_import(by=admin_user, data=discussion_file())
    Feedback.objects.update(status=Feedback.Status.SUBMITTED)
    with pytest.raises(NothingToExport):
        transfer.ground_truth_export_text(all_discussions=True)


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
