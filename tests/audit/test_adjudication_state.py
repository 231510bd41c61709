"""Adjudication state: choices a coder's resubmission made moot are reset with a reason (API,
screen, audit log), and the coders' order does not depend on who coded first."""

from __future__ import annotations

import copy
import itertools

import pytest
from django.urls import reverse

from audit.models import Adjudication, AuditLogEntry
from audit.services import feedback_reject, feedback_save, feedback_submit
from audit.services.adjudication_state import adjudication_body, adjudication_state
from tests.audit.adjudication_fixtures import alice_resubmits_the_move_as_a_new_event, coding
from tests.factories import ExtractionFactory, FeedbackFactory, StatementFactory

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures", "tests.audit.adjudication_fixtures"]

MOVED_KEY = "events:0:-5"


def url(statement, action: str = "") -> str:
    return f"/api/v1/statements/{statement.pk}/adjudication/" + (f"{action}/" if action else "")


def test_api_reports_choices_reset_by_a_resubmission_and_logs_it_once(
    api, admin_user, second_admin, two_codings
):
    client = api(admin_user)
    chosen = client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 1},
                         format="json")  # fmt: skip
    assert chosen.status_code == 200 and chosen.json()["reset_choices"] == []
    alice_resubmits_the_move_as_a_new_event(two_codings, second_admin)

    body = client.get(url(two_codings.statement)).json()
    assert MOVED_KEY not in body["unresolved"] and body["unresolved"]
    [reset] = body["reset_choices"]
    assert reset["key"] == MOVED_KEY and reset["choice"]["coder"] == 1
    assert reset["choice"]["took"]["description"] == "Moved to Boston"
    assert "alice changed their coding (v" in reset["reason"]
    record = Adjudication.objects.get(statement=two_codings.statement)
    assert record.choices == {}
    logged = AuditLogEntry.objects.filter(action=AuditLogEntry.Action.ADJUDICATION_RESET)
    assert logged.count() == 1 and logged.get().actor == two_codings.alice.auditor
    assert "1 earlier adjudication choice was reset (events:0:-5)" in logged.get().message

    assert client.get(url(two_codings.statement)).json()["reset_choices"] == [reset]
    assert logged.count() == 1  # reading again resets nothing more
    remerged = client.post(url(two_codings.statement, "remerge"))
    assert remerged.status_code == 200 and remerged.json()["reset_choices"] == []


def test_the_screen_says_which_choices_were_reset_and_why(
    admin_client, admin_user, second_admin, two_codings
):
    pk = two_codings.statement.pk
    admin_client.post(reverse("audit:adjudication_choose", args=[pk]),
                      {"key": MOVED_KEY, "coder": "1"})  # fmt: skip
    alice_resubmits_the_move_as_a_new_event(two_codings, second_admin)
    text = admin_client.get(reverse("audit:adjudicate", args=[pk])).content.decode()
    assert 'data-testid="adj-reset"' in text
    assert "1 earlier choice was reset: alice changed their coding (v" in text
    assert f"{MOVED_KEY} (coder 2&#x27;s version)" in text


def test_the_alignment_does_not_depend_on_who_coded_first(auditor, second_auditor, make_user):
    carol = make_user("erin")
    payloads = {
        auditor: coding(moved_in="1990"),
        second_auditor: coding(moved_in="1991", offset=10),
        carol: coding(moved_in="1992", offset=20),
    }
    seen = []
    for order in itertools.permutations(payloads):
        statement = StatementFactory()
        ExtractionFactory(statement=statement)
        for user in order:  # created (and so started) in this order
            FeedbackFactory(statement=statement, auditor=user, edited_extraction=payloads[user])
        body = adjudication_body(adjudication_state(statement=statement))
        for coder in body["coders"]:
            del coder["feedback"]
        del body["statement"]
        seen.append(body)
    assert [c["auditor"] for c in seen[0]["coders"]] == ["alice", "bob", "erin"]
    assert all(body == seen[0] for body in seen)


def test_a_taken_version_its_coder_changed_is_reset_not_taken_silently(
    api, admin_user, second_admin, two_codings
):
    client = api(admin_user)
    client.post(url(two_codings.statement, "choices"), {"key": MOVED_KEY, "coder": 1},
                format="json")  # fmt: skip
    bob = two_codings.bob
    feedback_reject(feedback=bob, admin=second_admin, reason="Check the year")
    payload = copy.deepcopy(bob.edited_extraction)
    next(e for e in payload["events"] if e["id"] == -15)["dateTime"] = "1993"
    bob.refresh_from_db()
    saved = feedback_save(feedback=bob, user=bob.auditor, edited_extraction=payload,
                          base_version=None)  # fmt: skip
    feedback_submit(feedback=saved, user=bob.auditor)

    body = client.get(url(two_codings.statement)).json()
    assert MOVED_KEY in body["unresolved"]  # the same item, to decide again
    [reset] = body["reset_choices"]
    assert reset["choice"]["took"]["dateTime"] == "1991"
    assert reset["reason"].startswith("bob changed their coding (v")
    assert [e["dateTime"] for e in body["merged"]["events"]] == ["1985-06-01"]  # 1993 not taken
