"""Imports never overwrite an auditor's work or forge approvals; the audit log records named acts
and admins can filter it (page and API)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from audit.models import AuditLogEntry, Discussion, Feedback, FeedbackRevision, history_purge
from audit.services import (
    NotAllowed,
    discussions_import,
    feedback_approve,
    feedback_reject,
    feedback_start,
    feedback_submit,
)
from audit.services.blind import blind_review_sample
from metrics.families.payload.schema import PayloadError
from tests.api_fixtures import api  # noqa: F401 - fixture
from tests.audit.test_transfer import GT, discussion_file

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = pytest.mark.django_db
Action = AuditLogEntry.Action


def test_import_never_overwrites_an_auditors_draft(auditor, admin_user):
    discussions_import(data=discussion_file(), by=admin_user)
    statement = Discussion.objects.get().statements.get(order=1)
    with history_purge():
        Feedback.objects.all().delete()  # the ground truth was unapproved and removed since
    draft = feedback_start(statement=statement, auditor=auditor)
    data = discussion_file()
    data["statements"][1]["approved_feedback"]["auditor_id"] = auditor.username
    data["statements"][1]["approved_feedback"]["approved_by"] = auditor.username
    discussions_import(data=data, by=admin_user)

    draft.refresh_from_db()
    assert draft.status == Feedback.Status.DRAFT and draft.version == 1
    assert draft.edited_extraction != GT
    imported = Feedback.objects.get(statement=statement, status=Feedback.Status.APPROVED)
    assert imported.pk != draft.pk and imported.auditor.username == "imported"
    assert (imported.approved_by, imported.approval) == (admin_user, "imported")
    assert imported.edited_extraction["people"][0]["name"] == "John"
    assert FeedbackRevision.objects.filter(feedback=imported, action="import").exists()


def test_imported_ground_truth_is_approved_by_the_importing_admin(admin_user):
    data = discussion_file()
    data["statements"][1]["approved_feedback"]["approved_by"] = "someone-else"
    discussions_import(data=data, by=admin_user)
    feedback = Feedback.objects.get()
    assert feedback.approved_by == admin_user and feedback.approval == "imported"
    assert "someone-else" in feedback.comment  # the file's claim is kept, not trusted


def test_import_keeps_approved_ground_truth_and_says_so(admin_user):
    discussions_import(data=discussion_file(), by=admin_user)
    summary = discussions_import(data=discussion_file(), by=admin_user)
    assert summary.approved_kept == 1 and "kept their approved ground truth" in summary.line()


def test_import_refuses_usernames_django_would_refuse(admin_user):
    data = discussion_file()
    data["statements"][1]["approved_feedback"]["auditor_id"] = "bad name!"
    with pytest.raises(PayloadError) as info:
        discussions_import(data=data, by=admin_user)
    assert any(
        "statements[1].approved_feedback.auditor_id: 'bad name!' is not a valid username" in m
        for m in info.value.messages()
    ), info.value.messages()
    assert Discussion.objects.count() == 0


def test_import_needs_an_admin(auditor):
    with pytest.raises(NotAllowed):
        discussions_import(data=discussion_file(), by=auditor)


def test_cli_import_needs_an_importing_admin(tmp_path, admin_user, auditor):
    source = tmp_path / "in.json"
    source.write_text(json.dumps(discussion_file()))
    with pytest.raises(CommandError, match="--by"):
        call_command("import_discussions", str(source))
    with pytest.raises(CommandError, match="no admin"):
        call_command("import_discussions", str(source), "--by", auditor.username)
    call_command("import_discussions", str(source), "--by", admin_user.username)
    assert Feedback.objects.get().approved_by == admin_user


def test_api_import_is_approved_by_the_caller(api, admin_user):  # noqa: F811
    from audit.services import ground_truth_export

    discussions_import(data=discussion_file(), by=admin_user)
    exported = ground_truth_export(all_discussions=True)
    with history_purge():
        Discussion.objects.all().delete()
        Feedback.objects.all().delete()
    response = api(admin_user).post("/api/v1/ground-truth/import", exported, format="json")
    assert response.status_code == 200, response.json()
    assert Feedback.objects.get().approved_by == admin_user
    assert AuditLogEntry.objects.filter(action=Action.IMPORT, actor=admin_user).count() == 2


# --- the audit log --------------------------------------------------------------------------------


@pytest.fixture
def logged(auditor, admin_user, make_user):
    """One of each: blind mark, approval, rejection, import."""
    discussions_import(data=discussion_file(), by=admin_user)
    discussion = Discussion.objects.get()
    blind_review_sample(discussion=discussion, size=1, seed=1, admin=admin_user)
    statement = discussion.statements.get(order=2)
    feedback = feedback_submit(
        feedback=feedback_start(statement=statement, auditor=auditor), user=auditor
    )
    feedback = feedback_reject(feedback=feedback, admin=admin_user, reason="check the date")
    feedback = feedback_submit(feedback=feedback, user=auditor)
    other_admin = make_user("dave", role="admin")
    feedback_approve(feedback=feedback, admin=other_admin, base_version=feedback.version)
    return feedback, other_admin


def test_acts_are_logged(logged):
    feedback, other_admin = logged
    actions = set(AuditLogEntry.objects.values_list("action", flat=True))
    assert {Action.IMPORT, Action.BLIND_MARK, Action.REJECT, Action.APPROVE} <= actions
    rejection = AuditLogEntry.objects.get(action=Action.REJECT)
    assert "check the date" in rejection.message
    approval = AuditLogEntry.objects.get(action=Action.APPROVE)
    assert (approval.actor, approval.object_type, approval.object_id) == (
        other_admin,
        "feedback",
        str(feedback.pk),
    )


def test_evaluation_uploads_are_logged(admin_user, media):
    from metrics.evaluations.services import evaluation_create
    from tests.metrics.test_evaluations_fixtures import example_files

    evaluation = evaluation_create(
        family="agreement",
        name="uploaded",
        files=example_files("agreement"),
        options={},
        user=admin_user,
        queue=False,
    )
    entry = AuditLogEntry.objects.get(action=Action.RUN_UPLOAD)
    assert entry.actor == admin_user and entry.object_id == str(evaluation.pk)
    assert "uploaded" in entry.message


def test_admins_filter_the_log_page(client, logged, admin_user):
    _, other_admin = logged
    client.force_login(admin_user)
    page = client.get(reverse("audit:audit_log"))
    assert page.status_code == 200 and "Audit log" in page.content.decode()
    filtered = client.get(
        reverse("audit:audit_log"), {"actor": other_admin.pk, "action": "approve"}
    )
    html = filtered.content.decode()
    assert "1 entry" in html and "Approved v" in html and "check the date" not in html
    by_object = client.get(reverse("audit:audit_log"), {"object_type": "import"})
    assert "Imported:" in by_object.content.decode()
    bad = client.get(reverse("audit:audit_log"), {"since": "2026-02-01", "until": "2026-01-01"})
    assert bad.status_code == 400 and "before the start date" in bad.content.decode()
    nav = client.get(reverse("home")).content.decode()
    assert reverse("audit:audit_log") in nav


def test_auditors_cannot_read_the_log(client, auditor, logged, api):  # noqa: F811
    client.force_login(auditor)
    assert client.get(reverse("audit:audit_log")).status_code == 403
    assert api(auditor).get("/api/v1/audit-log/").status_code == 403


def test_the_log_in_the_api_filters_by_who_what_when_and_object(api, logged, admin_user):  # noqa: F811
    feedback, _ = logged
    client = api(admin_user)
    everything = client.get("/api/v1/audit-log/").json()
    assert everything["count"] >= 4
    mine = client.get("/api/v1/audit-log/", {"actor": admin_user.pk}).json()["results"]
    assert {e["actor_name"] for e in mine} == {admin_user.username}
    one = client.get(
        "/api/v1/audit-log/", {"object_type": "feedback", "object_id": feedback.pk}
    ).json()["results"]
    assert {e["action"] for e in one} == {"reject", "approve"}
    future = client.get("/api/v1/audit-log/", {"since": "2999-01-01"}).json()
    assert future["count"] == 0
    assert client.get("/api/v1/audit-log/", {"action": "nonsense"}).status_code == 400
