"""Inter-auditor agreement on a constructed two-auditor example (computed by hand), blind vs
pre-filled coding, and the per-statement "auditors disagree" marker."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Feedback
from audit.selectors.disagreement import statement_disagreement
from audit.selectors.progress import auditor_progress, discussion_progress
from metrics.own_data.common import INTERAUDITOR_KEY
from metrics.own_data.interauditor import interauditor_result_compute
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    FeedbackFactory,
    StatementFactory,
    pdp,
    person,
)

S = Feedback.Status


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 200


def event(ident: int, kind: str, description: str, **fields) -> dict:
    return {
        "id": ident,
        "kind": kind,
        "description": description,
        "dateTime": "1960-01-01",
        **fields,
    }


# S1: identical (F1 1). Three entities each.
S1 = pdp(
    people=[person(1, "John"), person(2, "Mary")],
    events=[event(3, "married", "John married Mary", person=1, spouse=2, symptom="up")],
)
# S2: alice has Paul + his birth; bob also has Anna, and codes the birth's symptom "down".
# alice -> bob: TP 2 (Paul, birth), FN 1 (Anna): F1 = 4/5; bob -> alice: TP 2, FP 1: 4/5.
S2_ALICE = pdp(
    people=[person(1, "Paul")],
    events=[event(2, "birth", "Paul was born", person=1, symptom="up", anxiety="down")],
)
S2_BOB = pdp(
    people=[person(1, "Paul"), person(3, "Anna")],
    events=[event(2, "birth", "Paul was born", person=1, symptom="down", anxiety="down")],
)
# S3: nothing in common (F1 0).
S3_ALICE = pdp(people=[person(1, "Lee")])
S3_BOB = pdp(people=[person(1, "Kim")])


@pytest.fixture
def two_auditors(auditor, second_auditor):
    """alice and bob code S1 and S2 (discussion 1) and S3 (discussion 2); S1's GT is alice's
    coding, S2's is bob's (both approved)."""
    d1, d2 = DiscussionFactory(), DiscussionFactory()
    s1, s2 = StatementFactory(discussion=d1), StatementFactory(discussion=d1)
    s3 = StatementFactory(discussion=d2)
    FeedbackFactory(statement=s1, auditor=auditor, edited_extraction=S1, status=S.APPROVED)
    FeedbackFactory(statement=s1, auditor=second_auditor, edited_extraction=S1)
    FeedbackFactory(statement=s2, auditor=auditor, edited_extraction=S2_ALICE)
    FeedbackFactory(
        statement=s2, auditor=second_auditor, edited_extraction=S2_BOB, status=S.APPROVED
    )
    FeedbackFactory(statement=s3, auditor=auditor, edited_extraction=S3_ALICE)
    FeedbackFactory(statement=s3, auditor=second_auditor, edited_extraction=S3_BOB)
    return s1, s2, s3


@pytest.mark.django_db
class TestTwoAuditors:
    def test_pairwise_agreement_by_hand(self, two_auditors) -> None:
        row = interauditor_result_compute()
        assert row.key == INTERAUDITOR_KEY and row.scope == "system" and row.is_fresh
        values = row.values
        assert values["n_codings"] == 6 and values["n_auditors"] == 2
        (pair,) = values["pairs"]
        assert (pair["auditor_a"], pair["auditor_b"]) == ("alice", "bob")
        assert pair["n_statements"] == 3 and pair["n_discussions"] == 2
        # Symmetric F1 per statement: 1, 4/5, 0 -> mean 0.6.
        assert pair["symmetric_f1"]["point"] == pytest.approx(0.6)
        low, high = pair["symmetric_f1"]["ci95"]
        assert 0.0 <= low <= high <= 1.0
        # Matched events: S1 (symptom up/up, anxiety none/none), S2 (up/down, down/down).
        # symptom: p_o = 1/2, p_e = (2 up x 1 up)/4 = 1/2 -> kappa 0.
        # anxiety: p_o = 1, p_e = (1x1 + 1x1)/4 = 1/2 -> kappa 1.
        # relationship: "none" everywhere -> p_e = 1 -> undefined.
        assert pair["n_matched_events"] == 2
        assert pair["kappa"]["symptom"] == pytest.approx(0.0)
        assert pair["kappa"]["anxiety"] == pytest.approx(1.0)
        assert pair["kappa"]["relationship"] is None
        # Entity counts alice (3, 2, 1), bob (3, 3, 1): means 2 and 7/3, variances 2/3 and 8/9,
        # covariance 2/3 -> CCC = (4/3) / (2/3 + 8/9 + 1/9) = 0.8.
        assert pair["ccc_entity_counts"] == pytest.approx(0.8)
        assert pair["n_disagreeing"] == 2
        assert values["overall"]["symmetric_f1"]["point"] == pytest.approx(0.6)

    def test_auditors_against_ground_truth(self, two_auditors) -> None:
        auditors = interauditor_result_compute().values["auditors"]
        # alice: S2 against bob's approved coding (F1 4/5); her approved S1 is left out.
        # bob: S1 against alice's approved coding (F1 1). S3 has no GT. Lowest first.
        assert [(a["auditor"], a["n_statements"]) for a in auditors] == [("alice", 1), ("bob", 1)]
        assert auditors[0]["mean_f1"]["point"] == pytest.approx(0.8)
        assert auditors[0]["micro_f1"] == pytest.approx(0.8)
        assert auditors[1]["mean_f1"]["point"] == pytest.approx(1.0)

    def test_disagreements_worst_first(self, two_auditors) -> None:
        _, s2, s3 = two_auditors
        rows = interauditor_result_compute().values["disagreements"]
        assert [(r["statement_id"], r["f1"]) for r in rows] == [(s3.pk, 0.0), (s2.pk, 0.8)]
        assert rows[0]["auditors"] == ["alice", "bob"]

    def test_drafts_and_rejected_coding_do_not_count(self, two_auditors, make_user) -> None:
        s1, _, _ = two_auditors
        FeedbackFactory(
            statement=s1, auditor=make_user("dave"), status=S.DRAFT, edited_extraction=pdp()
        )
        FeedbackFactory(
            statement=s1, auditor=make_user("erin"), status=S.REJECTED, edited_extraction=pdp()
        )
        values = interauditor_result_compute().values
        assert values["n_codings"] == 6 and len(values["pairs"]) == 1


@pytest.mark.django_db
class TestStatementDisagreement:
    def test_marker(self, two_auditors) -> None:
        s1, s2, s3 = two_auditors
        assert statement_disagreement(statement_id=s1.pk) is None  # they agree
        marker = statement_disagreement(statement_id=s2.pk)
        assert marker["f1"] == pytest.approx(0.8)
        assert marker["n_auditors"] == 2 and marker["auditors"] == ["alice", "bob"]
        assert marker["pairs"] == [{"auditor_a": "alice", "auditor_b": "bob", "f1": 0.8}]
        assert statement_disagreement(statement_id=s3.pk)["f1"] == 0.0

    def test_one_auditor_or_drafts(self, auditor, second_auditor) -> None:
        statement = StatementFactory()
        FeedbackFactory(statement=statement, auditor=auditor, edited_extraction=S3_ALICE)
        assert statement_disagreement(statement_id=statement.pk) is None
        FeedbackFactory(
            statement=statement, auditor=second_auditor, edited_extraction=S3_BOB, status=S.DRAFT
        )
        assert statement_disagreement(statement_id=statement.pk) is None

    def test_three_auditors_lowest_pair(self, two_auditors, make_user) -> None:
        s1, _, _ = two_auditors
        FeedbackFactory(statement=s1, auditor=make_user("dave"), edited_extraction=S3_BOB)
        marker = statement_disagreement(statement_id=s1.pk)
        assert marker["n_auditors"] == 3 and marker["f1"] == 0.0
        assert len(marker["pairs"]) == 3


AI = pdp(people=[person(1, "John"), person(2, "Mary")])


def blind_and_prefilled(discussion, auditor, second_auditor, blind_payload: dict):
    """alice codes from the AI's extraction (keeps it), bob codes blind."""
    statement = StatementFactory(discussion=discussion)
    extraction = ExtractionFactory(statement=statement, pdp_deltas=AI)
    FeedbackFactory(
        statement=statement, auditor=auditor, edited_extraction=AI, source_extraction=extraction
    )
    FeedbackFactory(
        statement=statement, auditor=second_auditor, edited_extraction=blind_payload, blind=True
    )
    return statement


