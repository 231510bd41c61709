"""ECS: weighted CCC / Pearson / regression, two-level weights, compute_ecs_corr, ECS_Strict.

All expected values are worked out by hand with population (weights-normalised) moments.
"""

from __future__ import annotations

import math

import pytest

from metrics.families.agreement import (
    aggregate_finding_ecs,
    aggregate_study_ecs_strict,
    collect_ecs_points,
    compute_ecs_corr,
    effect_d,
    weighted_ccc,
    weighted_corr,
    weighted_linreg,
)

# Phi(1) = 0.8413447461, Phi(1.96) = 0.9750021049, Phi(sqrt(2.5)) = Phi(1.5811388) = 0.9430769
TAIL_1 = 2 * (1 - 0.8413447461)
TAIL_1_96 = 2 * (1 - 0.9750021049)
TAIL_RMS_1_2 = 2 * (1 - 0.9430769)

# x = [0, 1, 2], y = [0, 1, 4] with weights [2, 1, 1] (normalised 0.5, 0.25, 0.25):
# mean_x 0.75, mean_y 1.25, var_x 0.6875, var_y 2.6875, cov 1.3125
WEIGHTED_X, WEIGHTED_Y, WEIGHTS = [0, 1, 2], [0, 1, 4], [2, 1, 1]


def case(study: str, finding: str, human_d: float | None, agent_d: float | None) -> dict:
    return {
        "study_id": study,
        "finding_id": finding,
        "human_effect_d": human_d,
        "agent_effect_d": agent_d,
    }


