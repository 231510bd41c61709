"""Undo submit: its auditor takes a submission back, logged, until a reviewer opens it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.services import WrongState, feedback_start, feedback_submit
from audit.services.feedback import feedback_unsubmit
from tests.audit.test_pages_at_scale import queries_of
from tests.audit.test_views_support import hx_post, make_scene
from tests.factories import StatementFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted(auditor):
    scene = make_scene()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    return feedback_submit(feedback=feedback, user=auditor, base_version=feedback.version)


def test_the_author_takes_a_submit_back_as_a_logged_act(submitted, auditor):
    undone = feedback_unsubmit(feedback=submitted, user=auditor, base_version=submitted.version)
    assert undone.status == Feedback.Status.DRAFT
    assert undone.version == submitted.version + 1
    assert [r.action for r in undone.revisions.order_by("id")] == ["start", "submit", "unsubmit"]


def test_only_the_author_and_only_until_a_reviewer_opens_it(
    submitted, auditor, second_auditor, admin_client
):
    with pytest.raises(WrongState, match="Only its auditor"):
        feedback_unsubmit(feedback=submitted, user=second_auditor)
    response = admin_client.get(reverse("audit:statement_review", args=[submitted.statement_id]))
    assert response.status_code == 200
    with pytest.raises(WrongState, match="A reviewer has opened this submission"):
        feedback_unsubmit(feedback=submitted, user=auditor)
    assert Feedback.objects.get(pk=submitted.pk).status == Feedback.Status.SUBMITTED


def test_not_after_seeing_another_coding(submitted, auditor, second_auditor):
    other = feedback_start(statement=submitted.statement, auditor=second_auditor)
    feedback_submit(feedback=other, user=second_auditor, base_version=other.version)
    with pytest.raises(WrongState, match="showed you the other coding"):
        feedback_unsubmit(feedback=submitted, user=auditor)


def test_the_card_offers_undo_and_the_view_undoes(client, submitted, auditor):
    client.force_login(auditor)
    page = client.get(reverse("audit:statement", args=[submitted.statement_id]))
    assert b'data-testid="undo-submit"' in page.content
    url = reverse("audit:feedback_unsubmit", args=[submitted.pk])
    response = hx_post(client, url, {"version": submitted.version})
    assert response.status_code == 200
    assert Feedback.objects.get(pk=submitted.pk).status == Feedback.Status.DRAFT
    # A repeat (a double click) is refused plainly, and changes nothing.
    again = hx_post(client, url, {"version": submitted.version + 1})
    assert again.status_code == 409
    assert b"not waiting for review" in again.content


def test_the_audit_page_looks_up_every_cards_undo_at_once(client, auditor, second_auditor):
    """One submission or three on the page: the same queries; undo offered on each of the
    coder's submissions, then on each but the one another coder has submitted too."""
    scene = make_scene()
    statements = [scene.first, scene.second]
    statements.append(
        StatementFactory(discussion=scene.discussion, speaker=scene.first.speaker, order=4)
    )  # three cards in full: the page's first
    url = reverse("audit:discussion", args=[scene.discussion.pk])
    client.force_login(auditor)
    counts = []
    for statement in statements:
        feedback = feedback_start(statement=statement, auditor=auditor)
        feedback_submit(feedback=feedback, user=auditor, base_version=feedback.version)
        if statement is statements[0]:
            counts.append(queries_of(client, url))
    counts.append(queries_of(client, url))
    assert counts[0] == counts[1], counts
    assert client.get(url).content.decode().count('data-testid="undo-submit"') == 3
    other = feedback_start(statement=statements[2], auditor=second_auditor)
    feedback_submit(feedback=other, user=second_auditor, base_version=other.version)
    page = client.get(url).content.decode()
    assert page.count('data-testid="undo-submit"') == 2
