"""Item-level calibration on evalsite's own data: outcomes from the matching, ECE/NLL on known
items, the deterministic held-out split and the stored run result."""

from __future__ import annotations

import math

import pytest

from audit.models import Feedback
from metrics.families.calibration import compute_ece
from metrics.families.extraction import calculate_statement_f1
from metrics.own_data.calibration import (
    MIN_FIT_ITEMS,
    calibration_figures,
    calibration_result_compute,
    heldout_discussions,
    heldout_split,
    reliability_bins,
    split_key,
    statement_items,
)
from metrics.registry import CALIBRATION
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

# Three items with a confidence (one per bin): .95 right, .75 wrong, .65 right; one without.
AI = pdp(
    people=[
        person(1, "John", 0.95),
        person(2, "Zed", 0.75),
        person(3, "Mary", 0.65),
        person(4, "Anon"),
    ],
    pair_bonds=[{"id": 5, "person_a": 1, "person_b": 3, "confidence": 0.95}],
)
GT = pdp(
    people=[person(10, "John"), person(11, "Mary")],
    pair_bonds=[{"id": 12, "person_a": 10, "person_b": 11}],
)
# ECE = mean |accuracy - confidence| per bin, weighted by count: four items, bins
# [0.9, 1] (.95, .95: both right, gap .05), [0.7, 0.8) (.75 wrong, gap .75), [0.6, 0.7) (.65 right, .35)
EXPECTED_ECE = (2 * 0.05 + 0.75 + 0.35) / 4
EXPECTED_NLL = -(2 * math.log(0.95) + math.log(0.25) + math.log(0.65)) / 4


class TestItems:
    def test_outcome_from_the_matched_pairs(self) -> None:
        metrics = calculate_statement_f1(AI, GT)
        items, skipped = statement_items(AI, metrics, discussion_id=1, statement_id=2)
        assert skipped == 1  # Anon has no confidence
        outcomes = [(i.entity, i.probability, i.correct) for i in items]
        assert outcomes == [
            ("people", 0.95, True),
            ("people", 0.75, False),
            ("people", 0.65, True),
            ("pair_bonds", 0.95, True),  # its partners resolve to the GT bond's
        ]

    def test_ece_and_nll_by_hand(self) -> None:
        figures = calibration_figures([0.95, 0.75, 0.65, 0.95], [1, 0, 1, 1])
        assert figures["n"] == 4
        assert figures["ece"] == pytest.approx(EXPECTED_ECE) == pytest.approx(0.3)
        assert figures["nll"] == pytest.approx(EXPECTED_NLL)
        assert figures["accuracy"] == 0.75
        assert figures["mean_confidence"] == pytest.approx(0.825)

    def test_reliability_bins(self) -> None:
        bins = reliability_bins([0.95, 0.75, 0.65, 0.95], [1, 0, 1, 1])
        assert [(b["count"], b["accuracy"]) for b in bins] == [(1, 1.0), (1, 0.0), (2, 1.0)]
        assert [b["mean_confidence"] for b in bins] == pytest.approx([0.65, 0.75, 0.95])
        # The diagram agrees with the ECE it illustrates.
        ece = sum(b["count"] * abs(b["accuracy"] - b["mean_confidence"]) for b in bins) / 4
        assert ece == pytest.approx(compute_ece([0.95, 0.75, 0.65, 0.95], [1, 0, 1, 1]))

    def test_reliability_bins_share_the_ece_edges(self) -> None:
        bins = reliability_bins([0.3, 0.3, 0.39, 0.7], [1, 1, 0, 1])
        assert [(b["lo"], b["hi"], b["count"]) for b in bins] == [(0.3, 0.4, 3), (0.7, 0.8, 1)]


class TestHeldoutSplit:
    def test_deterministic_and_order_free(self) -> None:
        ids = list(range(1, 11))
        first = heldout_discussions(ids)
        assert first == heldout_discussions(reversed(ids)) == heldout_discussions(ids * 2)
        assert len(first) == 3  # ceil(30% of 10)
        # The held-out ones are the first three in salted-hash order.
        assert first == set(sorted(ids, key=split_key)[:3])
        # Pinned, so a change of the split (and of every stored figure) is noticed.
        assert first == {2, 4, 6}

    def test_small_sets(self) -> None:
        assert heldout_discussions([7]) == set()  # nothing left to fit on
        assert len(heldout_discussions([7, 8])) == 1
        assert len(heldout_discussions(range(6))) == 2

    def test_whole_discussions_on_one_side(self) -> None:
        metrics = calculate_statement_f1(AI, GT)
        items = []
        for discussion in range(1, 11):
            items += statement_items(AI, metrics, discussion_id=discussion, statement_id=1)[0]
        train, test = heldout_split(items)
        assert {i.discussion_id for i in test} == heldout_discussions(range(1, 11))
        assert not {i.discussion_id for i in train} & {i.discussion_id for i in test}
        assert len(train) + len(test) == len(items)


def coded_statement(discussion, auditor, run, ai: dict, gt: dict) -> None:
    statement = StatementFactory(discussion=discussion)
    FeedbackFactory(
        statement=statement, auditor=auditor, edited_extraction=gt, status=Feedback.Status.APPROVED
    )
    ExtractionFactory(statement=statement, run=run, pdp_deltas=ai)


@pytest.mark.django_db
class TestStoredResult:
    def test_run_figures(self, auditor) -> None:
        run = ExtractionRunFactory()
        coded_statement(DiscussionFactory(), auditor, run, AI, GT)
        row = calibration_result_compute(run_id=run.pk)
        assert row.key == run_key(CALIBRATION, run.pk) and row.is_fresh
        values = row.values
        assert values["n_items"] == 4 and values["n_skipped"] == 1
        assert values["n_statements"] == 1 and values["n_discussions"] == 1
        assert values["all"]["ece"] == pytest.approx(EXPECTED_ECE)
        assert values["all"]["nll"] == pytest.approx(EXPECTED_NLL)
        assert values["by_type"]["pair_bonds"]["n"] == 1
        assert values["by_type"]["events"] == {"n": 0}
        assert values["heldout"]["fitted"] is False  # one discussion: nothing held out

    def test_fitted_and_judged_on_heldout_discussions(self, auditor) -> None:
        run = ExtractionRunFactory()
        discussions = [DiscussionFactory() for _ in range(6)]
        for discussion in discussions:
            for _ in range(3):
                coded_statement(discussion, auditor, run, AI, GT)
        values = calibration_result_compute(run_id=run.pk).values
        heldout = values["heldout"]
        assert heldout["fitted"] is True
        assert heldout["n_test_discussions"] == 2 and heldout["n_train_discussions"] == 4
        assert heldout["n_train_items"] == 4 * 3 * 4 >= MIN_FIT_ITEMS
        assert heldout["n_test_items"] == 2 * 3 * 4
        # Every statement is the same, so the held-out raw figures equal the overall ones,
        # and isotonic regression (fitted per confidence value) is exact on held-out data.
        assert heldout["raw"]["ece"] == pytest.approx(EXPECTED_ECE)
        assert heldout["isotonic"]["ece"] == pytest.approx(0.0, abs=1e-9)
        assert heldout["temperature"] > 0
        assert heldout["temperature_scaled"]["n"] == heldout["n_test_items"]

    def test_too_few_items_are_not_fitted(self, auditor) -> None:
        run = ExtractionRunFactory()
        for _ in range(3):
            coded_statement(DiscussionFactory(), auditor, run, AI, GT)
        heldout = calibration_result_compute(run_id=run.pk).values["heldout"]
        assert heldout["fitted"] is False
        assert "training items" in heldout["reason"]
