"""Inter-auditor agreement helpers on constructed examples."""

from __future__ import annotations

import math
import random

import pytest
from sklearn.metrics import cohen_kappa_score

from metrics.families.interauditor import (
    cluster_bootstrap_mean_diff,
    cohens_kappa,
    lins_ccc,
    symmetric_mean,
)


class TestCohensKappa:
    def test_hand_computed(self) -> None:
        # p_o = 3/4; p_e = 0.5*0.25 + 0.5*0.75 = 0.5 -> (0.75 - 0.5)/0.5
        assert cohens_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)

    def test_textbook_two_by_two(self) -> None:
        # yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5
        a = ["yes"] * 25 + ["no"] * 25
        b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
        assert cohens_kappa(a, b) == pytest.approx(0.4)

    def test_perfect_and_opposite(self) -> None:
        assert cohens_kappa(["x", "y", "x"], ["x", "y", "x"]) == pytest.approx(1.0)
        # p_o = 0, p_e = 0.5 -> -1
        assert cohens_kappa(["x", "y", "x", "y"], ["y", "x", "y", "x"]) == pytest.approx(-1.0)

    def test_undefined_when_chance_agreement_is_certain(self) -> None:
        assert cohens_kappa(["ok", "ok", "ok"], ["ok", "ok", "ok"]) is None

    def test_undefined_without_items(self) -> None:
        assert cohens_kappa([], []) is None
        assert cohens_kappa([None, 1], [1, None]) is None

    def test_items_with_a_missing_label_are_left_out(self) -> None:
        assert cohens_kappa([1, 1, 0, 0, None], [1, 0, 0, 0, 1]) == pytest.approx(0.5)

    def test_lengths_must_match(self) -> None:
        with pytest.raises(ValueError):
            cohens_kappa([1, 2], [1])

    def test_agrees_with_sklearn_on_three_categories(self) -> None:
        rng = random.Random(7)
        a = [rng.choice("abc") for _ in range(60)]
        b = [x if rng.random() < 0.6 else rng.choice("abc") for x in a]
        assert cohens_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


class TestLinsCcc:
    def test_shifted_ratings(self) -> None:
        # variances 2/3, covariance 2/3, bias 1 -> (4/3)/(7/3)
        assert lins_ccc([1, 2, 3], [2, 3, 4]) == pytest.approx(4 / 7)

    def test_identical_ratings(self) -> None:
        assert lins_ccc([3, 1, 4, 1, 5], [3, 1, 4, 1, 5]) == pytest.approx(1.0)

    def test_missing_ratings_are_left_out(self) -> None:
        assert lins_ccc([1, 2, None, 3, math.nan], [2, 3, 9, 4, 1]) == pytest.approx(4 / 7)

    def test_undefined_with_fewer_than_two_pairs(self) -> None:
        assert lins_ccc([1], [1]) is None
        assert lins_ccc([1, None], [None, 2]) is None

    def test_lengths_must_match(self) -> None:
        with pytest.raises(ValueError):
            lins_ccc([1, 2], [1])


class TestSymmetricMean:
    def test_mean_of_both_directions(self) -> None:
        assert symmetric_mean(0.6, 0.8) == pytest.approx(0.7)

    @pytest.mark.parametrize(("f_ab", "f_ba"), [(None, 0.8), (0.6, None), (math.nan, 0.8)])
    def test_needs_both_directions(self, f_ab: float | None, f_ba: float | None) -> None:
        assert symmetric_mean(f_ab, f_ba) is None


