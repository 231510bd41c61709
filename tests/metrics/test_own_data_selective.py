"""Review savings on evalsite's own data: statement confidence, hand-computed curves, the stored
run result and its paired comparison with another run."""

from __future__ import annotations

import random

import numpy as np
import pytest

from audit.models import Feedback
from metrics.families.review_savings import ReviewItem
from metrics.families.review_savings.resampling import review_replicates
from metrics.families.selective.bootstrap import (
    bootstrap_by_participant,
    paired_bootstrap_delta_by_participant,
)
from metrics.own_data.review_savings import (
    EMPTY_CONFIDENCE,
    METRICS,
    RISK_LEVELS,
    UNSCORED_CONFIDENCE,
    ScoredStatement,
    review_items,
    review_savings_result_compute,
    savings_summary,
    statement_confidence,
)
from metrics.registry import REVIEW_SAVINGS
from metrics.results import run_key
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
    pdp,
    person,
)


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 200


# --- statement confidence ------------------------------------------------------------------------


class TestStatementConfidence:
    payload = pdp(
        people=[person(1, "A", 0.5), person(2, "B", 0.8)],
        pair_bonds=[{"id": 3, "person_a": 1, "person_b": 2, "confidence": 0.5}],
    )

    def test_min_mean_product(self) -> None:
        assert statement_confidence(self.payload) == 0.5  # min is the default
        assert statement_confidence(self.payload, how="min") == 0.5
        assert statement_confidence(self.payload, how="mean") == pytest.approx(0.6)
        assert statement_confidence(self.payload, how="product") == pytest.approx(0.2)

    def test_items_without_confidence_are_ignored(self) -> None:
        payload = pdp(people=[person(1, "A"), person(2, "B", 0.7)])
        assert statement_confidence(payload, how="mean") == 0.7

    def test_empty_extraction_is_fully_confident(self) -> None:
        assert statement_confidence(pdp()) == EMPTY_CONFIDENCE == 1.0
        assert statement_confidence(None) == 1.0

    def test_items_but_no_confidence_is_never_auto_accepted_first(self) -> None:
        assert statement_confidence(pdp(people=[person(1, "A")])) == UNSCORED_CONFIDENCE == 0.0

    def test_unknown_aggregator(self) -> None:
        with pytest.raises(ValueError, match="aggregator"):
            statement_confidence(self.payload, how="max")


# --- hand-computed curve -------------------------------------------------------------------------

# Ten statements, most confident first. Losses are exact binary fractions so the hand sums
# below are exact too. Accepting the k most confident gives a mean loss (selective risk) of:
#   k:    1  2  3  4       5     6      7      8        9       10
#   risk: 0  0  0  0.0625  0.05  0.125  0.75/7 0.09375  1.75/9  0.275
CONFIDENCES = [0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]
LOSSES = [0, 0, 0, 0.25, 0, 0.5, 0, 0, 1, 1]
RISKS = [0, 0, 0, 0.0625, 0.05, 0.125, 0.75 / 7, 0.09375, 1.75 / 9, 0.275]


def constructed_items() -> list[ReviewItem]:
    return [
        ReviewItem(cluster_id=i % 3, item_id=i, confidence=c, loss=loss)
        for i, (c, loss) in enumerate(zip(CONFIDENCES, LOSSES, strict=True))
    ]


