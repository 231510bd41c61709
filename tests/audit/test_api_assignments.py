"""API: a team's workflow — assignments with an overlap sample, submit and next, skip, the
review stream with approve and next, progress (auditors see only their own)."""

from __future__ import annotations

import pytest

from audit.models import Assignment, AuditLogEntry, BlindReview, Feedback
from tests.api_fixtures import make_discussion
from tests.factories import ExtractionFactory, ExtractionRunFactory

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]

ASSIGNMENTS = "/api/v1/assignments/"


@pytest.fixture
def two_discussions(db):
    """Two discussions of four subject statements, each with a valid AI extraction."""
    run = ExtractionRunFactory()
    found = []
    for summary in ("Smith family", "Jones family"):
        discussion, statements = make_discussion(summary, n_subject=4)
        for statement in statements[1:]:
            ExtractionFactory(statement=statement, run=run)
        found.append((discussion, statements[1:]))
    return found


def assign(api, admin_user, discussions, auditors, **extra):
    body = {
        "discussions": [d.pk for d in discussions],
        "auditors": [a.pk for a in auditors],
        "overlap_percent": 50,
        "overlap_k": 2,
        **extra,
    }
    return api(admin_user).post(ASSIGNMENTS, body, format="json")


def code_next(client) -> dict:
    """What an auditor's client does with one key: open the next statement, code it, submit."""
    nxt = client.get(f"{ASSIGNMENTS}next/").json()
    if nxt["statement"] is None:
        return nxt
    started = client.post("/api/v1/feedback/", {"statement": nxt["statement"]}, format="json")
    feedback = started.json()
    submitted = client.post(
        f"/api/v1/feedback/{feedback['id']}/submit/",
        {"version": feedback["version"]},
        format="json",
    )
    assert submitted.status_code == 200, submitted.json()
    return nxt


def test_the_whole_team_flow(api, admin_user, auditor, second_auditor, two_discussions):
    (d1, s1), (d2, s2) = two_discussions
    # An admin assigns two discussions to two auditors with a 50% overlap sample.
    response = assign(api, admin_user, [d1, d2], [auditor, second_auditor])
    assert response.status_code == 201, response.json()
    body = response.json()
    overlap = body["overlap_statements"]
    assert len(overlap) == 4  # half of the 8 statements
    assert body["created"] == 8 + 4
    mine = Assignment.objects.filter(auditor=auditor)
    assert {a.statement_id for a in mine if not a.overlap} <= {s.pk for s in s1}
    assert set(mine.values_list("statement_id", flat=True)) == {s.pk for s in s1} | (
        set(overlap) & {s.pk for s in s2}
    )
    assert AuditLogEntry.objects.filter(action="assign").count() == 1

    # Each auditor skips one statement and codes the rest with submit-and-next.
    alice, bob = api(auditor), api(second_auditor)
    first = alice.get(f"{ASSIGNMENTS}next/").json()["statement"]
    skipped = alice.post(
        f"/api/v1/statements/{first}/skip/", {"reason": "unclear", "note": "who is 'he'?"},
        format="json",
    )  # fmt: skip
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    bob_first = bob.get(f"{ASSIGNMENTS}next/").json()["statement"]
    assert (
        bob.post(
            f"/api/v1/statements/{bob_first}/skip/", {"reason": "needs_context"}, format="json"
        ).status_code
        == 200
    )
    for client in (alice, bob):
        while code_next(client)["statement"] is not None:
            pass
    n_alice = mine.count() - 1
    n_bob = Assignment.objects.filter(auditor=second_auditor).count() - 1
    assert Feedback.objects.filter(auditor=auditor, status="submitted").count() == n_alice
    assert Feedback.objects.filter(auditor=second_auditor, status="submitted").count() == n_bob

    # The admin reviews with approve-and-next through the stream.
    admin = api(admin_user)
    approved, after = 0, None
    while True:
        nxt = admin.get("/api/v1/review-stream/next/", {"after": after} if after else {}).json()
        if nxt["statement"] is None:
            break
        feedback = Feedback.objects.get(pk=nxt["feedback"][0])
        result = admin.post(
            f"/api/v1/feedback/{feedback.pk}/approve/", {"version": feedback.version},
            format="json",
        )  # fmt: skip
        assert result.status_code == 200, result.json()
        approved += 1
        after = nxt["statement"]
        assert approved <= 8
    # One approval per coded statement: an overlap statement's second coding serves agreement.
    coded = Feedback.objects.exclude(status="draft").values("statement").distinct().count()
    assert approved == coded
    assert admin.get("/api/v1/review-stream/next/").json()["waiting"] == 0

    # Progress: the right counts per auditor; each auditor sees only their own row.
    rows = {r["label"]: r for r in admin.get("/api/v1/progress/").json()["auditors"]}
    assert rows["alice"]["assigned"] == mine.count()
    assert rows["alice"]["skipped"] == 1
    assert rows["alice"]["submitted"] == n_alice
    assert rows["bob"]["skipped"] == 1
    total_approved = Feedback.objects.filter(status="approved").count()
    assert rows["alice"]["approved"] + rows["bob"]["approved"] == total_approved
    own = alice.get("/api/v1/progress/").json()
    assert [r["label"] for r in own["auditors"]] == ["alice"] and own["discussions"] == []


def test_overlap_sample_can_be_blind(api, admin_user, auditor, second_auditor, two_discussions):
    (d1, _), (d2, _) = two_discussions
    body = assign(api, admin_user, [d1, d2], [auditor, second_auditor], blind=True).json()
    assert set(BlindReview.objects.values_list("statement_id", flat=True)) == set(
        body["overlap_statements"]
    )
    statement = body["overlap_statements"][0]
    started = api(auditor).post("/api/v1/feedback/", {"statement": statement}, format="json")
    assert started.json()["edited_extraction"]["events"] == []  # coded from an empty extraction


