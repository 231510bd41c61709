"""PAS: per-test score, Fisher-z helpers, n_eff, Test -> Finding -> Study pooling.

Expected values are derived by hand. A useful identity: with r = 2*PAS - 1, the Fisher z is
0.5*ln(PAS/(1-PAS)), so Fisher pooling of PAS values is pooling of their log-odds and the pooled
PAS is G/(1+G) with G the (weighted) geometric mean of the odds PAS/(1-PAS).
"""

from __future__ import annotations

import math

import pytest

from metrics.families.agreement import (
    aggregate_finding_pas_norm,
    aggregate_finding_pas_raw,
    aggregate_pas_inverse_variance,
    aggregate_study_pas,
    calc_pas,
    compute_n_eff_for_test,
    fisher_z_inverse,
    fisher_z_transform,
    human_ceiling,
    per_test_pas,
    pool_fisher_z,
)

# atanh(1 - 1e-6) = 0.5*ln(1999999): the clamped Fisher z of r = 1.
CLAMPED_Z = 0.5 * math.log(1_999_999)


def odds_pool(odds: list[float], weights: list[float] | None = None) -> float:
    """G/(1+G) for the weighted geometric mean G of the odds (see module docstring)."""
    weights = weights or [1.0] * len(odds)
    log_g = sum(w * math.log(o) for o, w in zip(odds, weights, strict=True)) / sum(weights)
    g = math.exp(log_g)
    return g / (1 + g)


def case(finding: str = "F1", **fields: object) -> dict[str, object]:
    """A test dict of study S1."""
    return {"study_id": "S1", "finding_id": finding, **fields}


class TestCalcPas:
    @pytest.mark.parametrize(
        ("pi", "expected"),
        [(0.8, 0.68), (0.5, 0.5), (1.0, 1.0), (0.0, 1.0), (0.9, 0.82)],
    )
    def test_identical_posteriors_give_the_human_ceiling(self, pi: float, expected: float) -> None:
        # pi^2 + (1-pi)^2: 0.64 + 0.04, 0.25 + 0.25, 1, 1, 0.81 + 0.01
        assert calc_pas(pi, pi) == pytest.approx(expected)

    def test_scalar_formula(self) -> None:
        assert calc_pas(0.9, 0.2) == pytest.approx(0.9 * 0.2 + 0.1 * 0.8)  # 0.26
        assert calc_pas(1.0, 0.0) == 0.0

    def test_three_way_is_the_dot_product_of_state_probabilities(self) -> None:
        human = {"pi_plus": 0.7, "pi_zero": 0.2, "pi_minus": 0.1}
        agent = {"pi_plus": 0.5, "pi_zero": 0.3, "pi_minus": 0.2}
        assert calc_pas(human, agent) == pytest.approx(0.35 + 0.06 + 0.02)
        assert calc_pas(human, human) == pytest.approx(0.49 + 0.04 + 0.01)

    def test_three_way_missing_state_counts_as_zero(self) -> None:
        assert calc_pas({"pi_plus": 1.0}, {"pi_plus": 0.6, "pi_zero": 0.4}) == pytest.approx(0.6)

    def test_direction_mismatch_in_three_way_form(self) -> None:
        positive = {"pi_plus": 0.9, "pi_zero": 0.1}
        negative = {"pi_minus": 0.9, "pi_zero": 0.1}
        assert calc_pas(positive, negative) == pytest.approx(0.01)

    def test_mixing_scalar_and_dict_is_a_type_error(self) -> None:
        with pytest.raises(TypeError):
            calc_pas(0.5, {"pi_plus": 0.5})

    @pytest.mark.parametrize("bad", [1.2, -0.1, math.nan, math.inf, None, "x"])
    def test_out_of_range_posterior_is_rejected(self, bad: object) -> None:
        with pytest.raises(ValueError, match="probability"):
            calc_pas(bad, 0.5)  # type: ignore[arg-type]


