"""Coding a statement in the browser: start, autosave, add/remove items, JSON, submit."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from django.urls import reverse

from audit.models import BlindReview, Feedback
from audit.services import feedback_start, feedback_submit
from tests.audit.test_views_support import (
    HX,
    as_post,
    editor_fields,
    form_fields,
    hx_post,
    make_scene,
    set_field,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    return make_scene()


@pytest.fixture
def feedback(scene, auditor):
    return feedback_start(statement=scene.first, auditor=auditor)


def save_url(feedback) -> str:
    return reverse("audit:feedback_save", args=[feedback.pk])


def test_start_coding_copies_the_ai_extraction_and_opens_the_editor(auditor_client, scene):
    response = hx_post(auditor_client, reverse("audit:feedback_start", args=[scene.first.pk]))
    assert response.status_code == 200
    feedback = Feedback.objects.get()
    assert feedback.edited_extraction["people"][0]["name"] == "John"
    assert feedback.source_extraction == scene.extraction
    html = response.content.decode()
    assert f'id="editor-form-{feedback.pk}"' in html
    assert "<html" not in html  # a fragment, not the page


def test_start_without_javascript_redirects_to_the_editor_page(auditor_client, scene):
    response = auditor_client.post(reverse("audit:feedback_start", args=[scene.first.pk]))
    feedback = Feedback.objects.get()
    assert response.status_code == 302
    assert response.url.startswith(reverse("audit:feedback_edit", args=[feedback.pk]))
    page = auditor_client.get(response.url)
    assert b"<html" in page.content and b"editor-form" in page.content


def test_starting_twice_reopens_my_draft(auditor_client, scene, feedback):
    hx_post(auditor_client, reverse("audit:feedback_start", args=[scene.first.pk]))
    assert Feedback.objects.count() == 1


def test_expert_statements_cannot_be_coded(auditor_client, scene):
    response = hx_post(auditor_client, reverse("audit:feedback_start", args=[scene.expert.pk]))
    assert response.status_code == 409
    assert response["HX-Retarget"] == f"#card-msg-{scene.expert.pk}"
    assert Feedback.objects.count() == 0


def test_blind_statements_start_empty_and_hide_the_ai(auditor_client, auditor, admin_user, scene):
    BlindReview.objects.create(statement=scene.first, marked_by=admin_user)
    response = hx_post(auditor_client, reverse("audit:feedback_start", args=[scene.first.pk]))
    assert Feedback.objects.get().edited_extraction["people"] == []
    html = response.content.decode()
    assert "Blind review" in html
    assert "Married in Boston" not in html


def test_an_unchanged_form_saves_nothing(auditor_client, feedback):
    """The editor's fields read back into exactly the stored payload."""
    fields = editor_fields(auditor_client, feedback)
    response = hx_post(auditor_client, save_url(feedback), as_post(fields))
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.version == 1
    assert feedback.revisions.count() == 1


def test_an_unchanged_form_on_an_older_version_is_no_conflict(auditor_client, auditor, feedback):
    """The last autosave of a form can arrive after its submit moved the version on."""
    fields = editor_fields(auditor_client, feedback)
    feedback_submit(feedback=feedback, user=auditor, base_version=feedback.version)
    feedback.refresh_from_db()
    assert feedback.version > int(dict(fields)["version"])
    response = hx_post(auditor_client, save_url(feedback), as_post(fields))
    assert response.status_code == 200
    assert not feedback.revisions.filter(action="conflict").exists()


def test_a_changed_form_on_an_older_version_is_still_a_conflict(auditor_client, auditor, feedback):
    fields = editor_fields(auditor_client, feedback)
    feedback_submit(feedback=feedback, user=auditor, base_version=feedback.version)
    response = hx_post(
        auditor_client, save_url(feedback), as_post(set_field(fields, "people-0-name", "Jon"))
    )
    assert response.status_code == 409
    assert feedback.revisions.filter(action="conflict").count() == 1


def test_a_repeated_submit_with_the_same_form_gets_the_same_answer(auditor_client, feedback):
    """htmx sends autosaves queued behind a submit with the submit button's op: one submit."""
    fields = [*editor_fields(auditor_client, feedback), ("op", "submit")]
    replies = [hx_post(auditor_client, save_url(feedback), as_post(fields)) for _ in range(3)]
    assert [r.status_code for r in replies] == [200, 200, 200]
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.SUBMITTED
    assert feedback.revisions.filter(action="submit").count() == 1
    changed = [*set_field(fields, "people-0-name", "Jon")]
    assert hx_post(auditor_client, save_url(feedback), as_post(changed)).status_code == 409


