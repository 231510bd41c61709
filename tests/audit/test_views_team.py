"""The team workflow's pages: the review home, assigning, my assignments, submit-and-next,
skip, approve-and-next, the skipped list and the team page (sorting, CSV, JSON)."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.models import Assignment, AuditLogEntry, Feedback, FeedbackRevision
from audit.selectors.progress import Moment, active_time, auditor_progress
from audit.services import feedback_reject, feedback_start, feedback_submit
from audit.services.assignments import AssignmentPlan, assignments_create
from tests.audit.test_views_support import HX, hx_post, make_scene
from tests.factories import FeedbackFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    return make_scene()


def assign_all(scene, admin, auditors, **extra):
    plan = AssignmentPlan(discussions=[scene.discussion], auditors=auditors, **extra)
    return assignments_create(plan=plan, admin=admin)


def test_admins_land_on_the_review_home(client, scene, auditor, admin_user):
    feedback_submit(feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor)
    client.force_login(admin_user)
    html = client.get(reverse("home")).content.decode()
    assert "Review home" in html and "Start reviewing (1 waiting)" in html
    assert reverse("audit:statement_review", args=[scene.first.pk]) in html
    assert "alice" in html  # waiting per auditor
    client.force_login(auditor)
    assert "My queue" in client.get(reverse("home")).content.decode()


def test_assign_page_assigns_and_logs(admin_client, scene, auditor, second_auditor):
    page = admin_client.get(reverse("audit:assignments"))
    assert page.status_code == 200 and "alice" in page.content.decode()
    response = admin_client.post(
        reverse("audit:assignments"),
        {
            "discussions": [scene.discussion.pk],
            "auditors": [auditor.pk, second_auditor.pk],
            "strategy": "round_robin",
            "overlap_percent": 50,
            "overlap_k": 2,
        },
    )
    assert response.status_code == 302
    assert Assignment.objects.filter(auditor=auditor).exists()
    assert Assignment.objects.filter(overlap=True).exists()
    assert AuditLogEntry.objects.filter(action="assign").exists()
    listed = admin_client.get(reverse("audit:assignments")).content.decode()
    assert "Unassign open" in listed


def test_assign_page_refuses_a_bad_plan_and_stores_nothing(admin_client, scene, auditor):
    response = admin_client.post(
        reverse("audit:assignments"),
        {
            "discussions": [scene.discussion.pk],
            "auditors": [auditor.pk],
            "strategy": "round_robin",
            "overlap_percent": 20,
            "overlap_k": 2,
        },
    )
    assert response.status_code == 400
    assert "auditors per statement" in response.content.decode()
    assert not Assignment.objects.exists()


def test_my_queue_lists_my_assignments_first_with_a_progress_bar(
    client, scene, auditor, admin_user
):
    assign_all(scene, admin_user, [auditor], due=timezone.localdate())
    client.force_login(auditor)
    html = client.get(reverse("home")).content.decode()
    assert 'data-testid="my-assignments"' in html and "2 to code" in html
    assert 'role="progressbar"' in html and "2 assigned, 0% done" in html
    assert html.index("my-assignments") < html.index('id="queue"')


def test_code_my_next_and_submit_and_next_open_the_next_statement(
    client, scene, auditor, admin_user
):
    assign_all(scene, admin_user, [auditor])
    client.force_login(auditor)
    response = client.post(reverse("audit:code_next"))
    first = Feedback.objects.get(statement=scene.first, auditor=auditor)
    assert response.url == reverse("audit:feedback_edit", args=[first.pk])
    response = hx_post(
        client, reverse("audit:feedback_submit_next", args=[first.pk]), {"version": first.version}
    )
    assert response.status_code == 204
    second = Feedback.objects.get(statement=scene.second, auditor=auditor)
    # The next editor offers to undo the submit just made.
    assert response["HX-Redirect"] == (
        reverse("audit:feedback_edit", args=[second.pk]) + f"?submitted={first.pk}"
    )
    assert Assignment.objects.get(statement=scene.first).status == "submitted"
    # The editor's own button saves, submits and moves on; nothing left: back to the queue.
    response = client.post(
        reverse("audit:feedback_save", args=[second.pk]),
        {"version": second.version, "op": "submit_next"},
        **HX,
    )
    assert response.status_code == 204 and response["HX-Redirect"] == reverse("home")
    assert Feedback.objects.get(pk=second.pk).status == "submitted"


def test_skip_takes_a_reason_and_reaches_the_admins_list(
    client, scene, auditor, second_auditor, admin_user
):
    assign_all(scene, admin_user, [auditor])
    client.force_login(auditor)
    missing = hx_post(client, reverse("audit:statement_skip", args=[scene.first.pk]), {})
    assert missing.status_code == 400 and "reason" in missing.content.decode()
    response = client.post(
        reverse("audit:statement_skip", args=[scene.first.pk]),
        {"reason": "needs_context", "note": "Which brother?"},
    )
    assert response.status_code == 302  # on to the next statement
    skipped = Assignment.objects.get(statement=scene.first)
    assert (skipped.status, skipped.skip_note) == ("skipped", "Which brother?")
    client.force_login(admin_user)
    html = client.get(reverse("audit:skipped")).content.decode()
    assert "Needs context" in html and "Which brother?" in html
    moved = client.post(
        reverse("audit:reassign", args=[skipped.pk]), {"auditor": second_auditor.pk}
    )
    assert moved.status_code == 302
    skipped.refresh_from_db()
    assert (skipped.auditor, skipped.status) == (second_auditor, "open")


def test_approve_and_next_opens_the_next_item_of_the_stream(
    admin_client, scene, auditor, second_auditor
):
    one = feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )
    feedback_submit(feedback=feedback_start(statement=scene.second, auditor=auditor), user=auditor)
    page = admin_client.get(reverse("audit:statement_review", args=[scene.first.pk]))
    assert (
        "Approve and next" in page.content.decode()
        and 'data-key="next-review"' in page.content.decode()
    )
    response = hx_post(
        admin_client, reverse("audit:feedback_approve", args=[one.pk]),
        {"version": one.version, "and_next": "1"},
    )  # fmt: skip
    assert response.status_code == 204
    assert response["HX-Redirect"] == reverse("audit:statement_review", args=[scene.second.pk])
    assert Feedback.objects.get(pk=one.pk).status == "approved"


def test_needs_changes_opens_the_rejected_statement_with_the_reason(
    client, scene, auditor, admin_user
):
    feedback = feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )
    feedback_reject(feedback=feedback, admin=admin_user, reason="Mary is his sister")
    client.force_login(auditor)
    html = client.get(reverse("home")).content.decode()
    assert 'data-testid="needs-changes"' in html and "Mary is his sister" in html
    editor_url = reverse("audit:feedback_edit", args=[feedback.pk])
    assert editor_url in html
    assert "Mary is his sister" in client.get(editor_url).content.decode()


def test_needs_changes_lists_the_first_twenty_with_the_total(client, auditor):
    FeedbackFactory.create_batch(
        23, auditor=auditor, status=Feedback.Status.REJECTED, rejection_reason="Recheck"
    )
    client.force_login(auditor)
    html = client.get(reverse("home")).content.decode()
    section = html[html.index('data-testid="needs-changes"') :]
    assert '<span class="chip bad">23</span>' in section
    assert section.count("Recheck") == 20
    assert "The first 20 of 23" in section and "?status=needs_changes#queue" in section


def test_team_page_sorts_and_downloads(client, scene, auditor, second_auditor, admin_user):
    assign_all(scene, admin_user, [auditor, second_auditor], strategy="balanced")
    feedback_submit(feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor)
    client.force_login(admin_user)
    page = client.get(reverse("audit:team"), {"sort": "-submitted"}).content.decode()
    assert page.index('data-row="alice"') < page.index('data-row="bob"')
    assert 'aria-sort="descending"' in page
    rows = list(
        csv.DictReader(
            io.StringIO(client.get(reverse("audit:team"), {"download": "csv"}).content.decode())
        )
    )
    alice = next(r for r in rows if r["table"] == "auditors" and r["label"] == "alice")
    assert (alice["assigned"], alice["submitted"]) == ("2", "1")
    body = json.loads(client.get(reverse("audit:team"), {"download": "json"}).content)
    assert {r["label"] for r in body["auditors"]} >= {"alice", "bob"}
    assert body["discussions"][0]["assigned"] == 2
    client.force_login(auditor)
    assert client.get(reverse("audit:team")).status_code == 403


def test_hidden_unassigned_work_leaves_other_discussions_out_of_the_queue(
    client, scene, auditor, settings
):
    settings.UNASSIGNED_WORK_VISIBLE = False
    client.force_login(auditor)
    html = client.get(reverse("audit:my_queue")).content.decode()
    assert scene.discussion.summary not in html


# --- active time -----------------------------------------------------------------------------------


def test_active_time_leaves_out_idle_gaps():
    t0 = timezone.now()
    moments = [
        Moment(t0, 1, 10, 1),
        Moment(t0 + timedelta(seconds=60), 1, 10, 1),
        Moment(t0 + timedelta(seconds=120), 1, 11, 1),  # moved on to statement 11
        Moment(t0 + timedelta(hours=2), 1, 12, 1),  # back after lunch: not counted
        Moment(t0 + timedelta(hours=2, seconds=30), 1, 12, 1),
        Moment(t0, 2, 10, 1),  # another auditor's clock is their own
    ]
    moments.sort(key=lambda m: (m.auditor_id, m.at))
    spent = active_time(moments, idle_seconds=300)
    by_statement: dict[int, float] = {}
    for s in spent:
        by_statement[s.statement_id] = by_statement.get(s.statement_id, 0) + s.seconds
    assert by_statement == {10: 60, 11: 60, 12: 30}


def test_progress_reads_coding_time_from_the_history(scene, auditor):
    feedback = feedback_submit(
        feedback=feedback_start(statement=scene.first, auditor=auditor), user=auditor
    )
    start = timezone.now() - timedelta(minutes=10)
    revisions = list(FeedbackRevision.objects.filter(feedback=feedback).order_by("id"))
    FeedbackRevision.objects.filter(pk=revisions[0].pk).update(created_at=start, updated_at=start)
    FeedbackRevision.objects.filter(pk=revisions[-1].pk).update(
        created_at=start + timedelta(minutes=3), updated_at=start + timedelta(minutes=3)
    )
    (row,) = auditor_progress(auditors=[auditor])
    assert row.active_seconds == pytest.approx(180)
    assert row.median_seconds == pytest.approx(180)
    assert (row.coded, row.submitted, row.per_day) == (1, 1, 1.0)


def test_reassign_one_auditors_open_statements(
    admin_client, scene, auditor, second_auditor, admin_user
):
    assign_all(scene, admin_user, [auditor])
    response = admin_client.post(
        reverse("audit:reassign_open"),
        {"discussion": scene.discussion.pk, "auditor": auditor.pk, "to": second_auditor.pk},
    )
    assert response.status_code == 302
    assert set(Assignment.objects.values_list("auditor__username", flat=True)) == {"bob"}
    assert AuditLogEntry.objects.filter(action="reassign").count() == 2


@pytest.mark.parametrize("htmx", [False, True])
def test_skip_of_a_statement_nobody_is_assigned_to(client, scene, auditor, admin_user, htmx):
    """With unassigned work visible, skipping an unassigned statement records a skipped
    assignment with its discussion (it answered 500 without it)."""
    client.force_login(auditor)
    url, data = reverse("audit:statement_skip", args=[scene.first.pk]), {"reason": "unclear"}
    response = hx_post(client, url, data) if htmx else client.post(url, data)
    assert response.status_code in (200, 204, 302)
    skipped = Assignment.objects.get(statement=scene.first, auditor=auditor)
    assert (skipped.status, skipped.discussion_id) == ("skipped", scene.discussion.pk)
