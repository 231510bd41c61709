"""API: feedback — own drafts, submit, approve/reject, optimistic locking (409)."""

import pytest

from audit.models import Feedback, FeedbackRevision
from tests.factories import SIMPLE_PDP, pdp

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

FEEDBACK = "/api/v1/feedback/"
EDIT = pdp(people=[{"id": -1, "name": "Johnny", "gender": "male"}])


def url(feedback, action: str = "") -> str:
    return f"{FEEDBACK}{feedback.pk}/" + (f"{action}/" if action else "")


# --- reading -----------------------------------------------------------------------------------


def test_auditor_lists_only_their_own_feedback(api, auditor, world):
    results = api(auditor).get(FEEDBACK).json()["results"]
    assert [f["id"] for f in results] == [world.mine.pk]
    assert results[0]["auditor_username"] == "alice"
    assert results[0]["discussion"] == world.discussion.pk


def test_admin_lists_all_feedback_with_filters(api, admin_user, auditor, world):
    client = api(admin_user)
    assert client.get(FEEDBACK).json()["count"] == 2
    assert [f["id"] for f in client.get(FEEDBACK, {"status": "draft"}).json()["results"]] == [
        world.theirs.pk
    ]
    assert client.get(FEEDBACK, {"auditor": auditor.pk}).json()["count"] == 1
    assert client.get(FEEDBACK, {"discussion": world.other_discussion.pk}).json()["count"] == 0
    assert client.get(FEEDBACK, {"statement": world.subject.pk}).json()["count"] == 2
    assert client.get(FEEDBACK, {"run": world.run.pk}).json()["count"] == 2
    bad = client.get(FEEDBACK, {"status": "done"})
    assert bad.status_code == 400
    assert '"done" is not a valid choice' in bad.json()["detail"]


def test_feedback_list_is_paginated(api, admin_user, world):
    page = api(admin_user).get(FEEDBACK, {"page_size": 1}).json()
    assert page["count"] == 2 and len(page["results"]) == 1 and page["next"]


def test_auditor_cannot_see_another_auditors_feedback(api, auditor, world):
    assert api(auditor).get(url(world.theirs)).status_code == 404
    assert api(auditor).get(url(world.mine)).status_code == 200


# --- starting and editing ------------------------------------------------------------------------


def test_start_feedback_copies_the_ai_extraction(api, auditor, world):
    response = api(auditor).post(FEEDBACK, {"statement": world.subject2.pk}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "draft" and body["version"] == 1
    assert body["edited_extraction"]["people"][0]["name"] == SIMPLE_PDP["people"][0]["name"]
    again = api(auditor).post(FEEDBACK, {"statement": world.subject2.pk}, format="json")
    assert again.status_code == 200 and again.json()["id"] == body["id"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "statement: This field is required."),
        ({"statement": "12"}, "statement: A JSON integer is required."),
        ({"statement": None}, "statement: This field may not be null."),
    ],
)
def test_start_feedback_bad_input(api, auditor, world, body, message):
    response = api(auditor).post(FEEDBACK, body, format="json")
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_start_feedback_on_an_unknown_statement_is_404(api, auditor, world):
    response = api(auditor).post(FEEDBACK, {"statement": 999999}, format="json")
    assert response.status_code == 404
    assert response.json()["errors"] == ["statement: No statement 999999."]


def test_start_feedback_on_expert_statement_is_refused(api, auditor, world):
    response = api(auditor).post(FEEDBACK, {"statement": world.expert.pk}, format="json")
    assert response.status_code == 409
    assert "Only subject statements" in response.json()["detail"]