def test_autosave_stores_the_change_and_answers_with_the_new_version(auditor_client, feedback):
    fields = set_field(editor_fields(auditor_client, feedback), "people-0-name", "Jon")
    response = hx_post(auditor_client, save_url(feedback), as_post(fields))
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.version == 2
    assert feedback.edited_extraction["people"][0]["name"] == "Jon"
    html = response.content.decode()
    assert "Saved · v2" in html
    assert f'id="version-{feedback.pk}" name="version" value="2" hx-swap-oob="true"' in html
    revision = feedback.revisions.order_by("-version").first()
    assert revision.action == "edit"
    assert revision.before["people"][0]["name"] == "John"


def test_every_save_control_posts_to_the_codings_save_address(auditor_client, feedback):
    """The editor's buttons, and the remove questions a save answers with out of band."""
    target = f'hx-post="{save_url(feedback)}"'
    editor = auditor_client.get(reverse("audit:feedback_edit", args=[feedback.pk]))
    html = editor.content.decode()
    assert f'action="{save_url(feedback)}"' in html
    for op in ("add:people", "add:delete", "remove:people:-1", "remove_clear:people:-1"):
        assert all(target in tag for tag in _tags(html, f'value="{op}"')), op
    fields = set_field(editor_fields(auditor_client, feedback), "people-0-name", "Jon")
    saved = hx_post(auditor_client, save_url(feedback), as_post(fields)).content.decode()
    assert [target in tag for tag in _tags(saved, 'value="remove_clear:people:-1"')] == [True]


def _tags(html: str, marker: str) -> list[str]:
    """Every tag holding the marker, whole."""
    parts = html.split(marker)
    tags = [a[a.rindex("<") :] + marker + b[: b.index(">")] for a, b in pairwise(parts)]
    assert tags, marker
    return tags


def test_an_edited_item_gets_confidence_one_and_the_others_keep_theirs(auditor_client, feedback):
    fields = set_field(editor_fields(auditor_client, feedback), "events-0-dateTime", "June 1985")
    response = hx_post(auditor_client, save_url(feedback), as_post(fields))
    feedback.refresh_from_db()
    event = feedback.edited_extraction["events"][0]
    assert event["dateTime"] == "June 1985"
    assert event["confidence"] == 1.0
    assert feedback.edited_extraction["people"][0]["confidence"] == 0.9
    # The confidence shown next to the item is updated in place.
    assert f'id="conf-{feedback.pk}-events--3" hx-swap-oob="true">1.0<' in response.content.decode()


def test_select_lists_and_person_pickers_are_saved(auditor_client, feedback):
    fields = editor_fields(auditor_client, feedback)
    fields = set_field(fields, "events-0-kind", "separated")
    fields = set_field(fields, "events-0-symptom", "up")
    fields = set_field(fields, "events-0-person", "-2")
    fields = [f for f in fields if f[0] != "events-0-relationshipTargets"]
    fields += [("events-0-relationshipTargets", ""), ("events-0-relationshipTargets", "-1")]
    hx_post(auditor_client, save_url(feedback), as_post(fields))
    event = Feedback.objects.get().edited_extraction["events"][0]
    assert event["kind"] == "separated"
    assert event["symptom"] == "up"
    assert event["person"] == -2
    assert event["relationshipTargets"] == [-1]
    assert event["spouse"] == -2  # untouched fields keep their value


def test_an_invalid_value_is_refused_with_422_and_the_fields_named(auditor_client, feedback):
    fields = set_field(editor_fields(auditor_client, feedback), "events-0-kind", "party")
    fields = set_field(fields, "people-1-name", "Maria")
    response = hx_post(auditor_client, save_url(feedback), as_post(fields))
    assert response.status_code == 422
    assert response["HX-Retarget"] == f"#save-status-{feedback.pk}"
    assert response["HX-Reswap"] == "outerHTML"
    html = response.content.decode()
    assert "events[0].kind: &#x27;party&#x27; is not one of" in html
    assert 'data-fields="events-0-kind"' in html
    feedback.refresh_from_db()
    assert feedback.version == 1  # nothing saved, not even the valid part
    assert feedback.edited_extraction["people"][1]["name"] == "Mary"


def test_without_javascript_an_invalid_save_shows_the_form_again_as_typed(auditor_client, feedback):
    fields = set_field(editor_fields(auditor_client, feedback), "events-0-kind", "party")
    fields = set_field(fields, "people-1-name", "Maria")
    response = auditor_client.post(save_url(feedback), as_post(fields))
    assert response.status_code == 422
    html = response.content.decode()
    assert "<html" in html
    assert 'value="Maria"' in html  # the user's input is kept
    assert "is not one of" in html
    assert 'aria-invalid="true"' in html