class TestFisherZ:
    def test_transform_and_inverse(self) -> None:
        assert fisher_z_transform(0.5) == pytest.approx(0.5 * math.log(3))
        assert fisher_z_transform(0.0) == 0.0
        assert fisher_z_inverse(0.5 * math.log(3)) == pytest.approx(0.5)

    def test_clamp_keeps_plus_minus_one_finite(self) -> None:
        assert fisher_z_transform(1.0) == pytest.approx(CLAMPED_Z)
        assert fisher_z_transform(-1.0) == pytest.approx(-CLAMPED_Z)
        assert fisher_z_transform(5.0) == pytest.approx(CLAMPED_Z)

    def test_without_clamp_plus_minus_one_are_infinite(self) -> None:
        assert fisher_z_transform(1.0, clamp=False) == math.inf
        assert fisher_z_transform(-1.0, clamp=False) == -math.inf

    def test_nan_stays_nan(self) -> None:
        assert math.isnan(fisher_z_transform(math.nan))
        assert math.isnan(fisher_z_inverse(math.nan))

    def test_inverse_of_infinity(self) -> None:
        assert fisher_z_inverse(math.inf) == 1.0
        assert fisher_z_inverse(-math.inf) == -1.0


class TestNEff:
    @pytest.mark.parametrize(
        ("fields", "expected"),
        [
            ({"n_eff": 42, "statistical_test_type": "t-test", "n1": 5, "n2": 5}, 42),
            ({"statistical_test_type": "t-test", "n1": 20, "n2": 30}, 50),
            ({"statistical_test_type": "t-test", "n": 25}, 25),
            ({"statistical_test_type": "ANOVA", "n_agent": 40, "n2_agent": 44}, 84),
            ({"statistical_test_type": "correlation", "n": 60}, 60),
            (
                {"statistical_test_type": "chi-square", "contingency_table": [[10, 20], [30, 40]]},
                100,
            ),
            ({"statistical_test_type": "mannwhitneyu", "n1": 12, "n2": 15}, 27),
            ({"statistical_test_type": "binomial", "n": 80}, 80),
        ],
    )
    def test_per_test_type(self, fields: dict[str, object], expected: float) -> None:
        assert compute_n_eff_for_test(fields) == expected

    @pytest.mark.parametrize(
        "fields",
        [
            {},
            {"statistical_test_type": "unknown-test", "n": 50},
            {"statistical_test_type": "mannwhitneyu", "n1": 12},  # needs both groups
            {"statistical_test_type": "t-test", "n_eff": 0},  # non-positive n_eff is unusable
            {"statistical_test_type": "t-test", "n_eff": math.nan},
            {"statistical_test_type": "chi-square", "contingency_table": [[0, 0], [0, 0]]},
        ],
    )
    def test_fallback_is_one(self, fields: dict[str, object]) -> None:
        assert compute_n_eff_for_test(fields) == 1


class TestPoolFisherZ:
    def test_weighted_mean(self) -> None:
        assert pool_fisher_z([0.2, 0.4], [1, 3]) == pytest.approx((0.2 + 1.2) / 4)

    @pytest.mark.parametrize("weights", [[0, 0], [-1, 0.5]])
    def test_non_positive_weight_sum_gives_unweighted_mean(self, weights: list[float]) -> None:
        assert pool_fisher_z([0.2, 0.4], weights) == pytest.approx(0.3)

    def test_empty_is_an_error(self) -> None:
        with pytest.raises(ValueError):
            pool_fisher_z([], [])