def test_save_own_draft_bumps_version(api, second_auditor, world):
    response = api(second_auditor).put(
        url(world.theirs), {"version": 1, "edited_extraction": EDIT, "comment": "ok"}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["version"] == 2
    assert body["edited_extraction"]["people"][0]["name"] == "Johnny"
    assert body["comment"] == "ok"


def test_stale_version_gets_409_with_current_version_and_stores_nothing(api, second_auditor, world):
    client = api(second_auditor)
    assert client.put(url(world.theirs), {"version": 1, "edited_extraction": EDIT}, format="json")
    revisions = FeedbackRevision.objects.filter(feedback=world.theirs).count()
    stale = client.put(url(world.theirs), {"version": 1, "edited_extraction": pdp()}, format="json")
    assert stale.status_code == 409
    body = stale.json()
    assert body["current_version"] == 2
    assert "version 1" in body["detail"]
    world.theirs.refresh_from_db()
    assert world.theirs.edited_extraction["people"][0]["name"] == "Johnny"
    assert FeedbackRevision.objects.filter(feedback=world.theirs).count() == revisions


def test_invalid_payload_names_the_field(api, second_auditor, world):
    bad = {"people": [], "events": [{"id": 1, "kind": "party"}]}
    response = api(second_auditor).put(
        url(world.theirs), {"version": 1, "edited_extraction": bad}, format="json"
    )
    assert response.status_code == 400
    assert "events[0].kind: 'party' is not one of" in response.json()["errors"][0]
    world.theirs.refresh_from_db()
    assert world.theirs.version == 1


def test_save_requires_version_and_payload(api, second_auditor, world):
    response = api(second_auditor).put(url(world.theirs), {}, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {
        "version: This field is required.",
        "edited_extraction: This field is required.",
    }


def test_auditor_cannot_edit_another_auditors_feedback(api, auditor, world):
    response = api(auditor).put(
        url(world.theirs), {"version": 1, "edited_extraction": EDIT}, format="json"
    )
    assert response.status_code == 404
    world.theirs.refresh_from_db()
    assert world.theirs.version == 1


def test_admin_can_edit_anyones_feedback(api, admin_user, world):
    response = api(admin_user).put(
        url(world.theirs), {"version": 1, "edited_extraction": EDIT}, format="json"
    )
    assert response.status_code == 200


# --- workflow ----------------------------------------------------------------------------------


def test_submit_own_draft(api, second_auditor, world):
    response = api(second_auditor).post(url(world.theirs, "submit"), {"version": 1}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "submitted"
    # A repeated submit (a retry, a double press) gets the first one's answer, changing nothing.
    again = api(second_auditor).post(url(world.theirs, "submit"), {"version": 1}, format="json")
    assert again.status_code == 200
    assert (again.json()["status"], again.json()["version"]) == ("submitted", 2)
    assert world.theirs.revisions.filter(action="submit").count() == 1


def test_a_submit_based_on_a_version_before_the_submitted_one_is_409(api, second_auditor, world):
    client = api(second_auditor)
    client.put(url(world.theirs), {"version": 1, "edited_extraction": EDIT}, format="json")
    assert (
        client.post(url(world.theirs, "submit"), {"version": 2}, format="json").status_code == 200
    )
    stale = client.post(url(world.theirs, "submit"), {"version": 1}, format="json")
    assert stale.status_code == 409
    assert stale.json()["current_version"] == 3


def test_an_unchanged_save_makes_no_new_version_whatever_its_base(api, second_auditor, world):
    client = api(second_auditor)
    first = client.put(url(world.theirs), {"version": 1, "edited_extraction": EDIT}, format="json")
    assert first.json()["version"] == 2
    again = client.put(url(world.theirs), {"version": 1, "edited_extraction": EDIT}, format="json")
    assert (again.status_code, again.json()["version"]) == (200, 2)
    assert world.theirs.revisions.count() == 2


def test_submit_with_stale_version_is_409(api, second_auditor, world):
    response = api(second_auditor).post(url(world.theirs, "submit"), {"version": 7}, format="json")
    assert response.status_code == 409
    assert response.json()["current_version"] == 1


def test_admin_submitting_someone_elses_feedback_is_403(api, admin_user, world):
    response = api(admin_user).post(url(world.theirs, "submit"), {}, format="json")
    assert response.status_code == 403
    assert "your own feedback" in response.json()["detail"]


def test_admin_approves_submitted_feedback(api, admin_user, world):
    response = api(admin_user).post(
        url(world.mine, "approve"), {"version": world.mine.version}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "approved"
    assert body["approved_by_username"] == "carol"
    assert body["approved_at"]


def test_approve_stale_version_is_409(api, admin_user, world):
    response = api(admin_user).post(url(world.mine, "approve"), {"version": 1}, format="json")
    assert response.status_code == 409
    assert response.json()["current_version"] == world.mine.version
    world.mine.refresh_from_db()
    assert world.mine.status == Feedback.Status.SUBMITTED


def test_approving_a_draft_is_409(api, admin_user, world):
    body = {"version": world.theirs.version}
    response = api(admin_user).post(url(world.theirs, "approve"), body, format="json")
    assert response.status_code == 409
    assert "Only submitted feedback" in response.json()["detail"]


def test_auditor_cannot_approve_or_reject(api, auditor, world):
    client = api(auditor)
    assert client.post(url(world.mine, "approve"), {}, format="json").status_code == 403
    assert client.post(url(world.mine, "reject"), {"reason": "x"}, format="json").status_code == 403
    world.mine.refresh_from_db()
    assert world.mine.status == Feedback.Status.SUBMITTED


def test_admin_cannot_approve_own_feedback(api, admin_user, world):
    own = api(admin_user).post(FEEDBACK, {"statement": world.subject2.pk}, format="json").json()
    submitted = api(admin_user).post(f"{FEEDBACK}{own['id']}/submit/", {}, format="json").json()
    body = {"version": submitted["version"]}
    response = api(admin_user).post(f"{FEEDBACK}{own['id']}/approve/", body, format="json")
    assert response.status_code == 403
    assert "your own feedback" in response.json()["detail"]


def test_admin_rejects_with_reason(api, admin_user, auditor, world):
    missing = api(admin_user).post(url(world.mine, "reject"), {}, format="json")
    assert missing.status_code == 400
    assert "reason: This field is required." in missing.json()["errors"]
    blank = api(admin_user).post(url(world.mine, "reject"), {"reason": "   "}, format="json")
    assert blank.status_code == 400
    response = api(admin_user).post(
        url(world.mine, "reject"), {"reason": "Missing the marriage."}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["status"] == "rejected"
    assert response.json()["rejection_reason"] == "Missing the marriage."
    # the auditor edits it again: back to draft
    edited = api(auditor).put(
        url(world.mine),
        {"version": response.json()["version"], "edited_extraction": EDIT},
        format="json",
    )
    assert edited.json()["status"] == "draft"


def test_a_date_the_metric_would_misread_stops_the_submit(api, second_auditor, world):
    payload = pdp(
        people=[{"id": -1, "name": "Ann"}],
        events=[{"id": -2, "kind": "shift", "person": -1, "dateTime": "ecember 1957"}],
    )
    client = api(second_auditor)
    saved = client.put(
        url(world.theirs), {"version": 1, "edited_extraction": payload}, format="json"
    )
    assert saved.status_code == 200  # a draft may keep a problem
    refused = client.post(url(world.theirs, "submit"), {"version": 2}, format="json")
    assert refused.status_code == 422
    assert "events[0].dateTime: 'ecember 1957' would count as the year 1957" in str(refused.json())
    assert Feedback.objects.get(pk=world.theirs.pk).status == Feedback.Status.DRAFT
