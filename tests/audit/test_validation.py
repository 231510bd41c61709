"""Issue 15 §1, §2, §6: problems shown at their field, submit/approve refused with the list,
no phantom edits, the AI column in the AI's own words, and the note for the reviewer."""

from __future__ import annotations

import copy
import json

import pytest
from django.urls import reverse
from django.utils.html import escape

from audit.models import Feedback
from audit.services import (
    NotReady,
    discussions_import,
    feedback_approve,
    feedback_problems,
    feedback_start,
    feedback_submit,
)
from audit.services.feedback import rules as feedback_rules
from metrics.families.payload.schema import PayloadError
from tests.audit.test_views_support import (
    as_post,
    editor_fields,
    hx_get,
    hx_post,
    make_scene,
    set_field,
)
from tests.factories import SIMPLE_PDP, pdp

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

BAD_DATE = "2024-13-45"
NOT_A_DATE = "is not a date with a year (e.g. 1985, March 2003, 2003-03-12)"
# A reference to nothing, beside its field: the coder reads no id.
WHO_IS_GONE = "Who: points at a person that is no longer in this coding"


def row_errors(html: str, feedback: Feedback, kind: str, index: int) -> str:
    """The error list beside one editor row (its <li> items), as the HTML has it."""
    start = html.index(f'id="row-errors-{feedback.pk}-{kind}-{index}"')
    return html[html.index(">", start) + 1 : html.index("</ul>", start)]


@pytest.fixture
def scene():
    return make_scene()


@pytest.fixture
def feedback(scene, auditor):
    return feedback_start(statement=scene.first, auditor=auditor)


def save_url(feedback) -> str:
    return reverse("audit:feedback_save", args=[feedback.pk])


def save_with(client, feedback, **changes):
    fields = editor_fields(client, feedback)
    for name, value in changes.items():
        fields = set_field(fields, name.replace("__", "-"), value)
    return hx_post(client, save_url(feedback), as_post(fields))


def store(feedback: Feedback, change) -> Feedback:
    """Put a payload in place directly, as an older version of the site could have saved it."""
    payload = copy.deepcopy(feedback.edited_extraction)
    change(payload)
    feedback.edited_extraction = payload
    feedback.save()
    return feedback


# --- §1 the draft keeps what was typed and shows the problem at its field -----------------------


@pytest.mark.parametrize("date", [BAD_DATE, "whenever, honestly ???"])
def test_autosave_keeps_an_unreadable_date_and_shows_the_problem_at_the_field(
    auditor_client, feedback, date
):
    response = save_with(auditor_client, feedback, events__0__dateTime=date)
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.edited_extraction["events"][0]["dateTime"] == date  # no typing lost
    html = response.content.decode()
    assert "1 problem to fix before submit" in html
    assert 'data-fields="events-0-dateTime"' in html
    row = f'id="row-errors-{feedback.pk}-events-0" aria-live="polite" hx-swap-oob="true">'
    assert row in html
    after_row = html.split(row, 1)[1]
    assert after_row.startswith(
        f'<li data-field="events-0-dateTime">Date: {escape(repr(date))} {NOT_A_DATE}'
    )
    assert "dateTime" not in after_row.split("</ul>")[0].split('">', 1)[1]


def test_fixing_the_problem_clears_it_at_once(auditor_client, feedback):
    save_with(auditor_client, feedback, events__0__dateTime=BAD_DATE)
    response = save_with(auditor_client, feedback, events__0__dateTime="June 1985")
    html = response.content.decode()
    assert "problem" not in html
    # Every row's error list is swapped in, empty ones too, so the old message goes away.
    assert (
        f'id="row-errors-{feedback.pk}-events-0" aria-live="polite" hx-swap-oob="true"></ul>'
        in html
    )


def test_the_editor_shows_stored_problems_next_to_their_fields(auditor_client, feedback):
    store(feedback, lambda p: p["events"][0].update(person=-77))
    html = hx_get(auditor_client, reverse("audit:feedback_edit", args=[feedback.pk])).content
    html = html.decode()
    assert "1 problem to fix before submit" in html
    assert row_errors(html, feedback, "events", 0) == (
        f'<li data-field="events-0-person">{WHO_IS_GONE}</li>'
    )


def test_the_editor_shows_warnings_beside_their_fields_and_submits(auditor_client, feedback):
    """A rule the spec does not state (a nameless person) is a warning: shown, not refused."""
    store(feedback, lambda p: p["people"][0].update(name="", last_name=None))
    html = hx_get(auditor_client, reverse("audit:feedback_edit", args=[feedback.pk])).content
    html = html.decode()
    assert "1 warning" in html and "problem to fix" not in html
    assert "warning: a person without a name or a last name (submit allowed)" in html
    response = hx_post(
        auditor_client,
        reverse("audit:feedback_submit", args=[feedback.pk]),
        {"version": feedback.version},
    )
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.SUBMITTED