def test_a_save_without_a_version_is_refused(auditor_client, feedback):
    fields = [f for f in editor_fields(auditor_client, feedback) if f[0] != "version"]
    fields = set_field(fields, "people-0-name", "Jon")
    response = hx_post(auditor_client, save_url(feedback), as_post(fields))
    assert response.status_code == 400
    assert Feedback.objects.get().version == 1


def test_adding_items_returns_the_editor_with_the_new_row(auditor_client, feedback):
    fields = editor_fields(auditor_client, feedback)
    response = hx_post(auditor_client, save_url(feedback), as_post(fields, op="add:people"))
    assert response.status_code == 200
    feedback.refresh_from_db()
    new = feedback.edited_extraction["people"][-1]
    assert new["id"] == -5  # below every id in use
    assert new["confidence"] == 1.0
    assert 'name="people-2-name"' in response.content.decode()

    fields = editor_fields(auditor_client, feedback)
    data = as_post(fields, op="add:pair_bonds")
    data["pair_bonds-new-person_a"], data["pair_bonds-new-person_b"] = ["-1"], ["-5"]
    hx_post(auditor_client, save_url(feedback), data)
    feedback.refresh_from_db()
    bond = feedback.edited_extraction["pair_bonds"][-1]
    assert (bond["person_a"], bond["person_b"]) == (-1, -5)


def test_removing_an_item(auditor_client, feedback):
    fields = editor_fields(auditor_client, feedback)
    hx_post(auditor_client, save_url(feedback), as_post(fields, op="remove:pair_bonds:-4"))
    feedback.refresh_from_db()
    assert feedback.edited_extraction["pair_bonds"] == []
    assert feedback.version == 2


def test_deletes_pick_items_of_earlier_statements(auditor_client, auditor, scene):
    feedback = feedback_start(statement=scene.second, auditor=auditor)
    fields = editor_fields(auditor_client, feedback)
    options = [v for n, v in fields if n == "delete-new"]
    assert options == [""]  # nothing chosen yet, but the earlier items are listed:
    html = auditor_client.get(reverse("audit:feedback_edit", args=[feedback.pk]), **HX)
    assert "person John Smith<" in html.content.decode()  # a name, no id
    data = as_post(fields, op="add:delete")
    data["delete-new"] = ["-4"]
    hx_post(auditor_client, save_url(feedback), data)
    feedback.refresh_from_db()
    assert feedback.edited_extraction["delete"] == [-4]


def test_person_pickers_list_people_of_earlier_statements(auditor_client, auditor, scene):
    feedback = feedback_start(statement=scene.second, auditor=auditor)
    html = auditor_client.get(reverse("audit:feedback_edit", args=[feedback.pk]), **HX)
    fields = form_fields(html.content.decode(), f"editor-form-{feedback.pk}")
    assert ("events-0-person", "-1") in fields
    assert ">John Smith</option>" in html.content.decode()  # a name, no id


def test_save_and_submit_in_one_step(auditor_client, feedback):
    fields = set_field(editor_fields(auditor_client, feedback), "people-0-name", "Jon")
    response = hx_post(auditor_client, save_url(feedback), as_post(fields, op="submit"))
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.SUBMITTED
    assert feedback.edited_extraction["people"][0]["name"] == "Jon"
    assert "editor-form" not in response.content.decode()  # back to the read-only card


def test_submit_from_the_card(auditor_client, feedback):
    url = reverse("audit:feedback_submit", args=[feedback.pk])
    response = hx_post(auditor_client, url, {"version": feedback.version})
    assert response.status_code == 200
    assert Feedback.objects.get().status == Feedback.Status.SUBMITTED
    assert "Submitted" in response.content.decode()
    # Pressed again (on the card now showing the submitted version): the same answer, no change.
    again = hx_post(auditor_client, url, {"version": feedback.version + 1})
    assert again.status_code == 200
    assert "Submitted" in again.content.decode()
    assert feedback.revisions.filter(action="submit").count() == 1
    assert Feedback.objects.get().version == feedback.version + 1


def test_submit_without_javascript_redirects_to_the_statement(auditor_client, feedback):
    url = reverse("audit:feedback_submit", args=[feedback.pk])
    response = auditor_client.post(url, {"version": feedback.version})
    assert response.status_code == 302
    assert response.url.endswith(f"#stmt-{feedback.statement_id}")


