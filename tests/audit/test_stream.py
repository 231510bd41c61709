"""The review stream's next item: by discussion, then statement order, wrapping around."""

from __future__ import annotations

import pytest

from audit.derived.tallies import tallies_rebuild
from audit.models import Feedback
from audit.selectors.stream import review_stream_next
from tests.factories import DiscussionFactory, FeedbackFactory, StatementFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def positions(auditor):
    """Three discussions of three statements; coding waits on the marked ones."""
    discussions = [DiscussionFactory() for _ in range(3)]
    grid = [[StatementFactory(discussion=d, order=i) for i in range(3)] for d in discussions]
    for d, i in [(0, 1), (1, 0), (1, 2), (2, 2)]:
        FeedbackFactory(statement=grid[d][i], auditor=auditor)
    FeedbackFactory(statement=grid[0][2], auditor=auditor, status=Feedback.Status.DRAFT)
    return grid


def test_the_stream_walks_by_discussion_then_order_and_wraps_around(positions):
    grid = positions
    assert review_stream_next() == grid[0][1]
    assert review_stream_next(after=grid[0][0]) == grid[0][1]  # later in the same discussion
    assert review_stream_next(after=grid[0][1]) == grid[1][0]  # a draft does not wait
    assert review_stream_next(after=grid[1][0]) == grid[1][2]
    assert review_stream_next(after=grid[1][2]) == grid[2][2]  # the next discussion with work
    assert review_stream_next(after=grid[2][2]) == grid[0][1]  # wrapped around


def test_wrapping_leaves_out_the_statement_it_started_from(auditor):
    only = FeedbackFactory(auditor=auditor).statement
    before = StatementFactory(discussion=only.discussion, order=only.order - 1)
    assert review_stream_next(after=only) is None
    FeedbackFactory(statement=before, auditor=auditor)
    assert review_stream_next(after=only) == before


def test_an_approved_statement_waits_no_more(positions, admin_user, auditor):
    grid = positions
    Feedback.objects.filter(statement=grid[1][0]).update(status=Feedback.Status.APPROVED)
    tallies_rebuild()
    assert review_stream_next(after=grid[0][1]) == grid[1][2]
