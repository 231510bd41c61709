"""Blind double review: the random sample (size, determinism, subject statements only, admins
only), the admin page, and blind coding starting from an empty extraction."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import BlindReview, Speaker
from audit.services import NotAllowed, WorkflowError, feedback_start
from audit.services.blind import blind_review_candidates, blind_review_sample, blind_review_unmark
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    SpeakerFactory,
    StatementFactory,
)


@pytest.fixture
def discussions():
    """Two discussions of six subject statements and two expert questions each."""
    made = []
    for _ in range(2):
        discussion = DiscussionFactory()
        expert = SpeakerFactory(discussion=discussion, name="Expert", type=Speaker.Type.EXPERT)
        subjects = [StatementFactory(discussion=discussion) for _ in range(6)]
        experts = [StatementFactory(discussion=discussion, speaker=expert) for _ in range(2)]
        made.append((discussion, subjects, experts))
    return made


def marked_ids() -> list[int]:
    return sorted(BlindReview.objects.values_list("statement_id", flat=True))


@pytest.mark.django_db
class TestSample:
    def test_size_and_subject_statements_only(self, discussions, admin_user) -> None:
        marks = blind_review_sample(size=5, seed=1, admin=admin_user)
        assert len(marks) == 5 == BlindReview.objects.count()
        subjects = {s.pk for _, statements, _ in discussions for s in statements}
        assert set(marked_ids()) <= subjects
        assert all(m.marked_by == admin_user for m in marks)
        assert [m.statement_id for m in marks] == marked_ids()  # statement order

    def test_same_seed_same_sample(self, discussions, admin_user) -> None:
        first = [m.statement_id for m in blind_review_sample(size=4, seed=42, admin=admin_user)]
        BlindReview.objects.all().delete()
        again = [m.statement_id for m in blind_review_sample(size=4, seed=42, admin=admin_user)]
        assert first == again
        samples = set()
        for seed in range(20):
            BlindReview.objects.all().delete()
            samples.add(
                tuple(
                    m.statement_id for m in blind_review_sample(size=4, seed=seed, admin=admin_user)
                )
            )
        assert len(samples) > 1  # the seed does choose

    def test_one_discussion(self, discussions, admin_user) -> None:
        discussion, subjects, _ = discussions[1]
        blind_review_sample(discussion=discussion, size=3, seed=0, admin=admin_user)
        assert set(marked_ids()) <= {s.pk for s in subjects} and len(marked_ids()) == 3

    def test_never_marks_twice_and_stops_when_all_marked(self, discussions, admin_user) -> None:
        discussion, subjects, _ = discussions[0]
        blind_review_sample(discussion=discussion, size=4, seed=0, admin=admin_user)
        rest = blind_review_sample(discussion=discussion, size=10, seed=0, admin=admin_user)
        assert len(rest) == 2  # only the two unmarked ones were left
        assert marked_ids() == sorted(s.pk for s in subjects)
        assert blind_review_candidates(discussion=discussion) == []
        assert blind_review_sample(discussion=discussion, size=1, seed=0, admin=admin_user) == []

    def test_admins_only(self, discussions, auditor) -> None:
        with pytest.raises(NotAllowed):
            blind_review_sample(size=2, seed=0, admin=auditor)
        assert BlindReview.objects.count() == 0

    def test_size_must_be_positive(self, discussions, admin_user) -> None:
        with pytest.raises(WorkflowError, match="between 1"):
            blind_review_sample(size=0, seed=0, admin=admin_user)

    def test_unmark(self, discussions, admin_user, auditor) -> None:
        (mark,) = blind_review_sample(size=1, seed=0, admin=admin_user)
        with pytest.raises(NotAllowed):
            blind_review_unmark(statement=mark.statement, admin=auditor)
        blind_review_unmark(statement=mark.statement, admin=admin_user)
        assert BlindReview.objects.count() == 0


@pytest.mark.django_db
class TestBlindCoding:
    def test_auditor_starts_from_an_empty_extraction(self, admin_user, auditor) -> None:
        extraction = ExtractionFactory()
        statement = extraction.statement
        blind_review_sample(discussion=statement.discussion, size=1, seed=0, admin=admin_user)
        feedback = feedback_start(statement=statement, auditor=auditor)
        assert feedback.blind is True and feedback.source_extraction is None
        assert feedback.edited_extraction == {
            "people": [],
            "events": [],
            "pair_bonds": [],
            "delete": [],
        }

    def test_unmarked_and_admin_coding_is_prefilled(self, admin_user, auditor) -> None:
        extraction = ExtractionFactory()
        own = feedback_start(statement=extraction.statement, auditor=auditor)
        assert own.blind is False and own.source_extraction == extraction
        assert own.edited_extraction["people"] == extraction.pdp_deltas["people"]
        marked = ExtractionFactory()
        blind_review_sample(
            discussion=marked.statement.discussion, size=1, seed=0, admin=admin_user
        )
        by_admin = feedback_start(statement=marked.statement, auditor=admin_user)
        assert by_admin.blind is False and by_admin.source_extraction == marked


@pytest.mark.django_db
class TestPage:
    url = reverse("audit:blind_reviews")

    def test_admin_marks_a_sample(self, admin_client, discussions) -> None:
        page = admin_client.get(self.url)
        assert page.status_code == 200 and b'data-testid="blind-sample-form"' in page.content
        discussion = discussions[0][0]
        response = admin_client.post(self.url, {"discussion": discussion.pk, "size": 2, "seed": 9})
        assert response.status_code == 302
        assert len(marked_ids()) == 2
        page = admin_client.get(self.url)
        assert b"Marked 2 statements" in page.content and b"2 statements marked" in page.content

    def test_invalid_form(self, admin_client, discussions) -> None:
        response = admin_client.post(self.url, {"size": 0, "seed": 1})
        assert response.status_code == 422 and BlindReview.objects.count() == 0

    def test_auditor_and_outsider_are_refused(self, client, auditor, outsider, discussions):
        for user in (auditor, outsider):
            client.force_login(user)
            assert client.get(self.url).status_code == 403
            assert client.post(self.url, {"size": 2, "seed": 1}).status_code == 403
        assert BlindReview.objects.count() == 0

    def test_anonymous_is_sent_to_login(self, client) -> None:
        response = client.get(self.url)
        assert response.status_code == 302 and reverse("login") in response["Location"]

    def test_unmark(self, admin_client, admin_user, discussions) -> None:
        (mark,) = blind_review_sample(size=1, seed=0, admin=admin_user)
        response = admin_client.post(reverse("audit:blind_unmark", args=[mark.statement_id]))
        assert response.status_code == 302 and BlindReview.objects.count() == 0
