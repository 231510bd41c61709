"""History a reviewer can read (issue 15 §5): autosaves fold into one revision, each revision
lists its field-level changes, a restore names its revision, and the REST API has both."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.display import FieldChange, field_changes
from audit.models import FeedbackRevision
from audit.services import (
    feedback_approve,
    feedback_record_conflict,
    feedback_reject,
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from tests.audit.test_views_support import make_scene
from tests.factories import SIMPLE_PDP

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]


@pytest.fixture
def feedback(auditor):
    return feedback_start(statement=make_scene().first, auditor=auditor)


def autosave(feedback, user, change) -> object:
    payload = copy.deepcopy(feedback.edited_extraction)
    change(payload)
    return feedback_save(
        feedback=feedback, user=user, edited_extraction=payload, base_version=feedback.version
    )


def rename(name: str):
    def change(payload: dict) -> None:
        payload["people"][0]["name"] = name

    return change


def actions(feedback) -> list[str]:
    return list(feedback.revisions.order_by("id").values_list("action", flat=True))


# --- folding ------------------------------------------------------------------------------------


def test_a_coding_session_of_autosaves_is_one_revision(auditor, feedback):
    """The reproduction: 21 autosaves made 21 revisions reading "~1 event"."""
    for n in range(21):
        feedback = autosave(feedback, auditor, rename(f"John {n}"))
    assert feedback.version == 22
    assert actions(feedback) == ["start", "edit"]
    edit = feedback.revisions.get(action="edit")
    assert (edit.first_version, edit.version, edit.saves, edit.label) == (2, 22, 21, "v2–v22")
    assert edit.before["people"][0]["name"] == "John"  # before the session
    assert edit.after["people"][0]["name"] == "John 20"  # after it


def test_a_pause_longer_than_the_setting_starts_a_new_revision(auditor, feedback, settings):
    settings.REVISION_FOLD_SECONDS = 300
    feedback = autosave(feedback, auditor, rename("A"))
    FeedbackRevision.objects.filter(action="edit").update(
        updated_at=timezone.now() - timedelta(seconds=301)
    )
    feedback = autosave(feedback, auditor, rename("B"))
    assert actions(feedback) == ["start", "edit", "edit"]
    settings.REVISION_FOLD_SECONDS = 0  # 0 turns folding off
    autosave(feedback, auditor, rename("C"))
    assert actions(feedback) == ["start", "edit", "edit", "edit"]


def test_another_person_starts_a_new_revision(auditor, admin_user, feedback):
    feedback = autosave(feedback, auditor, rename("A"))
    feedback = autosave(feedback, admin_user, rename("B"))
    feedback = autosave(feedback, admin_user, rename("C"))
    revisions = list(feedback.revisions.order_by("id"))
    assert [(r.action, r.author, r.saves) for r in revisions] == [
        ("start", auditor, 1),
        ("edit", auditor, 1),
        ("edit", admin_user, 2),
    ]


def test_submit_reject_conflict_restore_and_approve_each_start_a_new_revision(
    auditor, admin_user, feedback
):
    start = feedback.revisions.get()
    feedback = autosave(feedback, auditor, rename("A"))
    feedback = feedback_submit(feedback=feedback, user=auditor)
    feedback = feedback_reject(feedback=feedback, admin=admin_user, reason="Check the names")
    feedback = autosave(feedback, auditor, rename("B"))  # after a rejection: a new revision
    feedback = autosave(feedback, auditor, rename("C"))  # folds into it
    feedback_record_conflict(feedback=feedback, user=auditor, attempted={"people": []})
    feedback = autosave(feedback, auditor, rename("D"))  # after the conflict: a new one
    feedback = feedback_restore(
        feedback=feedback, revision=start, user=auditor, base_version=feedback.version
    )
    feedback = autosave(feedback, auditor, rename("E"))  # never folds into a restore
    feedback = feedback_submit(feedback=feedback, user=auditor)
    feedback = feedback_approve(feedback=feedback, admin=admin_user)
    assert actions(feedback) == [
        "start", "edit", "submit", "reject", "edit", "conflict", "edit", "restore", "edit",
        "submit", "approve",
    ]  # fmt: skip
    assert feedback.revisions.get(action="conflict").version == 6  # recorded, not folded over


# --- field-level changes (pure) -----------------------------------------------------------------


def test_field_changes_name_item_field_old_and_new():
    before = copy.deepcopy(SIMPLE_PDP)
    after = copy.deepcopy(SIMPLE_PDP)
    after["people"][0]["name"] = "Jonathan"
    after["people"][1]["confidence"] = 1.0
    after["events"][0]["spouse"] = -5
    after["people"].append({"id": -5, "name": "Rose", "gender": "female"})
    after["pair_bonds"] = []
    after["delete"] = [7]
    changes = field_changes(before, after)
    assert (
        FieldChange(
            "people", -1, "Person Jonathan Smith (#-1)", "name", "John", "Jonathan", "changed"
        )
        in changes
    )
    assert (
        FieldChange("people", -2, "Person Mary Smith (#-2)", "confidence", "0.8", "1", "changed")
        in changes
    )
    # references are named, not numbered
    assert (
        FieldChange("events", -3, "Event Married (#-3)", "spouse", "Mary Smith", "Rose", "changed")
        in changes
    )
    added = [(c.field, c.old, c.new) for c in changes if c.change == "added" and c.item_id == -5]
    assert added == [("gender", "—", "female"), ("name", "—", "Rose")]
    removed = {(c.field, c.old, c.new) for c in changes if c.kind == "pair_bonds"}
    assert ("married", "yes", "—") in removed and ("person_a", "Jonathan Smith", "—") in removed
    assert all(c.change == "removed" for c in changes if c.kind == "pair_bonds")
    assert (
        FieldChange("delete", 7, "an item of the family diagram", "delete", "", "deleted", "added")
        in changes
    )
    assert field_changes(before, copy.deepcopy(before)) == []


def test_field_changes_of_a_first_payload_list_every_filled_field():
    changes = field_changes(None, {"people": [{"id": 1, "name": "Ann", "last_name": None}]})
    assert [(c.item, c.field, c.new, c.change) for c in changes] == [
        ("Person Ann (#1)", "name", "Ann", "added")
    ]


# --- the history page ---------------------------------------------------------------------------


def test_history_page_shows_field_changes_and_where_a_restore_came_from(
    auditor_client, auditor, feedback
):
    start = feedback.revisions.get()
    for name in ("Jo", "Jon", "Jonathan"):
        feedback = autosave(feedback, auditor, rename(name))
    feedback = feedback_restore(
        feedback=feedback, revision=start, user=auditor, base_version=feedback.version
    )
    html = auditor_client.get(reverse("audit:feedback_history", args=[feedback.pk])).content
    html = html.decode()
    assert html.count('class="rev rev-edit') == 1 and "3 autosaves" in html
    assert "v2–v4" in html
    assert (
        '<span class="field">name</span> <s class="old">John</s> → '
        '<span class="new">Jonathan</span>'
    ) in html
    assert 'data-testid="restored-from"' in html
    assert f'Restored from <a href="#rev-{start.pk}">revision v1</a> (start by alice)' in html
    assert "Open whole JSON" in html


# --- the REST API -------------------------------------------------------------------------------


def revisions_url(feedback) -> str:
    return f"/api/v1/feedback/{feedback.pk}/revisions/"


def restore_url(feedback, revision) -> str:
    return f"/api/v1/feedback/{feedback.pk}/revisions/{revision.pk}/restore/"


def test_api_lists_revisions_with_field_changes(api, auditor, feedback):
    feedback = autosave(feedback, auditor, rename("Jo"))
    feedback = autosave(feedback, auditor, rename("Jonathan"))
    response = api(auditor).get(revisions_url(feedback))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    edit, start = body["results"]
    assert (edit["action"], edit["label"], edit["saves"], edit["first_version"]) == (
        "edit", "v2–v3", 2, 2,
    )  # fmt: skip
    assert edit["is_current"] and not start["is_current"]
    assert edit["changes"] == [
        {
            "kind": "people",
            "item_id": -1,
            "item": "Person Jonathan Smith (#-1)",
            "field": "name",
            "old": "John",
            "new": "Jonathan",
            "change": "changed",
        }
    ]
    assert edit["author_username"] == "alice" and edit["restored_from"] is None
    assert edit["after"]["people"][0]["name"] == "Jonathan"


def test_api_restore_checks_the_version_and_names_the_revision(api, auditor, feedback):
    start = feedback.revisions.get()
    feedback = autosave(feedback, auditor, rename("Jo"))
    client = api(auditor)
    stale = client.post(restore_url(feedback, start), {"version": 1}, format="json")
    assert stale.status_code == 409 and stale.json()["current_version"] == 2
    missing = client.post(restore_url(feedback, start), {}, format="json")
    assert missing.status_code == 400 and "version" in str(missing.json())
    response = client.post(restore_url(feedback, start), {"version": 2}, format="json")
    assert response.status_code == 200
    assert response.json()["version"] == 3
    assert response.json()["edited_extraction"]["people"][0]["name"] == "John"
    latest = client.get(revisions_url(feedback)).json()["results"][0]
    assert latest["action"] == "restore"
    assert latest["restored_from"] == {
        "id": start.pk, "version": 1, "label": "v1", "action": "start",
    }  # fmt: skip


def test_api_history_is_scoped_to_the_role(api, auditor, second_auditor, admin_user, feedback):
    start = feedback.revisions.get()
    assert api(second_auditor).get(revisions_url(feedback)).status_code == 404
    foreign = api(second_auditor).post(restore_url(feedback, start), {"version": 1}, format="json")
    assert foreign.status_code == 404
    assert api(admin_user).get(revisions_url(feedback)).json()["count"] == 1
    other = feedback_start(statement=make_scene("Other").first, auditor=second_auditor)
    wrong = api(admin_user).post(
        restore_url(feedback, other.revisions.get()), {"version": 1}, format="json"
    )
    assert wrong.status_code == 404  # a revision of another feedback
    assert api().get(revisions_url(feedback)).status_code == 401
