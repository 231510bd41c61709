import pytest
from django.db import IntegrityError, transaction

from audit.models import Feedback
from tests.factories import FeedbackFactory, StatementFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_second_approved_feedback_on_same_statement_is_refused_by_the_database():
    statement = StatementFactory()
    FeedbackFactory(statement=statement, auditor=UserFactory(), status=Feedback.Status.APPROVED)
    with pytest.raises(IntegrityError), transaction.atomic():
        FeedbackFactory(statement=statement, auditor=UserFactory(), status=Feedback.Status.APPROVED)


def test_approved_feedback_on_different_statements_is_allowed():
    auditor = UserFactory()
    FeedbackFactory(auditor=auditor, status=Feedback.Status.APPROVED)
    FeedbackFactory(auditor=auditor, status=Feedback.Status.APPROVED)
    assert Feedback.objects.approved().count() == 2


def test_many_submitted_feedbacks_per_statement_are_allowed():
    statement = StatementFactory()
    FeedbackFactory(statement=statement, auditor=UserFactory())
    FeedbackFactory(statement=statement, auditor=UserFactory())
    assert statement.feedback.count() == 2


def test_one_feedback_per_auditor_per_statement():
    statement = StatementFactory()
    auditor = UserFactory()
    FeedbackFactory(statement=statement, auditor=auditor)
    with pytest.raises(IntegrityError), transaction.atomic():
        FeedbackFactory(statement=statement, auditor=auditor)


def test_statement_order_is_unique_within_a_discussion():
    statement = StatementFactory(order=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        StatementFactory(discussion=statement.discussion, order=3)


def test_discussion_gets_an_external_id():
    statement = StatementFactory()
    assert len(statement.discussion.external_id) == 32