@pytest.mark.django_db
class TestBlindVsPrefilled:
    def test_difference_by_hand(self, auditor, second_auditor) -> None:
        # Statement 1: blind coding finds John only -> F1(AI vs blind) = 2/3; pre-filled 1.
        # Statement 2: blind coding finds both -> 1; pre-filled 1.
        blind_and_prefilled(
            DiscussionFactory(), auditor, second_auditor, pdp(people=[person(7, "John")])
        )
        blind_and_prefilled(DiscussionFactory(), auditor, second_auditor, AI)
        blind = interauditor_result_compute().values["blind"]
        assert blind["n_statements"] == 2 and blind["n_discussions"] == 2
        assert blind["n_blind_codings"] == 2
        assert blind["prefilled_mean_f1"] == pytest.approx(1.0)
        assert blind["blind_mean_f1"] == pytest.approx((2 / 3 + 1) / 2)
        difference = blind["difference"]
        assert difference["point"] == pytest.approx((1 / 3 + 0) / 2)
        # Two clusters with differences 1/3 and 0: every resample lies between them.
        low, high = difference["ci95"]
        assert 0.0 <= low <= difference["point"] <= high <= 1 / 3 + 1e-12

    def test_only_statements_coded_both_ways(self, auditor, second_auditor) -> None:
        statement = StatementFactory()
        FeedbackFactory(statement=statement, auditor=auditor, edited_extraction=AI, blind=True)
        blind = interauditor_result_compute().values["blind"]
        assert blind["n_statements"] == 0 and blind["difference"]["point"] is None


