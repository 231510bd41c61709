"""metrics.selectors: reads of stored results."""

import pytest

from audit.derived.tallies import coding_written
from audit.models import Feedback
from metrics import selectors
from tests.factories import FeedbackFactory, StatementFactory

pytestmark = pytest.mark.django_db


def test_my_progress_counts_my_codings_by_status_from_the_stored_tallies(auditor, second_auditor):
    S = Feedback.Status
    statuses = [S.DRAFT, S.DRAFT, S.SUBMITTED, S.APPROVED, S.REJECTED, S.SUBMITTED]
    mine = [
        FeedbackFactory(auditor=auditor, status=status, statement=StatementFactory())
        for status in statuses
    ]
    FeedbackFactory(auditor=second_auditor, status=S.APPROVED, statement=mine[0].statement)

    assert selectors.my_progress(auditor) == {
        "draft": 2, "submitted": 2, "approved": 1, "rejected": 1, "coded": 6,
    }  # fmt: skip
    mine[0].status = S.SUBMITTED
    mine[0].save()
    coding_written(feedback=mine[0], before=S.DRAFT)  # written past the services
    assert selectors.my_progress(auditor)["draft"] == 1
    assert selectors.my_progress(second_auditor)["approved"] == 1