class TestWeightedCcc:
    def test_perfectly_concordant(self) -> None:
        assert weighted_ccc([1, 2, 3, 4], [1, 2, 3, 4], [1, 1, 1, 1]) == pytest.approx(1.0)

    def test_perfectly_discordant(self) -> None:
        # means 2 and 2, variances 2/3, covariance -2/3
        assert weighted_ccc([1, 2, 3], [3, 2, 1], [1, 1, 1]) == pytest.approx(-1.0)

    def test_shifted_profile(self) -> None:
        # variances 2/3, covariance 2/3, (mean difference)^2 = 1 -> (4/3)/(7/3)
        assert weighted_ccc([1, 2, 3], [2, 3, 4], [1, 1, 1]) == pytest.approx(4 / 7)

    def test_scaled_profile(self) -> None:
        # var_x 2/3, var_y 8/3, cov 4/3, (2 - 4)^2 = 4 -> (8/3)/(22/3)
        assert weighted_ccc([1, 2, 3], [2, 4, 6], [1, 1, 1]) == pytest.approx(8 / 22)

    def test_textbook_lin_with_equal_weights(self) -> None:
        # means 1.5 and 2, var_x 1.25, var_y 1, cov 1, bias 0.25 -> 2/2.5
        assert weighted_ccc([0, 1, 2, 3], [1, 1, 3, 3], [1, 1, 1, 1]) == pytest.approx(0.8)

    def test_weighted(self) -> None:
        # 2*1.3125/(0.6875 + 2.6875 + 0.5^2) = 2.625/3.625
        assert weighted_ccc(WEIGHTED_X, WEIGHTED_Y, WEIGHTS) == pytest.approx(2.625 / 3.625)

    def test_integer_weights_equal_repeating_points(self) -> None:
        repeated = weighted_ccc([0, 0, 1, 2], [0, 0, 1, 4], [1, 1, 1, 1])
        assert weighted_ccc(WEIGHTED_X, WEIGHTED_Y, WEIGHTS) == pytest.approx(repeated)

    def test_scaling_all_weights_changes_nothing(self) -> None:
        base = weighted_ccc([0, 1, 2, 5], [1, 1, 3, 2], [1, 2, 3, 4])
        assert weighted_ccc([0, 1, 2, 5], [1, 1, 3, 2], [10, 20, 30, 40]) == pytest.approx(base)
        assert weighted_ccc(
            [0, 1, 2, 5], [1, 1, 3, 2], [0.001, 0.002, 0.003, 0.004]
        ) == pytest.approx(base)

    def test_the_seeds_literal_formula_would_depend_on_the_sum_of_the_weights(self) -> None:
        x, y = [0.0, 1.0, 2.0, 5.0], [1.0, 1.0, 3.0, 2.0]

        def literal_ccc(w: list[float]) -> float:
            # The seed read literally: weighted means, but unnormalised sums for var and cov.
            mx = sum(wi * xi for wi, xi in zip(w, x, strict=True)) / sum(w)
            my = sum(wi * yi for wi, yi in zip(w, y, strict=True)) / sum(w)
            vx = sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x, strict=True))
            vy = sum(wi * (yi - my) ** 2 for wi, yi in zip(w, y, strict=True))
            cov = sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, y, strict=True))
            return 2 * cov / (vx + vy + (mx - my) ** 2)

        unit = [0.1, 0.2, 0.3, 0.4]  # sums to 1: both readings agree
        assert weighted_ccc(x, y, unit) == pytest.approx(literal_ccc(unit))
        tenfold = [10 * wi for wi in unit]
        assert literal_ccc(tenfold) != pytest.approx(literal_ccc(unit), abs=1e-3)
        assert weighted_ccc(x, y, tenfold) == pytest.approx(weighted_ccc(x, y, unit))

    @pytest.mark.parametrize("bad_weight", [0, -1])
    def test_non_positive_weights_drop_the_point(self, bad_weight: float) -> None:
        assert weighted_ccc([1, 2, 3, 100], [1, 2, 3, -50], [1, 1, 1, bad_weight]) == pytest.approx(
            1.0
        )

    @pytest.mark.parametrize("bad", [None, math.nan, math.inf, -math.inf])
    def test_invalid_values_drop_the_point(self, bad: float | None) -> None:
        assert weighted_ccc([1, 2, 3, bad], [1, 2, 3, 7], [1, 1, 1, 1]) == pytest.approx(1.0)
        assert weighted_ccc([1, 2, 3, 4], [1, 2, 3, 4], [1, 1, 1, bad]) == pytest.approx(1.0)

    def test_fewer_than_two_points_is_undefined(self) -> None:
        assert weighted_ccc([], [], []) is None
        assert weighted_ccc([1], [1], [1]) is None
        assert weighted_ccc([1, 2], [1, math.nan], [1, 1]) is None

    def test_constant_profiles(self) -> None:
        assert weighted_ccc([0.1, 0.1, 0.1], [0.1, 0.1, 0.1], [1, 1, 1]) == 1.0  # identical
        assert weighted_ccc([1, 1, 1], [2, 2, 2], [1, 1, 1]) == 0.0  # cov 0, bias 1
        assert weighted_ccc([1, 2, 3], [2, 2, 2], [1, 1, 1]) == 0.0  # cov 0

    def test_lengths_must_match(self) -> None:
        with pytest.raises(ValueError):
            weighted_ccc([1, 2], [1, 2, 3], [1, 1, 1])


class TestWeightedCorrAndRegression:
    def test_pearson_ignores_shift_and_scale(self) -> None:
        assert weighted_corr([1, 2, 3], [2, 3, 4], [1, 1, 1]) == pytest.approx(1.0)
        assert weighted_corr([1, 2, 3], [6, 4, 2], [1, 1, 1]) == pytest.approx(-1.0)

    def test_weighted_pearson(self) -> None:
        expected = 1.3125 / math.sqrt(0.6875 * 2.6875)
        assert weighted_corr(WEIGHTED_X, WEIGHTED_Y, WEIGHTS) == pytest.approx(expected)

    def test_pearson_undefined(self) -> None:
        assert weighted_corr([1, 2, 3], [5, 5, 5], [1, 1, 1]) is None
        assert weighted_corr([1], [1], [1]) is None

    def test_regression_recovers_a_line(self) -> None:
        slope, intercept = weighted_linreg([0, 1, 2, 3], [1, 3, 5, 7], [1, 5, 2, 9])
        assert (slope, intercept) == pytest.approx((2.0, 1.0))

    def test_weighted_regression(self) -> None:
        # a = 1.3125/0.6875 = 21/11, b = 1.25 - a*0.75
        slope, intercept = weighted_linreg(WEIGHTED_X, WEIGHTED_Y, WEIGHTS)
        assert slope == pytest.approx(21 / 11)
        assert intercept == pytest.approx(1.25 - 21 / 11 * 0.75)

    def test_regression_undefined_for_constant_x(self) -> None:
        assert weighted_linreg([2, 2, 2], [1, 2, 3], [1, 1, 1]) == (None, None)