class TestHandComputedSavings:
    def test_coverage_at_five_and_ten_percent(self) -> None:
        summary = savings_summary(constructed_items(), resamples=50)
        at5, at10 = summary["at_risk"]
        # ≤ 5%: the 5 most confident (risk exactly 0.05); the 6th would make it 12.5%.
        assert at5["percent"] == 5
        assert at5["coverage"]["point"] == pytest.approx(0.5)
        assert at5["threshold"] == 0.7
        assert at5["n_accepted"] == 5
        # ≤ 10%: 8 statements (risk 0.09375); 6 and 7 are above 10% but 8 dips back under.
        assert at10["coverage"]["point"] == pytest.approx(0.8)
        assert at10["threshold"] == 0.4
        assert at10["selective_risk"] == pytest.approx(0.09375)

    def test_areas(self) -> None:
        summary = savings_summary(constructed_items(), resamples=50)
        # Trapezoids of width 0.1 over x = 0, 0.1, ..., 1 with risk(0) = risk(0.1):
        # AURC = 0.05 * (r1 + 2 (r2 + ... + r9) + r10) (the first segment is flat at r1 = 0).
        aurc = 0.05 * (RISKS[0] + 2 * sum(RISKS[1:9]) + RISKS[9])
        assert summary["aurc"]["point"] == pytest.approx(aurc)
        assert summary["aurc"]["point"] == pytest.approx(0.0770337, abs=1e-6)
        # AUGRC: generalized risk = cumulative loss / 10, starting from 0 at coverage 0.
        cumulative = [0, 0, 0, 0.25, 0.25, 0.75, 0.75, 0.75, 1.75, 2.75]
        augrc = 0.05 * (2 * sum(c / 10 for c in cumulative[:9]) + cumulative[9] / 10)
        assert summary["augrc"]["point"] == pytest.approx(augrc) == pytest.approx(0.05875)
        # Oracle: losses sorted (six zeros, 0.25, 0.5, 1, 1) -> risks 0 x6, .25/7, .75/8, 1.75/9, .275
        oracle = [0, 0, 0, 0, 0, 0, 0.25 / 7, 0.75 / 8, 1.75 / 9, 0.275]
        optimal = 0.05 * (oracle[0] + 2 * sum(oracle[1:9]) + oracle[9])
        assert summary["aurc_optimal"] == pytest.approx(optimal)
        assert summary["eaurc"] == pytest.approx(aurc - optimal)

    def test_intervals_contain_the_point(self) -> None:
        summary = savings_summary(constructed_items(), resamples=200)
        low, high = summary["aurc"]["ci95"]
        assert low <= summary["aurc"]["point"] <= high
        assert summary["curve"]["coverage"][-1] == 1.0
        assert summary["curve"]["selective_risk"][4] == pytest.approx(0.05)

    def test_statement_rows_become_items(self) -> None:
        scored = [
            ScoredStatement(1, 10, pdp(people=[person(1, "A", 0.4), person(2, "B", 0.9)]), 0.75),
            ScoredStatement(2, 11, pdp(), 0.0),
        ]
        items = review_items(scored, how="min")
        assert [(i.cluster_id, i.item_id, i.confidence, i.loss) for i in items] == [
            (10, 1, 0.4, 0.25),
            (11, 2, 1.0, 1.0),
        ]


# --- the vectorised bootstrap equals the library's loop path ----------------------------------


def random_items(seed: int, n: int = 60, clusters: int = 7) -> list[ReviewItem]:
    rng = random.Random(seed)
    return [
        ReviewItem(
            cluster_id=rng.randrange(clusters),
            item_id=i,
            confidence=round(rng.random(), 1),  # plateaus of equal confidence
            loss=rng.choice([0.0, 0.0, 0.0, rng.random()]),
        )
        for i in range(n)
    ]


class TestVectorisedBootstrap:
    def test_same_replicates_as_bootstrap_by_participant(self) -> None:
        items = random_items(1)
        (fast,) = review_replicates([items], risk_levels=RISK_LEVELS, n_resamples=300, seed=0)
        for name, metric_fn in METRICS.items():
            reference = bootstrap_by_participant(
                items, metric_fn=metric_fn, n_resamples=300, seed=0
            )
            low, high = np.percentile(fast[name], [2.5, 97.5])
            assert (low, high) == pytest.approx(reference.ci95, rel=1e-9, abs=1e-12), name
            assert float(np.std(fast[name], ddof=1)) == pytest.approx(reference.std_error)

    def test_same_paired_deltas(self) -> None:
        left = random_items(2)
        right = [
            ReviewItem(i.cluster_id, i.item_id, round(random.Random(i.item_id).random(), 1), i.loss)
            for i in random_items(3)
        ]
        sides = review_replicates([left, right], risk_levels=RISK_LEVELS, n_resamples=300, seed=0)
        for name, metric_fn in METRICS.items():
            reference = paired_bootstrap_delta_by_participant(
                left, right, metric_fn=metric_fn, n_resamples=300, seed=0
            )
            deltas = sides[1][name] - sides[0][name]
            low, high = np.percentile(deltas, [2.5, 97.5])
            assert (low, high) == pytest.approx(reference.ci95, rel=1e-9, abs=1e-12), name


# --- stored run result ---------------------------------------------------------------------------


def gt_statement(discussion, auditor, ai: dict, gt: dict, run):
    statement = StatementFactory(discussion=discussion)
    FeedbackFactory(
        statement=statement, auditor=auditor, edited_extraction=gt, status=Feedback.Status.APPROVED
    )
    ExtractionFactory(statement=statement, run=run, pdp_deltas=ai)
    return statement