class TestFindingPasRaw:
    def test_pooling_of_point_six_seven_eight_with_equal_weights(self) -> None:
        tests = [case(pas=p) for p in (0.6, 0.7, 0.8)]
        # odds 1.5, 7/3, 4 -> geometric mean 14^(1/3) = 2.41014 -> 0.706757
        expected = 14 ** (1 / 3) / (1 + 14 ** (1 / 3))
        assert expected == pytest.approx(0.7067571, abs=1e-7)
        assert aggregate_finding_pas_raw(tests) == pytest.approx(expected)
        same_n = [case(pas=p, n_eff=50) for p in (0.6, 0.7, 0.8)]
        assert aggregate_finding_pas_raw(same_n) == pytest.approx(expected)

    def test_n_eff_weights(self) -> None:
        tests = [case(pas=0.6, n_eff=10), case(pas=0.8, n_eff=30)]
        assert aggregate_finding_pas_raw(tests) == pytest.approx(odds_pool([1.5, 4], [10, 30]))
        assert aggregate_finding_pas_raw(tests) == pytest.approx(0.7578792, abs=1e-7)

    def test_single_test_is_returned_as_is(self) -> None:
        assert aggregate_finding_pas_raw([case(pas=0.37)]) == 0.37
        assert aggregate_finding_pas_raw([case(pas=1.0)]) == 1.0

    def test_zero_pas_is_a_real_value(self) -> None:
        assert aggregate_finding_pas_raw([case(pas=0.0)]) == 0.0
        # r = -1 clamps to z = -CLAMPED_Z; pooled with z = 0 the mean is -CLAMPED_Z/2,
        # i.e. odds sqrt(1e-6/1.999999) -> about 0.000707 (0.5 if 0.0 were taken as missing).
        odds = math.sqrt(1e-6 / 1.999999)
        pooled = aggregate_finding_pas_raw([case(pas=0.0), case(pas=0.5)])
        assert pooled == pytest.approx(odds / (1 + odds))
        assert pooled == pytest.approx(0.000707, abs=1e-6)

    def test_pas_from_posteriors_when_pas_is_absent(self) -> None:
        assert per_test_pas(case(pi_human=0.8, pi_agent=0.8)) == pytest.approx(0.68)
        assert per_test_pas(case(pas=0.0, pi_human=0.9, pi_agent=0.9)) == 0.0
        assert aggregate_finding_pas_raw([case(pi_human=0.9, pi_agent=0.2)]) == pytest.approx(0.26)

    def test_empty_finding(self) -> None:
        assert aggregate_finding_pas_raw([]) == 0.5

    def test_invalid_tests_are_skipped(self) -> None:
        tests = [case(pas=math.nan), case(pas=0.6), case(), case(pas=math.inf), case(pas=0.8)]
        assert aggregate_finding_pas_raw(tests) == pytest.approx(odds_pool([1.5, 4]))

    def test_all_invalid_falls_back_to_the_empty_value(self) -> None:
        assert aggregate_finding_pas_raw([case(pas=math.nan), case()]) == 0.5
        assert aggregate_finding_pas_raw([case(pas=math.nan)]) == 0.5


class TestFindingPasNorm:
    def test_human_ceiling(self) -> None:
        assert human_ceiling(0.9) == pytest.approx(0.82)
        assert human_ceiling({"pi_plus": 0.7, "pi_zero": 0.2, "pi_minus": 0.1}) == pytest.approx(
            0.54
        )

    def test_identical_posteriors_normalise_to_one(self) -> None:
        assert aggregate_finding_pas_norm([case(pi_human=0.8, pi_agent=0.8)]) == pytest.approx(1.0)

    def test_single_test_ratio(self) -> None:
        # PAS 0.66 -> r 0.32; H 0.82 -> r_h 0.64; r' = 0.5
        assert aggregate_finding_pas_norm([case(pi_human=0.9, pi_agent=0.7)]) == pytest.approx(0.5)
        # with a stored PAS and pi_human: r = 2*0.41 - 1 = -0.18, r' = -0.18/0.64
        stored = case(pas=0.41, pi_human=0.9)
        assert aggregate_finding_pas_norm([stored]) == pytest.approx(-0.28125)

    def test_single_test_ratio_is_not_clamped(self) -> None:
        # spec: K = 1 -> r'_1 itself; (2*0.95 - 1)/(2*0.7 - 1) = 0.9/0.4
        assert aggregate_finding_pas_norm([case(pi_human=0.7, pi_agent=0.95)]) == pytest.approx(
            2.25
        )

    def test_three_way_ratio(self) -> None:
        human = {"pi_plus": 0.7, "pi_zero": 0.2, "pi_minus": 0.1}
        agent = {"pi_plus": 0.5, "pi_zero": 0.3, "pi_minus": 0.2}
        # r = 2*0.43 - 1 = -0.14, r_h = 2*0.54 - 1 = 0.08
        ratio = aggregate_finding_pas_norm([case(pi_human=human, pi_agent=agent)])
        assert ratio == pytest.approx(-1.75)

    def test_neutral_human_single_test_is_zero(self) -> None:
        assert aggregate_finding_pas_norm([case(pi_human=0.5, pi_agent=0.9)]) == 0.0
        # r_h = 2H - 1 = 4*(pi_h - 0.5)^2 = 4e-10 < 1e-8: still neutral
        assert aggregate_finding_pas_norm([case(pi_human=0.50001, pi_agent=0.9)]) == 0.0

    def test_neutral_human_is_skipped_among_several(self) -> None:
        tests = [
            case(pi_human=0.5, pi_agent=0.9, n_eff=100),  # skipped despite its weight
            case(pi_human=0.9, pi_agent=0.7, n_eff=10),  # r' = 0.4/0.8 = 0.5
            case(pi_human=0.8, pi_agent=0.6, n_eff=30),  # r' = 0.2/0.6 = 1/3
        ]
        z_bar = (10 * math.atanh(0.5) + 30 * math.atanh(1 / 3)) / 40
        assert aggregate_finding_pas_norm(tests) == pytest.approx(math.tanh(z_bar))
        assert aggregate_finding_pas_norm(tests) == pytest.approx(0.3775993, abs=1e-7)

    def test_ratios_are_clamped_before_pooling(self) -> None:
        tests = [case(pi_human=0.7, pi_agent=0.95), case(pi_human=0.7, pi_agent=0.95)]
        # both r' = 2.25 clamp to 1 - 1e-6, pooled z = atanh(1 - 1e-6) -> tanh gives 1 - 1e-6
        assert aggregate_finding_pas_norm(tests) == pytest.approx(1 - 1e-6, abs=1e-12)

    def test_empty_and_all_neutral(self) -> None:
        assert aggregate_finding_pas_norm([]) == 0.0
        neutral = [case(pi_human=0.5, pi_agent=0.9), case(pi_human=0.5, pi_agent=0.1)]
        assert aggregate_finding_pas_norm(neutral) == 0.0

    def test_tests_without_pi_human_are_skipped(self) -> None:
        tests = [case(pas=0.9), case(pi_human=0.9, pi_agent=0.7)]
        # only r' = 0.5 survives; pooled alone it comes back unchanged
        assert aggregate_finding_pas_norm(tests) == pytest.approx(0.5)