def test_balanced_strategy_evens_out_statement_counts(api, admin_user, auditor, second_auditor):
    run = ExtractionRunFactory()
    discussions = []
    for n in (5, 3, 2):
        discussion, statements = make_discussion(f"family of {n}", n_subject=n)
        for statement in statements[1:]:
            ExtractionFactory(statement=statement, run=run)
        discussions.append(discussion)
    response = assign(
        api, admin_user, discussions, [auditor, second_auditor], strategy="balanced",
        overlap_percent=0,
    )  # fmt: skip
    assert response.status_code == 201
    counts = sorted(Assignment.objects.filter(auditor=a).count() for a in (auditor, second_auditor))
    assert counts == [5, 5]


def test_a_statement_range_of_one_discussion(api, admin_user, auditor, two_discussions):
    (d1, _), (d2, _) = two_discussions
    response = assign(
        api, admin_user, [d1], [auditor], overlap_percent=0, first_order=2, last_order=3
    )
    assert response.status_code == 201
    assert sorted(a["order"] for a in response.json()["assignments"]) == [2, 3]
    refused = assign(api, admin_user, [d1, d2], [auditor], overlap_percent=0, first_order=2)
    assert refused.status_code == 400 and "one discussion" in refused.json()["detail"]


def test_nobody_codes_a_statement_assigned_to_someone_else(
    api, admin_user, auditor, second_auditor, two_discussions
):
    (d1, s1), _ = two_discussions
    assign(api, admin_user, [d1], [auditor], overlap_percent=0)
    response = api(second_auditor).post("/api/v1/feedback/", {"statement": s1[0].pk}, format="json")
    assert response.status_code == 403
    assert "assigned to alice" in response.json()["detail"]


def test_hidden_unassigned_work(api, auditor, two_discussions, settings):
    settings.UNASSIGNED_WORK_VISIBLE = False
    (_, s1), _ = two_discussions
    response = api(auditor).post("/api/v1/feedback/", {"statement": s1[0].pk}, format="json")
    assert response.status_code == 403 and "not assigned to you" in response.json()["detail"]


def test_reassign_and_unassign_are_logged(
    api, admin_user, auditor, second_auditor, two_discussions
):
    (d1, _), _ = two_discussions
    created = assign(api, admin_user, [d1], [auditor], overlap_percent=0).json()["assignments"]
    admin = api(admin_user)
    moved = admin.post(
        f"{ASSIGNMENTS}{created[0]['id']}/reassign/", {"auditor": second_auditor.pk}, format="json"
    )
    assert moved.status_code == 200 and moved.json()["auditor_username"] == "bob"
    assert admin.delete(f"{ASSIGNMENTS}{created[1]['id']}/").status_code == 204
    assert not Assignment.objects.filter(pk=created[1]["id"]).exists()
    actions = set(AuditLogEntry.objects.values_list("action", flat=True))
    assert {"assign", "reassign", "unassign"} <= actions


def test_auditors_see_only_their_assignments_and_cannot_assign(
    api, admin_user, auditor, second_auditor, two_discussions
):
    (d1, _), (d2, _) = two_discussions
    assign(api, admin_user, [d1, d2], [auditor, second_auditor], overlap_percent=0)
    listed = api(auditor).get(ASSIGNMENTS).json()["results"]
    assert listed and {a["auditor_username"] for a in listed} == {"alice"}
    theirs = Assignment.objects.filter(auditor=second_auditor).first()
    assert api(auditor).get(f"{ASSIGNMENTS}{theirs.pk}/").status_code == 404
    assert assign(api, auditor, [d1], [auditor]).status_code == 403
    assert api(auditor).get("/api/v1/review-stream/next/").status_code == 403
    assert api(auditor).delete(f"{ASSIGNMENTS}{theirs.pk}/").status_code in (403, 404)


def test_bad_input_names_the_field(api, admin_user, auditor, two_discussions):
    (d1, s1), _ = two_discussions
    admin = api(admin_user)
    missing = admin.post(
        ASSIGNMENTS, {"discussions": [999999], "auditors": [auditor.pk]}, format="json"
    )
    assert missing.status_code == 404 and "discussions" in missing.json()["detail"]
    k_too_big = assign(api, admin_user, [d1], [auditor], overlap_k=2)
    assert k_too_big.status_code == 400 and "auditors per statement" in k_too_big.json()["detail"]
    bad_reason = api(auditor).post(
        f"/api/v1/statements/{s1[0].pk}/skip/", {"reason": "bored"}, format="json"
    )
    assert bad_reason.status_code == 400 and "reason" in bad_reason.json()["detail"]
    other_needs_note = api(auditor).post(
        f"/api/v1/statements/{s1[0].pk}/skip/", {"reason": "other"}, format="json"
    )
    assert other_needs_note.status_code == 400 and "note" in other_needs_note.json()["detail"]
    assert not Assignment.objects.exists()


def test_api_skip_of_a_statement_nobody_is_assigned_to(api, two_discussions, auditor):
    """The skip of an unassigned statement answered 500 (its assignment lacked the discussion)."""
    discussion, statements = two_discussions[0]
    response = api(auditor).post(
        f"/api/v1/statements/{statements[0].pk}/skip/", {"reason": "unclear"}, format="json"
    )
    assert response.status_code == 200 and response.json()["status"] == "skipped"
    assert Assignment.objects.get(statement=statements[0]).discussion_id == discussion.pk