class TestClusterBootstrap:
    def test_point_is_difference_of_means(self) -> None:
        pairs = {"c1": [(1.0, 0.0), (1.0, 1.0)], "c2": [(0.5, 0.5)]}
        # mean a = 2.5/3, mean b = 1.5/3 -> 1/3
        result = cluster_bootstrap_mean_diff(pairs)
        assert result["point"] == pytest.approx(1 / 3)
        assert (result["n_clusters"], result["n_pairs"]) == (2, 3)

    def test_ci_of_two_clusters(self) -> None:
        # Replicates draw (c1, c1) -> 1, (c1, c2) or (c2, c1) -> 0.5, (c2, c2) -> 0 with
        # probabilities 1/4, 1/2, 1/4: the 2.5% and 97.5% percentiles of 2000 of them are 0 and 1.
        result = cluster_bootstrap_mean_diff({"c1": [(1, 0)], "c2": [(0, 0)]})
        assert result["point"] == pytest.approx(0.5)
        assert result["ci95"] == pytest.approx([0.0, 1.0])
        assert result["n_valid_resamples"] == 2000

    def test_ci_uses_the_2_5_and_97_5_percentiles(self) -> None:
        # Three one-pair clusters with differences 1, 0, 0: a replicate is k/3 where k ~ Bin(3, 1/3)
        # draws of c1: P(k=3) = 1/27 = 3.7% > 2.5%, so the 97.5% percentile is 1 (a 95%
        # percentile would be 2/3 since P(k <= 2) = 26/27 = 96.3%); P(k=0) = 29.6% gives low 0.
        result = cluster_bootstrap_mean_diff({"c1": [(1, 0)], "c2": [(0, 0)], "c3": [(0, 0)]})
        assert result["point"] == pytest.approx(1 / 3)
        assert result["ci95"] == pytest.approx([0.0, 1.0])

    def test_single_cluster_gives_no_interval(self) -> None:
        # One discussion: every replicate redraws it, so [point, point] would be no CI at all.
        result = cluster_bootstrap_mean_diff({"only": [(0.9, 0.4), (0.7, 0.6)]})
        assert result["point"] == pytest.approx(0.3)
        assert result["ci95"] is None
        assert result["no_ci"] == "too few clusters for an interval"

    def test_fewer_than_two_valid_replicates(self) -> None:
        result = cluster_bootstrap_mean_diff({"a": [(1, 0)], "b": [(0, 0)]}, n_resamples=1)
        assert result["ci95"] is None
        assert result["no_ci"] == "too few valid resamples for an interval"
        assert result["n_valid_resamples"] == 1

    def test_two_clusters_give_an_interval(self) -> None:
        result = cluster_bootstrap_mean_diff({"a": [(0.9, 0.8)], "b": [(0.5, 0.6)]})
        assert result["ci95"] is not None and result["no_ci"] == ""

    def test_replicates_without_pairs_are_invalid(self) -> None:
        # cluster "empty" has no complete pair: a replicate of only "empty" draws is skipped
        result = cluster_bootstrap_mean_diff(
            {"full": [(1, 0)], "empty": [(None, 0)]}, n_resamples=400
        )
        assert result["point"] == pytest.approx(1.0)
        assert 0 < result["n_valid_resamples"] < 400  # (empty, empty) has probability 1/4
        assert result["ci95"] is None  # only one cluster holds a pair

    def test_incomplete_pairs_are_dropped(self) -> None:
        result = cluster_bootstrap_mean_diff({"c": [(1, None), (0.4, 0.1), (math.nan, 0)]})
        assert result["point"] == pytest.approx(0.3)
        assert result["n_pairs"] == 1

    def test_no_pairs(self) -> None:
        result = cluster_bootstrap_mean_diff({"c": [(None, 1)]})
        assert (result["point"], result["ci95"]) == (None, None)
        assert cluster_bootstrap_mean_diff({})["point"] is None

    def test_reproducible_and_independent_of_insertion_order(self) -> None:
        pairs = {f"item{i}": [(i % 3 / 2, i % 2 / 3), (0.5, i / 10)] for i in range(8)}
        reversed_pairs = dict(reversed(list(pairs.items())))
        first = cluster_bootstrap_mean_diff(pairs, seed=3)
        assert cluster_bootstrap_mean_diff(pairs, seed=3) == first
        assert cluster_bootstrap_mean_diff(reversed_pairs, seed=3) == first
        low, high = first["ci95"]
        assert low <= first["point"] <= high
        assert cluster_bootstrap_mean_diff(pairs, seed=4)["ci95"] != first["ci95"]

    def test_resample_count_must_be_positive(self) -> None:
        with pytest.raises(ValueError):
            cluster_bootstrap_mean_diff({"c": [(1, 0)]}, n_resamples=0)