class TestEffectD:
    def test_direct_d_wins(self) -> None:
        test = {"human_effect_d": 0.4, "human_effect_size": 0.9, "statistical_test_type": "t-test"}
        assert effect_d(test, "human") == 0.4

    def test_converted_from_effect_size(self) -> None:
        test = {
            "agent_effect_d": None,
            "agent_effect_size": 0.6,
            "statistical_test_type": "mannwhitneyu",
        }
        assert effect_d(test, "agent") == pytest.approx(1.5)

    def test_non_finite_d_falls_back_to_effect_size(self) -> None:
        test = {
            "human_effect_d": math.nan,
            "human_effect_size": 0.7,
            "statistical_test_type": "binomial",
        }
        assert effect_d(test, "human") == pytest.approx(0.8)

    def test_missing(self) -> None:
        assert effect_d({"statistical_test_type": "t-test"}, "human") is None


class TestTwoLevelWeights:
    def test_each_study_sums_to_one_and_findings_share_equally(self) -> None:
        tests = [
            case("A", "F1", 0, 0),
            case("A", "F1", 1, 1),
            case("A", "F1", 5, None),  # no agent effect: not a point, not counted
            case("A", "F2", 2, 4),
            case("B", "F1", 1, 2),
            case("B", "F1", 3, 2),
            case("B", "F1", 2, 2),
        ]
        points = collect_ecs_points(tests)
        assert [p.index for p in points] == [0, 1, 3, 4, 5, 6]
        assert [p.weight for p in points] == pytest.approx([0.25, 0.25, 0.5, 1 / 3, 1 / 3, 1 / 3])

    def test_nan_effects_are_not_points(self) -> None:
        points = collect_ecs_points([case("A", "F1", math.nan, 1), case("A", "F1", 1, 1)])
        assert [(p.index, p.weight) for p in points] == [(1, 1.0)]


