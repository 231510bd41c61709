"""Admin review: the queue, side-by-side comparison, approve, reject, bulk approve, export."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.services import feedback_approve, feedback_save, feedback_start, feedback_submit
from tests.audit.test_views_support import HX, hx_get, hx_post, make_scene

pytestmark = pytest.mark.django_db
S = Feedback.Status


def submitted(statement, user, edit=None) -> Feedback:
    feedback = feedback_start(statement=statement, auditor=user)
    if edit:
        payload = feedback.edited_extraction
        edit(payload)
        feedback = feedback_save(
            feedback=feedback, user=user, edited_extraction=payload, base_version=1
        )
    return feedback_submit(feedback=feedback, user=user)


def rename_john(payload):
    payload["people"][0]["name"] = "Johnny"


def add_aunt_drop_bond(payload):
    payload["people"].append({"id": -20, "name": "Aunt", "last_name": "May"})
    payload["pair_bonds"] = []


@pytest.fixture
def scene():
    return make_scene()


def test_review_queue_groups_by_discussion_and_auditor(
    admin_client, scene, auditor, second_auditor
):
    submitted(scene.first, auditor)
    submitted(scene.second, auditor)
    submitted(scene.first, second_auditor)
    html = admin_client.get(reverse("audit:review_queue")).content.decode()
    assert "3 submitted statements in 2 groups" in html
    assert "Approve all 2" in html and "Approve all 1" in html
    partial = hx_get(admin_client, reverse("audit:review_queue"), {"auditor": second_auditor.pk})
    assert "<html" not in partial.content.decode()
    assert "1 submitted statement in 1 group" in partial.content.decode()


def test_review_shows_the_ai_and_each_auditors_coding_with_differences(
    admin_client, scene, auditor, second_auditor
):
    submitted(scene.first, auditor, rename_john)
    submitted(scene.first, second_auditor, add_aunt_drop_bond)
    response = admin_client.get(reverse("audit:statement_review", args=[scene.first.pk]))
    html = response.content.decode()
    assert html.count('<section class="review-col') == 3  # AI + two auditors
    assert "changed: name" in html  # alice renamed John
    assert "Johnny Smith" in html
    assert "Aunt May" in html and "is-added" in html  # bob added a person
    assert "is-removed" in html  # and dropped the pair bond
    assert html.count(">Approve and next<") == 2
    assert 'data-key="approve"' not in html  # two submissions: "a" would be ambiguous


def test_approving_one_unapproves_the_other(
    admin_client, scene, auditor, second_auditor, admin_user
):
    first = submitted(scene.first, auditor)
    feedback_approve(feedback=first, admin=admin_user)
    second = submitted(scene.first, second_auditor)
    url = reverse("audit:feedback_approve", args=[second.pk])
    # Without an explicit replace, approved ground truth is never replaced.
    refused = hx_post(admin_client, url, {"version": second.version})
    assert refused.status_code == 409
    assert "Another feedback on this statement is approved" in refused.content.decode()
    assert Feedback.objects.get(pk=first.pk).status == S.APPROVED
    response = hx_post(admin_client, url, {"version": second.version, "replace": "1"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Approved bob&#x27;s coding as ground truth." in html
    assert 'id="review-' in html and "<html" not in html
    statuses = dict(Feedback.objects.values_list("auditor__username", "status"))
    assert statuses == {"alice": S.SUBMITTED, "bob": S.APPROVED}


def test_approve_without_javascript_redirects_back_to_the_review(admin_client, scene, auditor):
    feedback = submitted(scene.first, auditor)
    url = reverse("audit:feedback_approve", args=[feedback.pk])
    response = admin_client.post(url, {"version": feedback.version})
    assert response.status_code == 302
    assert response.url == reverse("audit:statement_review", args=[scene.first.pk])


def test_drafts_cannot_be_approved(admin_client, scene, auditor):
    draft = feedback_start(statement=scene.first, auditor=auditor)
    url = reverse("audit:feedback_approve", args=[draft.pk])
    response = hx_post(admin_client, url, {"version": draft.version})
    assert response.status_code == 409
    assert response["HX-Retarget"] == f"#review-msg-{scene.first.pk}"
    assert "Only submitted feedback can be approved" in response.content.decode()


def test_reject_needs_a_reason(admin_client, scene, auditor):
    feedback = submitted(scene.first, auditor)
    url = reverse("audit:feedback_reject", args=[feedback.pk])
    response = hx_post(admin_client, url, {"reason": "  "})
    assert response.status_code == 422
    assert "needs a reason" in response.content.decode()
    assert Feedback.objects.get().status == S.SUBMITTED


def test_rejected_feedback_goes_back_to_the_auditor_as_needs_changes(
    client, scene, auditor, admin_user
):
    feedback = submitted(scene.first, auditor)
    client.force_login(admin_user)
    url = reverse("audit:feedback_reject", args=[feedback.pk])
    response = hx_post(client, url, {"reason": "Mary is his sister", "version": feedback.version})
    assert response.status_code == 200
    feedback.refresh_from_db()
    assert (feedback.status, feedback.rejection_reason) == (S.REJECTED, "Mary is his sister")
    client.force_login(auditor)
    queue = client.get(reverse("home"), {"status": "needs_changes"}).content.decode()
    assert "The Smith family" in queue and "Needs changes" in queue
    page = client.get(reverse("audit:discussion", args=[scene.discussion.pk])).content.decode()
    assert "Mary is his sister" in page


def test_bulk_approve_one_auditors_submissions_in_a_discussion(
    admin_client, scene, auditor, second_auditor
):
    items = [submitted(scene.first, auditor), submitted(scene.second, auditor)]
    submitted(scene.first, second_auditor)
    url = reverse("audit:bulk_approve", args=[scene.discussion.pk])
    versions = [f"{f.pk}:{f.version}" for f in items]
    response = hx_post(admin_client, url, {"auditor": auditor.pk, "item": versions})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Approved 2 statements coded by alice." in html
    assert 'id="review-queue"' in html and "<html" not in html
    assert set(Feedback.objects.filter(auditor=auditor).values_list("status", flat=True)) == {
        S.APPROVED
    }
    assert Feedback.objects.get(auditor=second_auditor).status == S.SUBMITTED


def test_bulk_approve_of_my_own_submissions_is_refused(admin_client, scene, admin_user):
    own = submitted(scene.first, admin_user)
    url = reverse("audit:bulk_approve", args=[scene.discussion.pk])
    item = f"{own.pk}:{own.version}"
    response = hx_post(admin_client, url, {"auditor": admin_user.pk, "item": item})
    assert response.status_code == 403
    assert Feedback.objects.get().status == S.SUBMITTED


def test_bulk_approve_unknown_auditor_is_404(admin_client, scene):
    url = reverse("audit:bulk_approve", args=[scene.discussion.pk])
    assert admin_client.post(url, {"auditor": 999}, **HX).status_code == 404


def test_export_downloads_the_approved_ground_truth(admin_client, scene, auditor, admin_user):
    url = reverse("audit:discussion_export", args=[scene.discussion.pk])
    assert admin_client.get(url).status_code == 404  # nothing approved yet
    feedback_approve(feedback=submitted(scene.first, auditor, rename_john), admin=admin_user)
    response = admin_client.get(url)
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = json.loads(response.content)
    statement = data["discussions"][0]["statements"][0]
    assert statement["approved_feedback"]["edited_extraction"]["people"][0]["name"] == "Johnny"


def test_single_submission_can_be_approved_with_the_a_key(admin_client, scene, auditor):
    submitted(scene.first, auditor)
    html = admin_client.get(
        reverse("audit:statement_review", args=[scene.first.pk])
    ).content.decode()
    assert 'data-key="approve"' in html
    assert "Last one waiting." in html or "Next in queue" in html


def test_the_review_and_statement_pages_link_to_the_statements_place_in_the_run_shown(
    admin_client, scene, auditor
):
    """Both links back to the discussion (crumb and button) keep the run the page shows and
    open the window that holds the statement, scrolled to it."""
    submitted(scene.first, auditor)
    pk, discussion = scene.first.pk, scene.discussion.pk
    place = f'href="/audit/discussions/{discussion}/?run={scene.run.pk}&amp;at={pk}#stmt-{pk}"'
    review = admin_client.get(reverse("audit:statement_review", args=[pk]), {"run": scene.run.pk})
    assert review.content.decode().count(place) == 2
    page = admin_client.get(reverse("audit:statement", args=[pk]))
    assert place in page.content.decode()  # the latest run, named
