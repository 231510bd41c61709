"""API: adjudication of two auditors' codings — alignment, choices, re-merge, produce, roles."""

from __future__ import annotations

import pytest

from audit.models import Adjudication, AuditLogEntry, Feedback
from tests.factories import FeedbackFactory, StatementFactory

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures", "tests.audit.adjudication_fixtures"]

MOVED_KEY = "events:0:-5"


def url(statement, action: str = "") -> str:
    return f"/api/v1/statements/{statement.pk}/adjudication/" + (f"{action}/" if action else "")


def test_the_alignment_merges_what_both_coders_agree_on(api, admin_user, two_codings):
    body = api(admin_user).get(url(two_codings.statement)).json()
    assert [c["auditor"] for c in body["coders"]] == ["alice", "bob"]
    assert body["unanimous_items"] == 4 and body["disputed_items"] == 1
    assert body["unresolved"] == [MOVED_KEY]
    disputed = [item for item in body["items"] if not item["unanimous"]]
    assert [v["dateTime"] for v in disputed[0]["versions"]] == ["1990", "1991"]
    assert [e["dateTime"] for e in body["merged"]["events"]] == ["1985-06-01"]


def test_choose_then_submit_produces_adjudicated_feedback(api, admin_user, two_codings):
    client = api(admin_user)
    chosen = client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 1},
                         format="json")  # fmt: skip
    assert chosen.status_code == 200, chosen.json()
    assert chosen.json()["unresolved"] == []
    produced = client.post(url(two_codings.statement, "submit"))
    assert produced.status_code == 200, produced.json()
    feedback = Feedback.objects.get(pk=produced.json()["feedback"])
    assert feedback.auditor == admin_user and feedback.status == Feedback.Status.SUBMITTED
    assert [e["dateTime"] for e in feedback.edited_extraction["events"]] == ["1985-06-01", "1991"]
    record = Adjudication.objects.get(statement=two_codings.statement)
    assert record.feedback == feedback
    assert sorted(record.coders.values_list("username", flat=True)) == ["alice", "bob"]
    assert (record.unanimous_items, record.adjudicated_items) == (4, 1)
    assert AuditLogEntry.objects.filter(action="adjudicate", object_id=str(record.pk)).exists()
    # The feedback API credits it as adjudicated, with its coders.
    credit = client.get(f"/api/v1/feedback/{feedback.pk}/").json()["adjudicated"]
    assert credit == {"coders": ["alice", "bob"], "unanimous_items": 4, "adjudicated_items": 1}
    listed = client.get("/api/v1/feedback/", {"statement": two_codings.statement.pk}).json()
    assert [f["adjudicated"] is not None for f in listed["results"]].count(True) == 1


def test_the_adjudicator_cannot_approve_their_merge_another_admin_can(
    api, admin_user, second_admin, two_codings
):
    client = api(admin_user)
    client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 0},
                format="json")  # fmt: skip
    feedback_id = client.post(url(two_codings.statement, "submit")).json()["feedback"]
    feedback = Feedback.objects.get(pk=feedback_id)
    approve = f"/api/v1/feedback/{feedback_id}/approve/"
    mine = client.post(approve, {"version": feedback.version}, format="json")
    assert mine.status_code == 403 and "Four eyes" in mine.json()["detail"]
    theirs = api(second_admin).post(approve, {"version": feedback.version}, format="json")
    assert theirs.status_code == 200, theirs.json()
    assert Feedback.objects.get(pk=feedback_id).status == Feedback.Status.APPROVED


def test_an_edit_is_a_choice(api, admin_user, two_codings):
    edit = {"kind": "moved", "person": -1, "description": "Moved to Boston", "dateTime": "1992"}
    body = api(admin_user).post(url(two_codings.statement, "choices"),
                                {"key": MOVED_KEY, "edit": edit}, format="json").json()  # fmt: skip
    assert body["merged"]["events"][1] == {**edit, "id": -5}


def test_remerge_resets_to_the_automatic_merge(api, admin_user, two_codings):
    client = api(admin_user)
    client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 1},
                format="json")  # fmt: skip
    body = client.post(url(two_codings.statement, "remerge")).json()
    assert body["unresolved"] == [MOVED_KEY]
    assert AuditLogEntry.objects.filter(action="adjud_remerge").count() == 1


def test_submit_refuses_while_an_item_is_undecided(api, admin_user, two_codings):
    answer = api(admin_user).post(url(two_codings.statement, "submit"))
    assert answer.status_code == 422
    assert MOVED_KEY in answer.json()["detail"]
    assert not Feedback.objects.filter(auditor=admin_user).exists()