def test_save_and_submit_is_refused_with_the_list_of_problems(auditor_client, feedback):
    fields = set_field(editor_fields(auditor_client, feedback), "events-0-dateTime", BAD_DATE)
    fields = set_field(fields, "events-0-person", "-77")
    response = hx_post(auditor_client, save_url(feedback), as_post(fields, op="submit"))
    assert response.status_code == 422
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.DRAFT
    assert feedback.edited_extraction["events"][0]["dateTime"] == BAD_DATE  # the edit is kept
    html = response.content.decode()
    assert 'data-fields="events-0-dateTime events-0-person"' in html  # the fields marked
    assert "not submitted. Fix these problems before you submit." in html
    # The event's person is gone: the event is named by its kind alone.
    assert f"<li>A married event, date: &#x27;2024-13-45&#x27; {NOT_A_DATE}" in html
    assert (
        "<li>A married event&#x27;s who points at a person that is no longer in this coding</li>"
        in html
    )
    assert "events[0]" not in html and "-77" not in html.split("</div>", 1)[0]


def test_submit_from_the_card_is_refused_with_the_list(auditor_client, feedback):
    store(feedback, lambda p: p["events"][0].update(spouse=-78))
    response = hx_post(
        auditor_client,
        reverse("audit:feedback_submit", args=[feedback.pk]),
        {"version": feedback.version},
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert (
        "<li>John Smith&#x27;s married event&#x27;s spouse points at a person that is no longer "
        "in this coding</li>" in html
    )
    assert "events[0]" not in html and "-78" not in html
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.DRAFT


def test_the_json_editor_saves_a_draft_with_problems_and_shows_them(auditor_client, feedback):
    payload = copy.deepcopy(feedback.edited_extraction)
    payload["events"][0]["person"] = -77
    response = hx_post(
        auditor_client,
        reverse("audit:feedback_json", args=[feedback.pk]),
        {"payload": json.dumps(payload), "version": feedback.version},
    )
    assert response.status_code == 200
    html = response.content.decode()
    # The draft is saved and the editor comes back with the problem beside its field.
    assert "Saved · v2 · 1 problem to fix before submit" in html
    assert row_errors(html, feedback, "events", 0) == (
        f'<li data-field="events-0-person">{WHO_IS_GONE}</li>'
    )


def test_references_to_items_of_earlier_statements_are_fine(auditor, scene):
    # The second statement's shift names John (-1) and Mary (-2) of the first statement.
    feedback = feedback_start(statement=scene.second, auditor=auditor)
    assert feedback_submit(feedback=feedback, user=auditor).status == Feedback.Status.SUBMITTED


def _refer_to(feedback: Feedback, ident: int) -> dict:
    payload = copy.deepcopy(feedback.edited_extraction)
    payload["events"][0]["person"] = ident
    return payload


def test_problems_from_payloads_already_read_skip_the_discussion_read(auditor, scene, monkeypatch):
    feedback = feedback_start(statement=scene.second, auditor=auditor)
    full = feedback_problems(feedback=feedback)
    monkeypatch.setattr(feedback_rules, "earlier_item_ids", _must_not_read)
    # The first statement's AI extraction, as the editor has read it, knows John and Mary.
    read = [scene.extraction.pdp_deltas]
    assert feedback_problems(feedback=feedback, earlier=read) == full == []


def _must_not_read(*, statement):
    raise AssertionError("the earlier payloads were read again")


def test_an_id_only_another_coder_knows_is_found_beyond_the_payloads_read(
    auditor, second_auditor, scene
):
    # Another auditor's coding of the first statement names someone the AI did not (-90).
    theirs = feedback_start(statement=scene.first, auditor=second_auditor)
    payload = copy.deepcopy(theirs.edited_extraction)
    payload["people"].append({"id": -90, "name": "Uncle Bob"})
    Feedback.objects.filter(pk=theirs.pk).update(edited_extraction=payload)
    feedback = feedback_start(statement=scene.second, auditor=auditor)
    read = [scene.extraction.pdp_deltas]  # what the editor read: no -90 in it
    assert (
        feedback_problems(feedback=feedback, payload=_refer_to(feedback, -90), earlier=read) == []
    )
    dangling = feedback_problems(feedback=feedback, payload=_refer_to(feedback, -91), earlier=read)
    assert [problem.path for problem in dangling] == ["events[0].person"]


# --- §1 services and API: 4xx with each problem ------------------------------------------------


def test_submit_service_refuses_with_each_problem(auditor, feedback):
    store(feedback, lambda p: p["people"][1].update(parent_a=-66))
    with pytest.raises(NotReady) as refused:
        feedback_submit(feedback=feedback, user=auditor)
    assert [m.split(":")[0] for m in refused.value.messages()] == ["people[1].parent_a"]


def test_api_submit_answers_422_listing_each_problem(api, auditor, feedback):
    store(feedback, lambda p: p["events"][0].update(dateTime=BAD_DATE, child=-50))
    response = api(auditor).post(
        f"/api/v1/feedback/{feedback.pk}/submit/", {"version": feedback.version}, format="json"
    )
    assert response.status_code == 422
    body = response.json()
    assert body["detail"] == "Fix these problems before you submit."
    assert [error.split(":")[0] for error in body["errors"]] == [
        "events[0].dateTime",
        "events[0].child",
    ]
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.DRAFT


def test_api_approve_answers_422_listing_each_problem(api, auditor, admin_user, feedback):
    feedback = feedback_submit(feedback=feedback, user=auditor)
    # Submitted before the checks existed: approving it must still be refused.
    store(feedback, lambda p: p["pair_bonds"][0].update(person_a=-88))
    response = api(admin_user).post(
        f"/api/v1/feedback/{feedback.pk}/approve/", {"version": feedback.version}, format="json"
    )
    assert response.status_code == 422
    assert [e.split(":")[0] for e in response.json()["errors"]] == ["pair_bonds[0].person_a"]
    feedback.refresh_from_db()
    assert feedback.status == Feedback.Status.SUBMITTED


def test_approve_in_the_review_page_is_refused_with_the_problems(admin_client, auditor, feedback):
    feedback = feedback_submit(feedback=feedback, user=auditor)
    store(feedback, lambda p: p["events"][0].update(dateTime="whenever"))
    response = hx_post(
        admin_client,
        reverse("audit:feedback_approve", args=[feedback.pk]),
        {"version": feedback.version},
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "<strong>Fix these problems before you approve.</strong>" in html
    # The reviewer reads the problem as the coder does: the item and field by name, no path.
    assert "date: &#x27;whenever&#x27; is not a date" in html
    assert "events[0]" not in html
    assert Feedback.objects.get(pk=feedback.pk).status == Feedback.Status.SUBMITTED


def test_api_drafts_may_keep_problems(api, auditor, feedback):
    payload = copy.deepcopy(feedback.edited_extraction)
    payload["events"][0]["dateTime"] = BAD_DATE
    response = api(auditor).put(
        f"/api/v1/feedback/{feedback.pk}/",
        {"edited_extraction": payload, "version": feedback.version},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["edited_extraction"]["events"][0]["dateTime"] == BAD_DATE


def test_imported_ground_truth_breaking_a_rule_imports_with_a_warning_naming_it(admin_user):
    """It was approved where it comes from (under older or looser rules): it travels, and the
    summary names each problem; a malformed payload is still refused."""
    gt = pdp(
        people=[{"id": -1, "name": "", "last_name": None}],
        events=[{"id": -2, "kind": "shift", "person": -1, "dateTime": BAD_DATE}],
        delete=[-404],
    )
    data = {
        "discussion": {"external_id": "loose-gt", "summary": "Loose ground truth"},
        "statements": [{"text": "x", "speaker_type": "Subject", "ground_truth": gt}],
    }
    summary = discussions_import(data=data, by=admin_user)
    assert summary.approved_created == 1
    assert sorted(line.split(":")[0] for line in summary.warnings) == [
        "statements[0].ground_truth.delete[0]",
        "statements[0].ground_truth.events[0].dateTime",
        "statements[0].ground_truth.people[0].name",
    ]
    malformed = copy.deepcopy(data)
    malformed["discussion"]["external_id"] = "malformed-gt"
    malformed["statements"][0]["ground_truth"]["events"][0]["kind"] = "party"
    with pytest.raises(PayloadError):
        discussions_import(data=malformed, by=admin_user)


def test_imported_ground_truth_may_refer_to_earlier_statements(admin_user):
    later = pdp(events=[{"id": -9, "kind": "shift", "person": -1, "dateTime": "1990"}])
    data = {
        "discussion": {"external_id": "good-gt", "summary": "Good ground truth"},
        "statements": [
            {"text": "a", "speaker_type": "Subject", "ground_truth": SIMPLE_PDP},
            {"text": "b", "speaker_type": "Subject", "ground_truth": later},
        ],
    }
    assert discussions_import(data=data, by=admin_user).discussions_created == 1


# --- §2 no phantom edits -----------------------------------------------------------------------


@pytest.fixture
def ai_may_feedback(scene, auditor):
    """The AI wrote "May " with a trailing space and confidence 0.54."""
    deltas = scene.extraction.pdp_deltas
    deltas["events"][0].update(dateTime="May ", confidence=0.54)
    scene.extraction.save()
    return feedback_start(statement=scene.first, auditor=auditor)


def test_saving_an_untouched_form_rewrites_nothing(auditor_client, ai_may_feedback):
    feedback = ai_may_feedback
    stored = copy.deepcopy(feedback.edited_extraction)
    response = hx_post(
        auditor_client, save_url(feedback), as_post(editor_fields(auditor_client, feedback))
    )
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.edited_extraction == stored
    assert feedback.edited_extraction["events"][0]["dateTime"] == "May "
    assert feedback.edited_extraction["events"][0]["confidence"] == 0.54
    assert feedback.version == 1
    assert list(feedback.revisions.values_list("action", flat=True)) == ["start"]


def test_editing_one_item_leaves_the_untouched_ones_as_they_were(auditor_client, ai_may_feedback):
    feedback = ai_may_feedback
    save_with(auditor_client, feedback, people__0__name="Jon")
    feedback.refresh_from_db()
    event = feedback.edited_extraction["events"][0]
    assert (event["dateTime"], event["confidence"]) == ("May ", 0.54)
    assert feedback.edited_extraction["people"][0]["confidence"] == 1.0


def test_the_json_editor_applies_the_same_edited_rule(auditor_client, ai_may_feedback):
    feedback = ai_may_feedback
    payload = copy.deepcopy(feedback.edited_extraction)
    payload["events"][0]["dateTime"] = "May"  # whitespace only: not an edit
    url = reverse("audit:feedback_json", args=[feedback.pk])
    hx_post(auditor_client, url, {"payload": json.dumps(payload), "version": 1})
    feedback.refresh_from_db()
    assert (feedback.version, feedback.revisions.count()) == (1, 1)  # nothing to save
    payload["people"][0]["name"] = "Jon"
    hx_post(auditor_client, url, {"payload": json.dumps(payload), "version": 1})
    feedback.refresh_from_db()
    assert feedback.version == 2
    assert feedback.edited_extraction["events"][0] == payload["events"][0] | {"dateTime": "May "}
    assert feedback.edited_extraction["people"][0]["confidence"] == 1.0


def test_the_api_applies_the_same_edited_rule(api, auditor, ai_may_feedback):
    feedback = ai_may_feedback
    payload = copy.deepcopy(feedback.edited_extraction)
    payload["events"][0]["dateTime"] = "May"  # whitespace only: not an edit
    payload["people"][0]["name"] = "Jon"  # an edit, confidence left as it was
    response = api(auditor).put(
        f"/api/v1/feedback/{feedback.pk}/",
        {"edited_extraction": payload, "version": feedback.version},
        format="json",
    )
    saved = response.json()["edited_extraction"]
    assert (saved["events"][0]["dateTime"], saved["events"][0]["confidence"]) == ("May ", 0.54)
    assert saved["people"][0]["confidence"] == 1.0


def test_the_ai_column_shows_the_ais_own_names(auditor_client, auditor, scene):
    first = feedback_start(statement=scene.first, auditor=auditor)
    store(first, lambda p: p["people"][0].update(name="Jonathan"))
    html = hx_get(auditor_client, reverse("audit:statement", args=[scene.second.pk])).content
    html = html.decode()
    ai_column = html.split("AI extraction", 1)[1]
    ai_column = ai_column.split("My coding", 1)[0] if "My coding" in ai_column else ai_column
    assert "John Smith" in ai_column
    assert "Jonathan" not in ai_column


# --- §6 a note for the reviewer ----------------------------------------------------------------


def test_the_auditor_writes_a_note_and_the_reviewer_sees_it(
    auditor_client, admin_client, auditor, feedback
):
    response = save_with(auditor_client, feedback, comment="Unsure whether they married in 1985.")
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert feedback.comment == "Unsure whether they married in 1985."
    feedback_submit(feedback=feedback, user=auditor)
    review = admin_client.get(reverse("audit:statement_review", args=[feedback.statement_id]))
    assert (
        "Note from alice:</strong> Unsure whether they married in 1985." in review.content.decode()
    )


def test_a_too_long_note_is_refused_and_nothing_is_stored(auditor_client, feedback):
    response = save_with(auditor_client, feedback, comment="x" * 5001)
    assert response.status_code == 400
    assert "at most 5000 characters" in response.content.decode()
    feedback.refresh_from_db()
    assert (feedback.comment, feedback.version) == ("", 1)


def test_approving_a_clean_coding_still_works(auditor, admin_user, feedback):
    submitted = feedback_submit(feedback=feedback, user=auditor)
    assert feedback_approve(feedback=submitted, admin=admin_user).is_approved
