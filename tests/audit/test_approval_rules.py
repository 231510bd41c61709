"""Approval rules (issue 15 §3): explicit replacement, rejected and edited feedback, versions,
four eyes, self-approval in one-admin deployments. Service and API level."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from audit.models import AuditLogEntry, Feedback, FeedbackRevision
from audit.services import (
    NotAllowed,
    StaleVersion,
    WorkflowError,
    feedback_approve,
    feedback_bulk_approve,
    feedback_reject,
    feedback_save,
    feedback_start,
    feedback_submit,
    ground_truth_export,
)
from audit.services.feedback import AlreadyApproved, BulkRefused
from tests.api_fixtures import api, world  # noqa: F401 - fixtures
from tests.factories import ExtractionFactory, pdp, person

S = Feedback.Status
FEEDBACK = "/api/v1/feedback/"
pytestmark = pytest.mark.django_db


def submitted(statement, user, payload: dict | None = None) -> Feedback:
    feedback = feedback_start(statement=statement, auditor=user)
    if payload is not None:
        feedback = feedback_save(
            feedback=feedback, user=user, edited_extraction=payload, base_version=feedback.version
        )
    return feedback_submit(feedback=feedback, user=user)


def approved(statement, auditor, admin, payload: dict | None = None) -> Feedback:
    feedback = submitted(statement, auditor, payload)
    return feedback_approve(feedback=feedback, admin=admin, base_version=feedback.version)


@pytest.fixture
def second_admin(make_user):
    return make_user("dave", role="admin")


def statement():
    return ExtractionFactory().statement


# --- replacing approved ground truth ------------------------------------------------------------


def test_approving_over_approved_ground_truth_needs_replace(auditor, second_auditor, admin_user):
    s = statement()
    first = approved(s, auditor, admin_user)
    second = submitted(s, second_auditor)
    with pytest.raises(AlreadyApproved) as info:
        feedback_approve(feedback=second, admin=admin_user, base_version=second.version)
    assert info.value.status_code == 409
    assert "alice's coding" in str(info.value)
    assert Feedback.objects.get(pk=first.pk).status == S.APPROVED
    assert Feedback.objects.get(pk=second.pk).status == S.SUBMITTED
    feedback_approve(feedback=second, admin=admin_user, base_version=second.version, replace=True)
    statuses = dict(Feedback.objects.values_list("pk", "status"))
    assert statuses == {first.pk: S.SUBMITTED, second.pk: S.APPROVED}


def test_api_replace_flag(api, admin_user, second_auditor, world):  # noqa: F811
    feedback_approve(feedback=world.mine, admin=admin_user, base_version=world.mine.version)
    theirs = feedback_submit(feedback=world.theirs, user=second_auditor)
    client = api(admin_user)
    refused = client.post(
        f"{FEEDBACK}{theirs.pk}/approve/", {"version": theirs.version}, format="json"
    )
    assert refused.status_code == 409
    assert '"replace": true' in refused.json()["detail"]
    body = {"version": theirs.version, "replace": True}
    response = client.post(f"{FEEDBACK}{theirs.pk}/approve/", body, format="json")
    assert response.status_code == 200 and response.json()["status"] == "approved"


def test_concurrent_approvals_of_different_feedbacks_say_another_was_approved(
    auditor, second_auditor, admin_user, second_admin
):
    """Two admins approve two codings of one statement at once: one wins, the other is told
    another feedback was approved (not that it edited an old version)."""
    if connection.vendor != "postgresql":  # the served SQLite file waits (timeout=20) instead
        pytest.skip("the in-memory SQLite test database refuses a second writer at once")
    s = statement()
    a, b = submitted(s, auditor), submitted(s, second_auditor)
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def run(name, feedback, admin):
        try:
            barrier.wait()
            feedback_approve(feedback=feedback, admin=admin, base_version=feedback.version)
            results[name] = "approved"
        except WorkflowError as exc:
            results[name] = exc
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=("a", a, admin_user)),
        threading.Thread(target=run, args=("b", b, second_admin)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    outcomes = sorted(results.values(), key=str)
    assert outcomes[-1] == "approved"
    loser = outcomes[0]
    assert isinstance(loser, AlreadyApproved), loser
    assert "Another feedback on this statement is approved" in str(loser)
    assert "you edited version" not in str(loser)
    assert Feedback.objects.filter(statement=s, status=S.APPROVED).count() == 1


concurrent = pytest.mark.django_db(transaction=True)
test_concurrent_approvals_of_different_feedbacks_say_another_was_approved = concurrent(
    test_concurrent_approvals_of_different_feedbacks_say_another_was_approved
)


# --- rejected, edited, versions -------------------------------------------------------------------


def test_rejected_feedback_cannot_be_approved_until_resubmitted(auditor, admin_user):
    feedback = submitted(statement(), auditor)
    feedback = feedback_reject(feedback=feedback, admin=admin_user, reason="check Mary")
    with pytest.raises(WorkflowError, match="until its auditor resubmits"):
        feedback_approve(feedback=feedback, admin=admin_user, base_version=feedback.version)
    feedback = feedback_submit(feedback=feedback, user=auditor)
    feedback = feedback_approve(feedback=feedback, admin=admin_user, base_version=feedback.version)
    assert feedback.status == S.APPROVED


def test_editing_a_submitted_feedback_returns_it_to_draft(auditor, admin_user):
    feedback = submitted(statement(), auditor)
    edited = feedback_save(
        feedback=feedback,
        user=auditor,
        edited_extraction=pdp(people=[person(-1, "Sneaky")]),
        base_version=feedback.version,
    )
    assert edited.status == S.DRAFT
    with pytest.raises(WorkflowError, match="Only submitted"):
        feedback_approve(feedback=edited, admin=admin_user, base_version=edited.version)


def test_approving_a_stale_version_is_409_and_approves_nothing(api, auditor, admin_user, world):  # noqa: F811
    reviewed = world.mine.version
    edited = feedback_save(
        feedback=world.mine, user=auditor, edited_extraction=pdp(), base_version=reviewed
    )
    feedback_submit(feedback=edited, user=auditor)
    response = api(admin_user).post(
        f"{FEEDBACK}{world.mine.pk}/approve/", {"version": reviewed}, format="json"
    )
    assert response.status_code == 409
    assert Feedback.objects.get(pk=world.mine.pk).status == S.SUBMITTED


def test_approve_without_a_version_is_400(api, admin_user, world):  # noqa: F811
    response = api(admin_user).post(f"{FEEDBACK}{world.mine.pk}/approve/", {}, format="json")
    assert response.status_code == 400
    assert "version" in response.json()["detail"]
    assert Feedback.objects.get(pk=world.mine.pk).status == S.SUBMITTED


def test_bulk_approve_is_all_or_nothing_and_names_the_stale_ones(auditor, admin_user):
    first, second = statement(), None
    second = ExtractionFactory(statement__discussion=first.discussion, statement__order=5).statement
    a, b = submitted(first, auditor), submitted(second, auditor)
    reviewed = {a.pk: a.version, b.pk: b.version}
    b = feedback_save(feedback=b, user=auditor, edited_extraction=pdp(), base_version=b.version)
    feedback_submit(feedback=b, user=auditor)
    with pytest.raises(BulkRefused) as info:
        feedback_bulk_approve(
            discussion=first.discussion, auditor=auditor, admin=admin_user, versions=reviewed
        )
    assert info.value.status_code == 409
    assert f"feedback {b.pk}" in str(info.value) and f"feedback {a.pk}" not in str(info.value)
    assert not Feedback.objects.filter(status=S.APPROVED).exists()


def test_api_bulk_approve_names_versions(api, auditor, admin_user, world):  # noqa: F811
    body = {
        "discussion": world.discussion.pk,
        "auditor": auditor.pk,
        "items": [{"id": world.mine.pk, "version": world.mine.version}],
    }
    response = api(admin_user).post(f"{FEEDBACK}bulk-approve/", body, format="json")
    assert response.status_code == 200, response.json()
    assert [f["status"] for f in response.json()] == ["approved"]
    stale = {**body, "items": [{"id": world.mine.pk, "version": 1}]}
    assert api(admin_user).post(f"{FEEDBACK}bulk-approve/", stale, format="json").status_code == 409


# --- four eyes ------------------------------------------------------------------------------------


def test_an_admin_who_edits_a_submission_cannot_approve_it_alone(auditor, admin_user, second_admin):
    feedback = submitted(statement(), auditor)
    edited = feedback_save(
        feedback=feedback,
        user=admin_user,
        edited_extraction=pdp(people=[person(-1, "Fixed by Carol")]),
        base_version=feedback.version,
    )
    resubmitted = feedback_submit(feedback=edited, user=auditor)
    with pytest.raises(NotAllowed, match="Four eyes"):
        feedback_approve(feedback=resubmitted, admin=admin_user, base_version=resubmitted.version)
    done = feedback_approve(
        feedback=resubmitted, admin=second_admin, base_version=resubmitted.version
    )
    assert (done.status, done.approval) == (S.APPROVED, "reviewed")


def test_editing_approved_ground_truth_waits_for_another_admin(auditor, admin_user, second_admin):
    original = pdp(people=[person(-1, "Original")])
    feedback = approved(statement(), auditor, admin_user, original)
    changed = pdp(people=[person(-1, "Changed")])
    proposed = feedback_save(
        feedback=feedback, user=admin_user, edited_extraction=changed, base_version=feedback.version
    )
    stored = Feedback.objects.get(pk=feedback.pk)
    assert stored.status == S.APPROVED
    assert stored.edited_extraction["people"][0]["name"] == "Original"  # still the ground truth
    assert stored.proposed_extraction["people"][0]["name"] == "Changed"
    assert proposed.edited_extraction["people"][0]["name"] == "Changed"  # the editor's copy
    with pytest.raises(NotAllowed, match="Four eyes"):
        feedback_approve(feedback=stored, admin=admin_user, base_version=stored.version)
    done = feedback_approve(feedback=stored, admin=second_admin, base_version=stored.version)
    assert done.edited_extraction["people"][0]["name"] == "Changed"
    assert done.proposed_extraction is None and done.approved_by == second_admin
    assert Feedback.objects.filter(status=S.APPROVED).count() == 1


def test_rejecting_a_proposed_change_keeps_the_approved_version(auditor, admin_user, second_admin):
    feedback = approved(statement(), auditor, admin_user, pdp(people=[person(-1, "Kept")]))
    feedback_save(
        feedback=feedback,
        user=admin_user,
        edited_extraction=pdp(people=[person(-1, "Dropped")]),
        base_version=feedback.version,
    )
    stored = Feedback.objects.get(pk=feedback.pk)
    feedback_reject(feedback=stored, admin=second_admin, reason="no", base_version=stored.version)
    stored.refresh_from_db()
    assert stored.status == S.APPROVED and stored.proposed_extraction is None
    assert stored.edited_extraction["people"][0]["name"] == "Kept"


def test_only_admin_self_approves_with_a_reason_shown_in_history_and_export(admin_user):
    own = submitted(statement(), admin_user)
    with pytest.raises(NotAllowed, match="written reason"):
        feedback_approve(feedback=own, admin=admin_user, base_version=own.version)
    done = feedback_approve(
        feedback=own,
        admin=admin_user,
        base_version=own.version,
        self_approval_reason="sole admin of this pilot",
    )
    assert (done.approval, done.approval_reason) == ("self", "sole admin of this pilot")
    assert FeedbackRevision.objects.filter(feedback=done, action="self-approve").exists()
    entry = AuditLogEntry.objects.get(action="self_approve")
    assert "sole admin of this pilot" in entry.message and entry.actor == admin_user
    exported = ground_truth_export(all_discussions=True)
    gt = next(
        s["approved_feedback"]
        for s in exported["discussions"][0]["statements"]
        if s["approved_feedback"]
    )
    assert (gt["approval"], gt["approval_reason"]) == ("self", "sole admin of this pilot")


def test_self_approval_is_refused_when_another_admin_exists(admin_user, second_admin):
    own = submitted(statement(), admin_user)
    with pytest.raises(NotAllowed, match="another admin must approve"):
        feedback_approve(
            feedback=own, admin=admin_user, base_version=own.version, self_approval_reason="hurry"
        )


def test_stale_version_message_still_names_the_versions(auditor, admin_user):
    feedback = submitted(statement(), auditor)
    with pytest.raises(StaleVersion, match="you edited version 1"):
        feedback_approve(feedback=feedback, admin=admin_user, base_version=1)


def test_the_editor_edits_approved_ground_truth_as_a_proposal(client, auditor, admin_user):
    """Through the JSON editor: the approved content stays, the editor shows the change."""
    import json

    from django.urls import reverse

    from tests.audit.test_views_support import hx_post, make_scene

    scene = make_scene()
    feedback = approved(scene.first, auditor, admin_user)
    client.force_login(admin_user)
    changed = dict(feedback.edited_extraction, people=feedback.edited_extraction["people"][:1])
    url = reverse("audit:feedback_json", args=[feedback.pk])
    body = {"payload": json.dumps(changed), "version": feedback.version}
    assert hx_post(client, url, body).status_code == 200
    stored = Feedback.objects.get(pk=feedback.pk)
    assert len(stored.edited_extraction["people"]) == 2  # still the ground truth
    assert len(stored.proposed_extraction["people"]) == 1
    editor = client.get(reverse("audit:feedback_edit", args=[feedback.pk])).content.decode()
    assert "people-1-name" not in editor  # the editor continues from the proposal
    review = client.get(reverse("audit:statement_review", args=[scene.first.pk])).content
    assert b"Proposed change by carol" in review
    assert b"Approve my own change" in review  # carol is the only admin, and its author


def test_history_shows_a_self_approval_with_its_reason(client, admin_user):
    from django.urls import reverse

    own = submitted(statement(), admin_user)
    feedback_approve(
        feedback=own, admin=admin_user, base_version=own.version, self_approval_reason="pilot"
    )
    client.force_login(admin_user)
    html = client.get(reverse("audit:feedback_history", args=[own.pk])).content.decode()
    assert "Self-approved by carol (only admin): pilot" in html
    assert "self-approve" in html