@pytest.mark.parametrize(
    "body, status, expected",
    [
        ({"key": "events:9:-9", "coder": 0}, 404, "No aligned item 'events:9:-9'"),
        ({"key": "people:0:-1", "coder": 0}, 409, "unanimous"),
        ({"key": MOVED_KEY, "coder": 2}, 400, "coder must be 0..1"),
        ({"key": MOVED_KEY, "coder": -1}, 400, "coder"),
        ({"key": MOVED_KEY}, 400, "exactly one of coder or edit"),
        ({"key": MOVED_KEY, "coder": 0, "edit": {}}, 400, "exactly one of coder or edit"),
        ({"key": MOVED_KEY, "edit": [1]}, 400, "JSON object"),
        ({"key": MOVED_KEY, "pick": 0}, 400, "pick"),
    ],
)
def test_bad_choices_are_specific_4xx_and_store_nothing(
    api, admin_user, two_codings, body, status, expected
):
    answer = api(admin_user).post(url(two_codings.statement, "choices"), body, format="json")
    assert answer.status_code == status, answer.json()
    assert expected in str(answer.json())
    assert not Adjudication.objects.exists()


def test_auditors_and_anonymous_are_refused(api, auditor, outsider, two_codings):
    assert api(auditor).get(url(two_codings.statement)).status_code == 403
    assert api(outsider).get(url(two_codings.statement)).status_code == 403
    assert api().get(url(two_codings.statement)).status_code == 401
    refused = api(auditor).post(url(two_codings.statement, "choices"),
                                {"key": MOVED_KEY, "coder": 0}, format="json")  # fmt: skip
    assert refused.status_code == 403 and not Adjudication.objects.exists()


def test_an_admin_who_coded_the_statement_does_not_adjudicate_it(api, admin_user, two_codings):
    FeedbackFactory(statement=two_codings.statement, auditor=admin_user)
    answer = api(admin_user).post(url(two_codings.statement, "choices"),
                                  {"key": MOVED_KEY, "coder": 0}, format="json")  # fmt: skip
    assert answer.status_code == 403 and "another admin" in answer.json()["detail"]
    assert not Adjudication.objects.exists()


def test_one_coding_is_nothing_to_adjudicate(api, admin_user, auditor):
    statement = StatementFactory()
    FeedbackFactory(statement=statement, auditor=auditor)
    assert api(admin_user).post(url(statement, "submit")).status_code == 409


def test_unknown_statement_is_404(api, admin_user):
    assert api(admin_user).get("/api/v1/statements/999999/adjudication/").status_code == 404


@pytest.mark.parametrize(
    "edit, expected",
    [
        ({"kind": 5, "person": -1}, "kind"),
        ({"kind": "moved", "person": -99, "description": "x", "dateTime": "1990"}, "-99"),
        ({"kind": "moved", "person": -1, "dateTime": "not a date at all"}, "dateTime"),
    ],
)
def test_an_edit_that_breaks_the_coding_is_refused_at_submit(
    api, admin_user, two_codings, edit, expected
):
    client = api(admin_user)
    client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "edit": edit},
                format="json")  # fmt: skip
    answer = client.post(url(two_codings.statement, "submit"))
    assert 400 <= answer.status_code < 500, answer.json()
    assert expected in str(answer.json())
    assert not Feedback.objects.filter(auditor=admin_user).exists()


def test_submitting_the_same_merge_twice_changes_nothing(api, admin_user, two_codings):
    client = api(admin_user)
    client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 1},
                format="json")  # fmt: skip
    first = client.post(url(two_codings.statement, "submit")).json()
    again = client.post(url(two_codings.statement, "submit"))
    assert again.status_code == 200
    assert again.json()["feedback_version"] == first["feedback_version"]


def test_a_submitted_merge_is_its_adjudicators_and_an_approved_one_is_closed(
    api, admin_user, second_admin, two_codings
):
    mine = api(admin_user)
    mine.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 1},
              format="json")  # fmt: skip
    feedback = Feedback.objects.get(
        pk=mine.post(url(two_codings.statement, "submit")).json()["feedback"]
    )
    theirs = api(second_admin)
    refused = theirs.post(url(two_codings.statement, "remerge"))
    assert (
        refused.status_code == 403
        and "carol adjudicates this statement" in refused.json()["detail"]
    )
    theirs.post(f"/api/v1/feedback/{feedback.pk}/approve/", {"version": feedback.version},
                format="json")  # fmt: skip
    closed = mine.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 0},
                       format="json")  # fmt: skip
    assert closed.status_code == 409 and "approved ground truth" in closed.json()["detail"]
    assert Adjudication.objects.get().choices[MOVED_KEY]["coder"] == 1
