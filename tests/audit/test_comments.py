"""Comment threads: the blind rule, rejections as comments and replies, @mentions, unread
counts and read markers, the audit log, the API and bad input."""

import json
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.models import AuditLogEntry, BlindReview, Comment, Notification
from audit.selectors.threads import (
    comments_unread,
    comments_unread_count,
    comments_unread_summary,
    comments_visible_to,
)
from audit.services import feedback_reject, feedback_save, feedback_start, feedback_submit
from audit.services.comments import (
    REPEAT_WINDOW,
    comment_add,
    mentioned_usernames,
    thread_mark_read,
)
from audit.services.errors import NotAllowed, WorkflowError
from tests.api_fixtures import make_discussion

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.api_fixtures"]


@pytest.fixture
def subject(db):
    _, (_, subject, _) = make_discussion("Smith")
    return subject


def bodies(user, statement) -> list[str]:
    return [c.body for c in comments_visible_to(user=user, statement=statement)]


def submit(statement, user):
    return feedback_submit(feedback=feedback_start(statement=statement, auditor=user), user=user)


def test_blind_rule_other_coders_comments_wait_until_you_submit(
    subject, auditor, second_auditor, admin_user
):
    comment_add(statement=subject, author=second_auditor, body="I think anxiety is up")
    comment_add(statement=subject, author=admin_user, body="Guidance: code the move")
    comment_add(statement=subject, author=auditor, body="mine")
    assert bodies(auditor, subject) == ["Guidance: code the move", "mine"]
    assert bodies(admin_user, subject) == [
        "I think anxiety is up",
        "Guidance: code the move",
        "mine",
    ]
    submit(subject, auditor)
    assert bodies(auditor, subject) == ["I think anxiety is up", "Guidance: code the move", "mine"]


def test_blind_sample_keeps_others_comments_hidden_until_submit(
    subject, auditor, second_auditor, admin_user
):
    BlindReview.objects.create(statement=subject, marked_by=admin_user)
    submit(subject, second_auditor)
    comment_add(statement=subject, author=second_auditor, body="hint")
    feedback_start(statement=subject, auditor=auditor)  # a draft is not a submission
    assert bodies(auditor, subject) == []


def test_comments_about_a_coding_stay_with_its_auditor_and_admins(
    subject, auditor, second_auditor, admin_user
):
    mine = submit(subject, auditor)
    submit(subject, second_auditor)
    comment_add(statement=subject, author=admin_user, body="about alice", feedback=mine)
    assert bodies(auditor, subject) == ["about alice"]
    assert bodies(second_auditor, subject) == []  # even after submitting
    with pytest.raises(NotAllowed):
        comment_add(statement=subject, author=second_auditor, body="x", feedback=mine)


def test_a_rejection_is_a_comment_and_the_auditor_replies_then_resubmits(
    subject, auditor, admin_user
):
    feedback = submit(subject, auditor)
    feedback = feedback_reject(feedback=feedback, admin=admin_user, reason="Add the move")
    assert feedback.rejection_reason == "Add the move"  # kept for older clients
    reason = Comment.objects.get(kind="rejection")
    assert (reason.feedback, reason.author, reason.body) == (feedback, admin_user, "Add the move")
    assert comments_unread_count(user=auditor) == 1
    comment_add(statement=subject, author=auditor, body="Done, see v3", feedback=feedback)
    assert comments_unread_count(user=auditor) == 0  # writing in a thread reads it
    assert comments_unread_summary(user=admin_user).by_statement == {subject.pk: 1}
    feedback = feedback_save(
        feedback=feedback, user=auditor, edited_extraction=feedback.edited_extraction,
        base_version=feedback.version,
    )  # fmt: skip
    assert feedback_submit(feedback=feedback, user=auditor).status == "submitted"
    assert [c.kind for c in comments_visible_to(user=admin_user, statement=subject)] == [
        "rejection", "comment",
    ]  # fmt: skip