def test_raw_json_editor_saves_valid_json(auditor_client, feedback):
    payload = dict(feedback.edited_extraction)
    payload["people"] = payload["people"][:1]
    url = reverse("audit:feedback_json", args=[feedback.pk])
    response = hx_post(auditor_client, url, {"payload": json.dumps(payload), "version": 1})
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert len(feedback.edited_extraction["people"]) == 1
    assert feedback.version == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"people": [', "not valid JSON"),
        ('{"people": [{"id": "x"}]}', "The 1st person, id: expected integer"),
        (
            '{"people": [{"id": -1, "name": "Emily", "last_name": "Walker", "gender": 5}]}',
            "Emily Walker, gender: 5 is not one of: male",
        ),
        ('{"people": {}}', "people: expected array, got object {}"),
        ('{"colour": 1}', "unknown key"),
    ],
)
def test_raw_json_editor_refuses_invalid_payloads(auditor_client, feedback, text, message):
    url = reverse("audit:feedback_json", args=[feedback.pk])
    response = hx_post(auditor_client, url, {"payload": text, "version": 1})
    assert response.status_code == 422
    assert response["HX-Retarget"] == f"#json-status-{feedback.pk}"
    assert message in response.content.decode()
    assert Feedback.objects.get().version == 1


def test_the_json_editor_words_a_problem_by_the_item_it_sits_in(auditor_client, auditor, scene):
    """On the second statement an event of John (named in the first) with a number for a date:
    the problem names John's event and then where it is in the JSON, never the path alone."""
    second = feedback_start(statement=scene.second, auditor=auditor)
    payload = json.loads(json.dumps(second.edited_extraction))
    payload["events"][0].update(person=-1, dateTime=1990)
    url = reverse("audit:feedback_json", args=[second.pk])
    response = hx_post(auditor_client, url, {"payload": json.dumps(payload), "version": 1})
    assert response.status_code == 422
    html = response.content.decode()
    assert "John Smith&#x27;s shift event, date: expected string or null, got number 1990" in html
    assert "(at events[0].dateTime)" in html
    assert ">events[0]" not in html


def test_a_rejected_feedback_shows_the_reason_and_goes_back_to_draft_on_save(
    auditor_client, feedback, admin_user
):
    from audit.services import feedback_reject, feedback_submit

    feedback = feedback_submit(feedback=feedback, user=feedback.auditor)
    feedback = feedback_reject(feedback=feedback, admin=admin_user, reason="John is the father")
    page = auditor_client.get(reverse("audit:discussion", args=[feedback.statement.discussion_id]))
    assert "John is the father" in page.content.decode()
    fields = set_field(editor_fields(auditor_client, feedback), "people-0-name", "Johnny")
    hx_post(auditor_client, save_url(feedback), as_post(fields))
    assert Feedback.objects.get().status == Feedback.Status.DRAFT


def test_auditors_cannot_edit_their_approved_feedback(auditor_client, feedback, admin_user):
    from audit.services import feedback_approve, feedback_submit

    feedback = feedback_submit(feedback=feedback, user=feedback.auditor)
    feedback = feedback_approve(feedback=feedback, admin=admin_user)
    data = {"version": feedback.version, "people-0-id": "-1", "people-0-name": "X"}
    response = hx_post(auditor_client, save_url(feedback), data)
    assert response.status_code == 403
    assert "only be edited by an admin" in response.content.decode()


def test_presence_shows_who_else_is_editing(client, auditor, second_auditor, scene):
    url = reverse("audit:presence", args=[scene.first.pk])
    client.force_login(second_auditor)
    assert "is editing" not in client.post(url, **HX).content.decode()
    client.force_login(auditor)
    response = client.post(url, **HX)
    assert "bob is editing this statement" in response.content.decode()
    assert "alice is editing" not in response.content.decode()


def test_the_editor_polls_presence_every_15_seconds(auditor_client, feedback):
    html = auditor_client.get(reverse("audit:feedback_edit", args=[feedback.pk]), **HX)
    assert 'hx-trigger="load, every 15s"' in html.content.decode()


def test_an_auditor_opening_the_editor_of_approved_feedback_gets_the_card(
    auditor_client, feedback, admin_user
):
    from audit.services import feedback_approve, feedback_submit

    feedback_approve(
        feedback=feedback_submit(feedback=feedback, user=feedback.auditor), admin=admin_user
    )
    url = reverse("audit:feedback_edit", args=[feedback.pk])
    card = auditor_client.get(url, **HX).content.decode()
    assert "editor-form" not in card and "Approved" in card
    assert auditor_client.get(url).status_code == 302