class TestStudyPas:
    def test_simple_mean_across_findings(self) -> None:
        tests = [
            case("F1", pas=0.6),
            case("F1", pas=0.8),
            case("F2", pi_human=0.9, pi_agent=0.7),  # PAS 0.66, r' 0.5
        ]
        raw, norm, per_finding = aggregate_study_pas(tests)
        # F1: odds 1.5 and 4 -> G = sqrt(6) -> sqrt(6)/(1 + sqrt(6)) = 0.710102
        f1 = math.sqrt(6) / (1 + math.sqrt(6))
        assert per_finding["F1"]["pas_raw"] == pytest.approx(f1)
        assert per_finding["F2"]["pas_raw"] == pytest.approx(0.66)
        assert raw == pytest.approx((f1 + 0.66) / 2)  # each finding counts once
        assert per_finding["F1"]["pas_norm"] == 0.0  # no pi_human in F1
        assert norm == pytest.approx((0.0 + 0.5) / 2)
        assert [per_finding[f]["n_tests"] for f in ("F1", "F2")] == [2, 1]

    def test_empty_study(self) -> None:
        assert aggregate_study_pas([]) == (0.5, 0.0, {})


class TestInverseVariance:
    def test_weighted_by_inverse_variance(self) -> None:
        mean, se = aggregate_pas_inverse_variance([0.6, 0.8], [0.1, 0.2])
        # weights 100 and 25
        assert mean == pytest.approx((60 + 20) / 125)
        assert se == pytest.approx(1 / math.sqrt(125))

    def test_studies_without_usable_se_get_no_weight(self) -> None:
        assert aggregate_pas_inverse_variance([0.6, 0.8], [0.1, 0.0]) == pytest.approx((0.6, 0.1))

    def test_no_usable_se_gives_simple_mean(self) -> None:
        mean, se = aggregate_pas_inverse_variance([0.6, 0.8], [0.0, None])
        assert (mean, se) == pytest.approx((0.7, 0.0))

    def test_non_finite_pas_is_dropped(self) -> None:
        assert aggregate_pas_inverse_variance([math.nan, 0.8], [0.1, 0.2]) == pytest.approx(
            (0.8, 0.2)
        )

    def test_empty_and_mismatched(self) -> None:
        assert aggregate_pas_inverse_variance([], []) == (0.0, 0.0)
        with pytest.raises(ValueError):
            aggregate_pas_inverse_variance([0.5], [])
