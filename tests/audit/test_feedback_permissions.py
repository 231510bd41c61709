"""The workflow rules the screens show, decided once in the feedback service."""

import pytest

from audit.models import Feedback
from audit.services.feedback import (
    feedback_awaits_approval,
    feedback_can_be_rejected,
    feedback_can_submit,
    feedback_opens_in_editor,
)
from tests.factories import FeedbackFactory

pytestmark = pytest.mark.django_db
S = Feedback.Status


@pytest.mark.parametrize(
    ("status", "submittable"),
    [(S.DRAFT, True), (S.REJECTED, True), (S.SUBMITTED, False), (S.APPROVED, False)],
)
def test_only_the_owner_submits_a_draft_or_sent_back_coding(
    auditor, admin_user, status, submittable
):
    feedback = FeedbackFactory(auditor=auditor, status=status)
    assert feedback_can_submit(feedback=feedback, user=auditor) is submittable
    assert feedback_can_submit(feedback=feedback, user=admin_user) is False


def test_approved_ground_truth_opens_in_the_editor_for_admins_only(auditor, admin_user):
    approved = FeedbackFactory(auditor=auditor, status=S.APPROVED)
    assert feedback_opens_in_editor(feedback=approved, user=admin_user)
    assert not feedback_opens_in_editor(feedback=approved, user=auditor)
    draft = FeedbackFactory(status=S.DRAFT)
    assert feedback_opens_in_editor(feedback=draft, user=auditor)


@pytest.mark.parametrize(
    ("status", "approvable", "rejectable"),
    [
        (S.DRAFT, False, False),
        (S.SUBMITTED, True, True),
        (S.APPROVED, False, True),
        (S.REJECTED, False, False),
    ],
)
def test_what_an_admin_may_do_with_a_coding(status, approvable, rejectable):
    feedback = FeedbackFactory(status=status)
    assert feedback_awaits_approval(feedback=feedback) is approvable
    assert feedback_can_be_rejected(feedback=feedback) is rejectable