@pytest.mark.django_db
def test_one_discussion_gives_no_interval_and_the_card_says_so(
    auditor, second_auditor, admin_client
) -> None:
    """Issue 15 §4: with one discussion the card printed "95% CI 0.333 to 0.333"."""
    blind_and_prefilled(
        DiscussionFactory(), auditor, second_auditor, pdp(people=[person(7, "John")])
    )
    difference = interauditor_result_compute().values["blind"]["difference"]
    assert difference["point"] == pytest.approx(1 / 3)
    assert difference["ci95"] is None and difference["no_ci"]
    html = admin_client.get(reverse("metrics:interauditor_card")).content.decode()
    assert 'data-testid="blind-no-ci"' in html and "too few discussions" in html
    assert "95% CI" not in html.split('data-testid="blind-vs-prefilled"')[1].split("</p>")[0]


@pytest.mark.django_db
def test_team_page_shows_agreement_per_auditor_and_per_discussion(
    two_auditors, auditor, second_auditor, admin_client
):
    """By hand: discussion 1 pairs 1.0 (S1) and 0.8 (S2), codings vs GT bob 1.0 (S1), alice
    0.8 (S2); discussion 2 pair 0.0 (S3), no GT. Per auditor: alice vs GT 0.8, bob 1.0, both
    with each other (1.0 + 0.8 + 0.0) / 3."""
    s1, _s2, s3 = two_auditors
    interauditor_result_compute()
    by_discussion = {row.id: row for row in discussion_progress()}
    first, second = by_discussion[s1.discussion_id], by_discussion[s3.discussion_id]
    assert (first.agreement_gt, first.agreement_coders) == pytest.approx((0.9, 0.9))
    assert (second.agreement_gt, second.agreement_coders) == (None, 0.0)
    by_auditor = {row.id: row for row in auditor_progress(auditors=[auditor, second_auditor])}
    assert by_auditor[auditor.pk].agreement_gt == pytest.approx(0.8)
    assert by_auditor[second_auditor.pk].agreement_gt == pytest.approx(1.0)
    assert by_auditor[auditor.pk].agreement_coders == pytest.approx(0.6)
    html = admin_client.get(reverse("audit:team")).content.decode()
    assert html.count('<td class="num">0.90</td>') == 2  # discussion 1, both columns
