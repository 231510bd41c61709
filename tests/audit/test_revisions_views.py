"""Nothing lost, nobody overwritten: lost updates, conflict revisions, history and restore."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback, FeedbackRevision
from audit.services import feedback_save, feedback_start
from tests.audit.test_views_support import (
    HX,
    as_post,
    editor_fields,
    hx_get,
    hx_post,
    make_scene,
    set_field,
)

pytestmark = pytest.mark.django_db

PERSON_JSON = '{"people": [{"id": 1, "name": "Zoe"}]}'


@pytest.fixture
def feedback(auditor):
    return feedback_start(statement=make_scene().first, auditor=auditor)


def save_url(feedback) -> str:
    return reverse("audit:feedback_save", args=[feedback.pk])


def test_a_save_based_on_an_old_version_is_refused_and_both_versions_are_kept(
    client, auditor, admin_user, feedback
):
    """Two editors open version 1; the admin saves first, the auditor's save must not win."""
    client.force_login(auditor)
    auditor_form = editor_fields(client, feedback)
    client.force_login(admin_user)
    admin_form = set_field(editor_fields(client, feedback), "people-0-name", "Johann")
    assert hx_post(client, save_url(feedback), as_post(admin_form)).status_code == 200

    client.force_login(auditor)
    mine = set_field(auditor_form, "people-0-name", "Jonathan")
    response = hx_post(client, save_url(feedback), as_post(mine))

    assert response.status_code == 409
    assert response["HX-Retarget"] == f"#save-status-{feedback.pk}"
    html = response.content.decode()
    assert "carol saved version 2 while you were editing" in html
    assert "audit:conflict" in response["HX-Trigger"]
    feedback.refresh_from_db()
    assert feedback.edited_extraction["people"][0]["name"] == "Johann"  # not overwritten
    conflict = feedback.revisions.get(action="conflict")
    assert conflict.author == auditor
    assert conflict.after["people"][0]["name"] == "Jonathan"  # nothing lost
    assert conflict.before["people"][0]["name"] == "Johann"


def test_the_same_user_in_two_tabs_is_protected_too(auditor_client, feedback):
    first_tab = editor_fields(auditor_client, feedback)
    second_tab = editor_fields(auditor_client, feedback)
    ok = hx_post(
        auditor_client, save_url(feedback), as_post(set_field(first_tab, "people-0-name", "A"))
    )
    assert ok.status_code == 200
    stale = hx_post(
        auditor_client, save_url(feedback), as_post(set_field(second_tab, "people-1-name", "B"))
    )
    assert stale.status_code == 409
    assert Feedback.objects.get().edited_extraction["people"][1]["name"] == "Mary"


def test_a_stale_raw_json_save_is_refused_as_well(auditor_client, auditor, feedback):
    feedback_save(feedback=feedback, user=auditor, edited_extraction={}, base_version=1)
    url = reverse("audit:feedback_json", args=[feedback.pk])
    response = hx_post(auditor_client, url, {"payload": PERSON_JSON, "version": 1})
    assert response.status_code == 409
    assert FeedbackRevision.objects.filter(action="conflict").count() == 1