def test_mentions_notify_users_who_may_read_the_comment(
    subject, auditor, second_auditor, admin_user, outsider
):
    comment = comment_add(
        statement=subject, author=admin_user,
        body="@alice and @bob. Also @mallory, @nobody and mail@alice.example",
    )  # fmt: skip
    assert sorted(comment.notified) == ["alice", "bob"]  # outsider has no role
    mine = submit(subject, auditor)
    private = comment_add(statement=subject, author=admin_user, body="@bob look", feedback=mine)
    assert private.notified == []  # bob may not read a comment about alice's coding
    assert Notification.objects.filter(user=second_auditor).count() == 1
    thread_mark_read(statement=subject, user=second_auditor)
    assert not Notification.objects.filter(user=second_auditor, read_at__isnull=True).exists()


def test_mentioned_usernames():
    assert mentioned_usernames("hi @a.b, @c-d. @a.b again; x@y") == ["a.b", "c-d"]


def test_read_markers_count_only_what_the_user_may_see(
    subject, auditor, second_auditor, admin_user
):
    comment_add(statement=subject, author=second_auditor, body="hidden from alice")
    assert comments_unread_count(user=auditor) == 0
    comment_add(statement=subject, author=admin_user, body="for everyone")
    assert comments_unread_summary(user=auditor).by_statement == {subject.pk: 1}
    thread_mark_read(statement=subject, user=auditor)
    assert comments_unread_count(user=auditor) == 0
    submit(subject, auditor)  # bob's comment is revealed: older than the marker, yet unread
    assert comments_unread_summary(user=auditor).by_statement == {subject.pk: 1}
    thread_mark_read(statement=subject, user=auditor)
    assert comments_unread_count(user=auditor) == 0


def test_the_unread_summary_counts_as_the_per_statement_reads(
    subject, auditor, second_auditor, admin_user
):
    """The summary (read once per page) gives the same counts as the count and the
    per-statement read, through the blind rule's states; by discussion they add up."""
    _, (_, other, _) = make_discussion("Jones")

    def agrees(user) -> None:
        summary = comments_unread_summary(user=user)
        assert summary.by_statement == Counter(c.statement_id for c in comments_unread(user=user))
        assert summary.total == comments_unread_count(user=user)
        discussions = [subject.discussion_id, other.discussion_id]
        expected = {
            d: n
            for d in discussions
            if (n := sum(c for s, c in summary.by_statement.items() if s in by_discussion[d]))
        }
        assert summary.by_discussion(discussions) == expected
        assert summary.by_discussion([other.discussion_id]) == {
            k: v for k, v in expected.items() if k == other.discussion_id
        }

    by_discussion = {subject.discussion_id: {subject.pk}, other.discussion_id: {other.pk}}
    comment_add(statement=subject, author=second_auditor, body="hidden from alice")
    comment_add(statement=other, author=admin_user, body="one")
    comment_add(statement=other, author=admin_user, body="two")
    comment_add(statement=subject, author=admin_user, body="for everyone")
    for user in (auditor, second_auditor, admin_user):
        agrees(user)
    assert comments_unread_summary(user=auditor).by_discussion(
        [subject.discussion_id, other.discussion_id]
    ) == {subject.discussion_id: 1, other.discussion_id: 2}
    thread_mark_read(statement=subject, user=auditor)
    submit(subject, auditor)  # bob's comment is revealed: older than the marker, yet unread
    agrees(auditor)
    assert comments_unread_summary(user=auditor).by_statement == {subject.pk: 1, other.pk: 2}
    # An admin's read (in SQL of its own): others' comments past the admin's marker (writing
    # in a thread reads it).
    comment_add(statement=other, author=auditor, body="a question")
    comment_add(statement=subject, author=second_auditor, body="after the admin's comment")
    agrees(admin_user)
    assert comments_unread_summary(user=admin_user).by_statement == {subject.pk: 1, other.pk: 1}
    thread_mark_read(statement=other, user=admin_user)
    comment_add(statement=other, author=second_auditor, body="after the marker")
    agrees(admin_user)
    assert comments_unread_summary(user=admin_user).by_statement == {subject.pk: 1, other.pk: 1}