class TestComputeEcsCorr:
    # Study A: F1 (0,0), (1,1) weight 1/4 each, F2 (2,4) weight 1/2.
    # Two-level weights: means 1.25 / 2.25, var_x 0.6875, var_y 3.1875, cov 1.4375,
    # bias 1 -> CCC 2.875/4.875. Equal weights (per study): means 1 / 5/3, var_x 2/3,
    # var_y 26/9, cov 4/3, bias 4/9 -> CCC (8/3)/4 = 2/3.
    STUDY_A = [case("A", "F1", 0, 0), case("A", "F1", 1, 1), case("A", "F2", 2, 4)]
    STUDY_B = [case("B", "F1", 1, 2), case("B", "F1", 3, 2)]

    def test_overall_uses_two_level_weights(self) -> None:
        result = compute_ecs_corr(self.STUDY_A)
        assert result["ecs_overall"] == pytest.approx(2.875 / 4.875)
        assert result["n_tests_overall"] == 3

    def test_per_study_uses_equal_weights(self) -> None:
        result = compute_ecs_corr(self.STUDY_A)
        assert result["ecs_per_study"]["A"] == pytest.approx(2 / 3)
        assert result["n_tests_per_study"]["A"] == 3

    def test_overall_across_studies(self) -> None:
        # A weights 1/4, 1/4, 1/2 and B 1/2, 1/2 (normalised by 2): means 1.625 / 2.125,
        # var_x 0.984375, var_y 1.609375, cov 0.671875, bias 0.25 -> 1.34375/2.84375 = 43/91
        result = compute_ecs_corr(self.STUDY_A + self.STUDY_B)
        assert result["ecs_overall"] == pytest.approx(43 / 91)
        assert result["n_tests_overall"] == 5

    def test_fewer_than_three_tests_leave_the_study_undefined(self) -> None:
        result = compute_ecs_corr(self.STUDY_A + self.STUDY_B)
        assert result["ecs_per_study"]["B"] is None
        assert result["ecs_corr_per_study"]["B"] is None
        assert result["caricature_per_study"]["B"] == {"a": None, "b": None}
        assert result["n_tests_per_study"]["B"] == 2

    def test_study_without_valid_effects_is_listed_as_undefined(self) -> None:
        result = compute_ecs_corr([*self.STUDY_A, case("C", "F1", None, 1.0)])
        assert result["ecs_per_study"]["C"] is None
        assert result["n_tests_per_study"]["C"] == 0

    def test_per_domain(self) -> None:
        groups = {"Cognition": ["A"], "Social": ["B"], "Strategic": []}
        result = compute_ecs_corr(self.STUDY_A + self.STUDY_B, study_groups=groups)
        assert result["ecs_domain"]["Cognition"] == pytest.approx(2.875 / 4.875)
        assert result["ecs_domain"]["Social"] is None
        assert result["ecs_domain"]["Strategic"] is None
        assert result["n_tests_domain"] == {"Cognition": 3, "Social": 2, "Strategic": 0}

    def test_pearson_and_caricature_alongside(self) -> None:
        result = compute_ecs_corr(self.STUDY_A)
        # two-level weights: r = 1.4375/sqrt(0.6875*3.1875), a = 1.4375/0.6875
        assert result["ecs_corr_overall"] == pytest.approx(1.4375 / math.sqrt(0.6875 * 3.1875))
        assert result["caricature_overall"]["a"] == pytest.approx(1.4375 / 0.6875)
        assert result["caricature_overall"]["b"] == pytest.approx(2.25 - 1.4375 / 0.6875 * 1.25)

    def test_overall_needs_three_tests(self) -> None:
        result = compute_ecs_corr(self.STUDY_B)
        assert result["ecs_overall"] is None
        assert result["n_tests_overall"] == 2

    def test_empty(self) -> None:
        result = compute_ecs_corr([])
        assert result["ecs_overall"] is None
        assert result["n_tests_overall"] == 0
        assert result["ecs_per_study"] == {}
        assert result["ecs_domain"] == {}


class TestEcsStrict:
    def test_single_test(self) -> None:
        assert aggregate_finding_ecs([{"z_diff": 1.96}]) == pytest.approx(TAIL_1_96, abs=1e-9)
        assert aggregate_finding_ecs([{"z_diff": -1.0}]) == pytest.approx(TAIL_1, abs=1e-9)

    def test_rms_pooling(self) -> None:
        # RMS of 1 and -2 = sqrt(2.5)
        pooled = aggregate_finding_ecs([{"z_diff": 1.0}, {"z_diff": -2.0}])
        assert pooled == pytest.approx(TAIL_RMS_1_2, abs=1e-6)

    def test_invalid_z_values_are_skipped(self) -> None:
        tests = [{"z_diff": math.nan}, {"z_diff": math.inf}, {"z_diff": None}, {}, {"z_diff": 1.0}]
        assert aggregate_finding_ecs(tests) == pytest.approx(TAIL_1, abs=1e-9)

    def test_empty_and_all_invalid_give_zero(self) -> None:
        assert aggregate_finding_ecs([]) == 0.0
        assert aggregate_finding_ecs([{"z_diff": math.nan}, {}]) == 0.0

    def test_study_mean_over_findings(self) -> None:
        tests = [
            {"finding_id": "F1", "z_diff": 1.0},
            {"finding_id": "F2", "z_diff": None},  # a finding without Z_diff counts as 0.0
        ]
        study, per_finding = aggregate_study_ecs_strict(tests)
        assert per_finding["F1"] == pytest.approx(TAIL_1, abs=1e-9)
        assert per_finding["F2"] == 0.0
        assert study == pytest.approx(TAIL_1 / 2, abs=1e-9)
        assert aggregate_study_ecs_strict([]) == (0.0, {})