def test_history_lists_every_revision_with_its_change(auditor_client, auditor, feedback):
    payload = feedback.edited_extraction
    payload["people"] = payload["people"][:1]
    feedback_save(feedback=feedback, user=auditor, edited_extraction=payload, base_version=1)
    response = auditor_client.get(reverse("audit:feedback_history", args=[feedback.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert "−1 person" in html  # v2 removed Mary
    assert html.count("Restore</button>") == 1  # v1; v2 is the current payload
    partial = hx_get(auditor_client, reverse("audit:feedback_history", args=[feedback.pk]))
    assert "<html" not in partial.content.decode()
    assert 'id="history"' in partial.content.decode()


def test_restoring_a_revision_makes_it_current_as_a_new_version(auditor_client, auditor, feedback):
    original = feedback.revisions.get(action="start")
    feedback = feedback_save(
        feedback=feedback, user=auditor, edited_extraction={"people": []}, base_version=1
    )
    url = reverse("audit:feedback_restore", args=[feedback.pk, original.pk])
    response = hx_post(auditor_client, url, {"version": feedback.version})
    assert response.status_code == 200
    assert "Restored revision v1 as version 3" in response.content.decode()
    feedback.refresh_from_db()
    assert feedback.version == 3
    assert feedback.edited_extraction == original.after
    latest = feedback.revisions.order_by("-version").first()
    assert (latest.action, latest.before) == (
        "restore",
        {"people": [], "events": [], "pair_bonds": [], "delete": []},
    )
    assert latest.restored_from == original


def test_a_conflicting_edit_can_be_restored_from_history(
    auditor_client, auditor, admin_user, feedback
):
    stale_form = set_field(editor_fields(auditor_client, feedback), "people-0-name", "Mine")
    feedback_save(
        feedback=feedback, user=admin_user,
        edited_extraction={**feedback.edited_extraction, "pair_bonds": []}, base_version=1,
    )  # fmt: skip
    assert hx_post(auditor_client, save_url(feedback), as_post(stale_form)).status_code == 409
    conflict = FeedbackRevision.objects.get(action="conflict")
    history = auditor_client.get(reverse("audit:feedback_history", args=[feedback.pk]))
    assert "kept here but not applied" in history.content.decode()
    url = reverse("audit:feedback_restore", args=[feedback.pk, conflict.pk])
    assert hx_post(auditor_client, url, {"version": 2}).status_code == 200
    assert Feedback.objects.get().edited_extraction["people"][0]["name"] == "Mine"


def test_restore_based_on_an_old_version_is_refused(auditor_client, auditor, feedback):
    original = feedback.revisions.get()
    feedback_save(feedback=feedback, user=auditor, edited_extraction={}, base_version=1)
    url = reverse("audit:feedback_restore", args=[feedback.pk, original.pk])
    response = hx_post(auditor_client, url, {"version": 1})
    assert response.status_code == 409
    assert response["HX-Retarget"] == "#history-msg"
    assert Feedback.objects.get().version == 2


def test_a_revision_of_another_feedback_cannot_be_restored(auditor_client, auditor, feedback):
    other = feedback_start(statement=make_scene("Other").first, auditor=auditor)
    foreign = other.revisions.get()
    url = reverse("audit:feedback_restore", args=[feedback.pk, foreign.pk])
    assert auditor_client.post(url, {"version": 1}, **HX).status_code == 404


def test_restore_without_javascript_redirects_to_the_history(auditor_client, auditor, feedback):
    original = feedback.revisions.get()
    feedback_save(feedback=feedback, user=auditor, edited_extraction={}, base_version=1)
    url = reverse("audit:feedback_restore", args=[feedback.pk, original.pk])
    response = auditor_client.post(url, {"version": 2})
    assert response.status_code == 302
    assert response.url == reverse("audit:feedback_history", args=[feedback.pk])


def test_recording_the_same_losing_edit_twice_keeps_one_conflict_revision(auditor, feedback):
    from audit.services import feedback_record_conflict

    attempted = {"people": [{"id": 1, "name": "Zoe"}]}
    first = feedback_record_conflict(feedback=feedback, user=auditor, attempted=attempted)
    again = feedback_record_conflict(feedback=feedback, user=auditor, attempted=attempted)
    assert first == again
    assert (first.action, first.version, first.after["people"][0]["name"]) == ("conflict", 1, "Zoe")
    assert Feedback.objects.get().edited_extraction["people"][0]["name"] == "John"  # untouched


def test_only_the_owner_or_an_admin_can_record_a_conflict(second_auditor, feedback):
    from audit.services import NotAllowed, feedback_record_conflict

    with pytest.raises(NotAllowed):
        feedback_record_conflict(feedback=feedback, user=second_auditor, attempted={})