@pytest.mark.parametrize(
    "page, shown",
    [
        ("/audit/queue/", [b'data-testid="queue-unread">1 unread comment<', b"unread-threads"]),
        ("/audit/discussions/{discussion}/", [b'data-testid="card-unread">1 unread<']),
    ],
)
def test_a_page_reads_the_unread_comments_once(auditor_client, subject, admin_user, page, shown):
    """The header's badge and what the page shows (the home's threads and the queue's rows,
    a discussion's cards) share one read: the query that finds thread markers set before a
    submission runs once per page, not once per place that shows unread comments."""
    comment_add(statement=subject, author=admin_user, body="guidance")
    url = page.format(discussion=subject.discussion_id)
    with CaptureQueriesContext(connection) as queries:
        response = auditor_client.get(url)
    assert response.status_code == 200
    assert b'aria-label="1 unread comment"' in response.content  # the header's badge
    for part in shown:
        assert part in response.content
    assert stale_marker_reads(queries) == 1


def test_the_statement_page_reads_its_thread_so_the_header_counts_it_read(
    auditor_client, auditor, subject, admin_user
):
    """The statement page shows its thread, which marks it read: its card still says what was
    unread when it opened, and the header's badge, read after, no longer counts it."""
    comment_add(statement=subject, author=admin_user, body="guidance")
    with CaptureQueriesContext(connection) as queries:
        response = auditor_client.get(f"/audit/statements/{subject.pk}/")
    assert b'data-testid="card-unread">1 unread<' in response.content
    assert b"unread comment" not in response.content
    assert stale_marker_reads(queries) == 1  # the card's, amended once the thread is read
    assert comments_unread_count(user=auditor) == 0


def test_reading_a_thread_leaves_the_other_threads_unread_in_the_header(
    auditor_client, auditor, subject, admin_user
):
    """The header's count after the statement page read its thread is the page's read less
    that thread: what a fresh read finds."""
    _, (_, other, _) = make_discussion("Jones")
    comment_add(statement=subject, author=admin_user, body="guidance")
    comment_add(statement=other, author=admin_user, body="one")
    comment_add(statement=other, author=admin_user, body="two")
    response = auditor_client.get(f"/audit/statements/{subject.pk}/")
    assert comments_unread_count(user=auditor) == 2
    assert b'aria-label="2 unread comments"' in response.content


def stale_marker_reads(queries: CaptureQueriesContext) -> int:
    """How many times the page read the user's unread comments (the query that finds thread
    markers set before a submission runs once per read)."""
    sql = [q["sql"] for q in queries.captured_queries]
    return len([q for q in sql if '"audit_threadread"."read_at" < (SELECT' in q])


def test_every_comment_is_in_the_audit_log(subject, admin_user):
    comment = comment_add(statement=subject, author=admin_user, body="logged")
    entry = AuditLogEntry.objects.get(action="comment")
    assert entry.object_id == str(comment.pk) and "logged" in entry.message


@pytest.mark.parametrize(
    "body, message",
    [("", "must not be empty"), ("a\x00", "NUL"), ("a\udfff", "lone surrogate"), (3, "string")],
)
def test_bad_bodies_are_refused(subject, auditor, body, message):
    with pytest.raises(WorkflowError, match=message):
        comment_add(statement=subject, author=auditor, body=body)
    assert not Comment.objects.exists()


# --- API -------------------------------------------------------------------------------------


def url(statement) -> str:
    return f"/api/v1/statements/{statement.pk}/comments/"