@pytest.fixture
def two_discussions(auditor):
    """Four statements: E (conf .95, F1 1), A (.9, F1 1), C (.6, F1 0), B (min .3, F1 2/3)."""
    run = ExtractionRunFactory()
    d1, d2 = DiscussionFactory(), DiscussionFactory()
    statements = {
        "A": gt_statement(
            d1, auditor, pdp(people=[person(1, "John", 0.9)]), pdp(people=[person(1, "John")]), run
        ),
        "B": gt_statement(
            d1,
            auditor,
            pdp(people=[person(1, "Mary", 0.8), person(2, "Zed", 0.3)]),
            pdp(people=[person(1, "Mary")]),
            run,
        ),
        "C": gt_statement(
            d2, auditor, pdp(people=[person(1, "Paul", 0.6)]), pdp(people=[person(1, "Anna")]), run
        ),
        "E": gt_statement(
            d2, auditor, pdp(people=[person(1, "Lee", 0.95)]), pdp(people=[person(1, "Lee")]), run
        ),
    }
    return run, statements


@pytest.mark.django_db
class TestStoredResult:
    def test_run_figures(self, two_discussions) -> None:
        run, _ = two_discussions
        row = review_savings_result_compute(run_id=run.pk)
        assert row.key == run_key(REVIEW_SAVINGS, run.pk)
        assert row.family == REVIEW_SAVINGS and row.scope == "run" and row.is_fresh
        values = row.values
        assert values["n_statements"] == 4 and values["n_discussions"] == 2
        # Losses 0, 0, 1, 1/3 in confidence order -> risks 0, 0, 1/3, 1/3.
        assert values["mean_loss"] == pytest.approx((1 + 1 / 3) / 4)
        default = values["aggregators"]["min"]
        assert default["aurc"]["point"] == pytest.approx(0.125)
        at5, at10 = default["at_risk"]
        assert at5["coverage"]["point"] == 0.5 and at5["threshold"] == 0.9
        assert at10["coverage"]["point"] == 0.5
        # The mean aggregator gives B 0.55: still last, so the same curve.
        assert values["aggregators"]["mean"]["aurc"]["point"] == pytest.approx(0.125)
        assert values["comparisons"] == []

    def test_statement_without_ground_truth_or_expert_is_left_out(self, two_discussions, auditor):
        run, statements = two_discussions
        ExtractionFactory(
            run=run, statement=StatementFactory(discussion=statements["A"].discussion)
        )
        draft = StatementFactory()
        FeedbackFactory(statement=draft, auditor=auditor, status=Feedback.Status.SUBMITTED)
        ExtractionFactory(run=run, statement=draft)
        assert review_savings_result_compute(run_id=run.pk).values["n_statements"] == 4

    def test_paired_delta_over_shared_statements(self, two_discussions) -> None:
        run, statements = two_discussions
        better = ExtractionRunFactory()
        for name in ("A", "C", "E"):  # B is not extracted by the second run
            gt = statements[name].approved_feedback().edited_extraction
            ai = pdp(people=[{**p, "confidence": 0.9} for p in gt["people"]])
            ExtractionFactory(statement=statements[name], run=better, pdp_deltas=ai)
        values = review_savings_result_compute(run_id=better.pk).values
        (comparison,) = values["comparisons"]
        assert comparison["run_id"] == run.pk and comparison["n_statements"] == 3
        aurc = comparison["metrics"]["aurc"]
        # First run on E, A, C only: risks 0, 0, 1/3 over coverage 1/3, 2/3, 1 -> AURC 1/18.
        assert aurc["left"] == pytest.approx(1 / 18)
        assert aurc["right"] == pytest.approx(0.0)  # every statement right
        assert aurc["delta"] == pytest.approx(-1 / 18)
        assert aurc["ci95"][0] <= aurc["delta"] <= aurc["ci95"][1]
        coverage = comparison["metrics"]["coverage_5"]
        assert coverage["right"] == 1.0 and coverage["left"] == pytest.approx(2 / 3)

    def test_unchanged_inputs_are_not_recomputed(self, two_discussions) -> None:
        run, _ = two_discussions
        first = review_savings_result_compute(run_id=run.pk)
        again = review_savings_result_compute(run_id=run.pk)
        assert again.computed_at == first.computed_at
        forced = review_savings_result_compute(run_id=run.pk, force=True)
        assert forced.computed_at > first.computed_at

    def test_changed_ground_truth_changes_the_figures(self, two_discussions) -> None:
        run, statements = two_discussions
        before = review_savings_result_compute(run_id=run.pk)
        truth = statements["C"].approved_feedback()
        truth.edited_extraction = pdp(people=[person(1, "Paul")])  # now the AI was right
        truth.version += 1
        truth.save()
        after = review_savings_result_compute(run_id=run.pk)
        assert after.input_hash != before.input_hash
        assert after.values["mean_loss"] == pytest.approx((1 / 3) / 4)

    def test_missing_run(self) -> None:
        assert review_savings_result_compute(run_id=987654) is None