def test_api_thread_roles_and_blind_scoping(api, subject, auditor, second_auditor, admin_user):
    created = api(second_auditor).post(url(subject), {"body": "hint @carol"}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["notified"] == ["carol"]
    api(admin_user).post(url(subject), {"body": "guidance"}, format="json")
    seen = [c["body"] for c in api(auditor).get(url(subject)).json()["results"]]
    assert seen == ["guidance"]
    seen = [c["body"] for c in api(admin_user).get(url(subject)).json()["results"]]
    assert seen == ["hint @carol", "guidance"]
    assert api().get(url(subject)).status_code == 401
    assert api(auditor).get("/api/v1/statements/999999/comments/").status_code == 404


def test_api_reply_to_a_rejection_and_inbox(api, subject, auditor, admin_user):
    feedback = submit(subject, auditor)
    rejected = api(admin_user).post(
        f"/api/v1/feedback/{feedback.pk}/reject/", {"reason": "Add the move"}, format="json"
    )
    assert rejected.status_code == 200
    inbox = api(auditor).get("/api/v1/inbox/").json()
    assert inbox["unread"] == 1 and inbox["threads"][0]["statement"] == subject.pk
    reply = api(auditor).post(
        url(subject), {"body": "Added it", "feedback": feedback.pk}, format="json"
    )
    assert reply.status_code == 201 and reply.json()["feedback"] == feedback.pk
    thread = api(auditor).get(url(subject)).json()["results"]
    assert [(c["kind"], c["body"]) for c in thread] == [
        ("rejection", "Add the move"), ("comment", "Added it"),
    ]  # fmt: skip
    assert api(admin_user).get("/api/v1/inbox/").json()["unread"] == 1
    read = api(admin_user).post(url(subject) + "read/", format="json").json()
    assert read["unread"] == 0 and read["last_read"] == thread[-1]["id"]


def test_api_comment_on_someone_elses_coding_is_404(api, subject, auditor, second_auditor):
    theirs = submit(subject, second_auditor)
    response = api(auditor).post(url(subject), {"body": "x", "feedback": theirs.pk}, format="json")
    assert response.status_code == 404 and "feedback" in response.json()["detail"]
    assert not Comment.objects.exists()


def test_api_feedback_of_another_statement_is_400(api, subject, auditor):
    _, (_, other, _) = make_discussion("Jones")
    feedback = submit(other, auditor)
    response = api(auditor).post(
        url(subject), {"body": "x", "feedback": feedback.pk}, format="json"
    )
    assert response.status_code == 400 and "not statement" in response.json()["detail"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "body"),
        ({"body": 1}, "body"),
        ({"body": ["x"]}, "body"),
        ({"body": ""}, "body"),
        ({"body": "x", "feedback": "1"}, "feedback"),
        ({"body": "x", "feedback": 0}, "feedback"),
        ({"body": "x", "feedback": 2**64}, "out of range"),
        ({"body": "x" * 100_001}, "body"),
        ({"body": "x", "extra": 1}, "extra"),
    ],
)
def test_api_bad_input_is_400_naming_the_field(api, subject, auditor, body, field):
    response = api(auditor).post(url(subject), body, format="json")
    assert response.status_code == 400, response.json()
    assert field in json.dumps(response.json())
    assert not Comment.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [
        '{"body": "a\\u0000"}',
        '{"body": "a\\udc00"}',
        '{"body": ' + "[" * 300 + "]" * 300 + "}",
        '{"body": {"a": ' * 100 + "1" + "}" * 101,
    ],
)
def test_api_nul_surrogates_and_deep_json_are_400(api, subject, auditor, raw):
    response = api(auditor).generic("POST", url(subject), raw, content_type="application/json")
    assert response.status_code == 400
    assert not Comment.objects.exists()


# --- pages -----------------------------------------------------------------------------------


def test_page_thread_posts_and_marks_read(auditor_client, subject, auditor, admin_user):
    comment_add(statement=subject, author=admin_user, body="guidance @alice")
    home = auditor_client.get("/")
    assert b'data-testid="unread-threads"' in home.content and b"badge" in home.content
    assert b'data-testid="queue-unread">1 unread comment<' in home.content
    discussion = auditor_client.get(f"/audit/discussions/{subject.discussion_id}/")
    assert b'data-testid="card-unread">1 unread<' in discussion.content
    page = auditor_client.get(f"/audit/statements/{subject.pk}/comments/")
    assert b"guidance @alice" in page.content
    assert comments_unread_count(user=auditor) == 0
    response = auditor_client.post(
        f"/audit/statements/{subject.pk}/comments/", {"body": "thanks", "about": ""},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert response.status_code == 200 and b"thanks" in response.content
    assert auditor_client.get("/audit/inbox/").status_code == 200


def test_page_bad_comment_is_a_4xx(auditor_client, subject):
    response = auditor_client.post(f"/audit/statements/{subject.pk}/comments/", {"body": " "})
    assert response.status_code == 400 and b"must not be empty" in response.content
    response = auditor_client.post(
        f"/audit/statements/{subject.pk}/comments/", {"body": "x", "about": "abc"}
    )
    assert response.status_code == 400
    assert not Comment.objects.exists()


def test_page_review_shows_the_thread(admin_client, subject, auditor, admin_user):
    feedback = submit(subject, auditor)
    feedback_reject(feedback=feedback, admin=admin_user, reason="Add the move")
    page = admin_client.get(f"/audit/statements/{subject.pk}/review/")
    assert b'data-testid="thread"' in page.content and b"Add the move" in page.content


def test_pages_need_a_role(client, outsider, subject):
    for path in (
        f"/audit/statements/{subject.pk}/comments/",
        "/audit/inbox/",
        "/audit/guidelines/",
    ):
        assert client.get(path).status_code == 302  # to the login page
    client.force_login(outsider)
    for path in (
        f"/audit/statements/{subject.pk}/comments/",
        "/audit/inbox/",
        "/audit/guidelines/",
    ):
        assert client.get(path).status_code == 403


def test_a_repeated_comment_within_the_window_is_the_first_one(subject, auditor, admin_user):
    first = comment_add(statement=subject, author=admin_user, body="look @alice")
    again = comment_add(statement=subject, author=admin_user, body="  look @alice ")
    assert again.pk == first.pk and first.created and not again.created
    assert Comment.objects.count() == 1
    assert Notification.objects.filter(user=auditor).count() == 1
    assert AuditLogEntry.objects.filter(action=AuditLogEntry.Action.COMMENT).count() == 1
    # another body, another author, another coding or later than the window: a new comment
    comment_add(statement=subject, author=admin_user, body="look again")
    comment_add(statement=subject, author=auditor, body="look @alice")
    feedback = submit(subject, auditor)
    comment_add(statement=subject, author=admin_user, body="look @alice", feedback=feedback)
    Comment.objects.filter(pk=first.pk).update(created_at=first.created_at - REPEAT_WINDOW)
    later = comment_add(statement=subject, author=admin_user, body="look @alice")
    assert later.created and later.pk != first.pk
    assert Comment.objects.count() == 5


def test_api_repeat_answers_200_with_the_first_comment(api, subject, auditor, admin_user):
    first = api(admin_user).post(url(subject), {"body": "hi @alice"}, format="json")
    again = api(admin_user).post(url(subject), {"body": "hi @alice"}, format="json")
    assert (first.status_code, again.status_code) == (201, 200), again.json()
    assert again.json()["id"] == first.json()["id"]
    assert (first.json()["notified"], again.json()["notified"]) == (["alice"], [])
    assert Comment.objects.count() == 1 and Notification.objects.count() == 1


def test_page_repeat_stores_one_comment(auditor_client, subject):
    for _ in range(2):
        response = auditor_client.post(
            f"/audit/statements/{subject.pk}/comments/", {"body": "twice", "about": ""}
        )
        assert response.status_code == 302
    assert Comment.objects.filter(body="twice").count() == 1
    page = auditor_client.get(f"/audit/statements/{subject.pk}/comments/")
    assert page.content.count(b"twice") >= 1 and b"Comment already added." in page.content
