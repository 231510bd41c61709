"""Effect-size conversions, standard errors and the Z-difference, on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from metrics.families.agreement import FrequentistConsistency as FC
from metrics.families.agreement import statistical_family

# Phi(0.6) = 0.7257468822 -> two-sided tail 2*(1 - Phi(0.6))
TWO_SIDED_TAIL_0_6 = 2 * (1 - 0.7257468822)


class TestStatisticalFamily:
    @pytest.mark.parametrize(
        ("name", "family"),
        [
            ("t-test", "t"),
            ("T_Test", "t"),
            ("ANOVA", "t"),
            ("f-test", "t"),
            ("Pearson", "correlation"),
            ("spearman", "correlation"),
            ("chi2", "chi_square"),
            ("Chi-Square", "chi_square"),
            ("mannwhitneyu", "mann_whitney"),
            ("Mann-Whitney U", "mann_whitney"),
            ("sign_test", "binomial"),
            ("binomial", "binomial"),
            ("kruskal", None),
            (None, None),
        ],
    )
    def test_aliases(self, name: str | None, family: str | None) -> None:
        assert statistical_family(name) == family


class TestEffectToDEquiv:
    def test_t_family_is_already_d(self) -> None:
        assert FC.effect_to_d_equiv("t-test", 0.5) == 0.5
        assert FC.effect_to_d_equiv("anova", -1.25) == -1.25

    def test_correlation_stored_as_fisher_z(self) -> None:
        # z = 0.5: r = tanh(0.5) = 0.4621172, d = 2r/sqrt(1 - r^2) = 0.9242343/0.8868189
        assert FC.effect_to_d_equiv("correlation", 0.5) == pytest.approx(1.0421906, abs=1e-7)
        assert FC.effect_to_d_equiv("pearson", 0.0) == 0.0

    def test_correlation_of_large_z_stays_finite(self) -> None:
        # tanh(25) rounds to 1.0, but d = 2r/sqrt(1-r^2) = 2*sinh(z) is finite
        assert FC.effect_to_d_equiv("correlation", 25.0) == pytest.approx(2 * math.sinh(25.0))

    def test_chi_square_stored_as_log_odds_ratio(self) -> None:
        # ln(4) * sqrt(3)/pi = 1.3862944 * 0.5513289
        assert FC.effect_to_d_equiv("chi-square", math.log(4)) == pytest.approx(0.7643041, abs=1e-7)

    def test_mann_whitney_stored_as_rank_biserial(self) -> None:
        # 2*0.6/sqrt(1 - 0.36) = 1.2/0.8
        assert FC.effect_to_d_equiv("mannwhitneyu", 0.6) == pytest.approx(1.5)
        assert FC.effect_to_d_equiv("mannwhitneyu", -0.6) == pytest.approx(-1.5)

    def test_binomial_stored_as_proportion(self) -> None:
        # 2*(0.7 - 0.5)/sqrt(0.25) = 0.4/0.5
        assert FC.effect_to_d_equiv("binomial", 0.7) == pytest.approx(0.8)
        assert FC.effect_to_d_equiv("sign_test", 0.5) == 0.0
        assert FC.effect_to_d_equiv("binomial", 0.0) == pytest.approx(-2.0)

    @pytest.mark.parametrize(
        ("test_type", "value"),
        [
            ("t-test", None),
            ("t-test", math.nan),
            ("t-test", math.inf),
            ("kruskal", 0.5),
            (None, 0.5),
            ("mannwhitneyu", 1.0),  # d would be infinite
            ("mannwhitneyu", -1.2),
            ("binomial", 1.2),  # not a proportion
        ],
    )
    def test_undefined_conversions_give_none(
        self, test_type: str | None, value: float | None
    ) -> None:
        assert FC.effect_to_d_equiv(test_type, value) is None


class TestStandardErrors:
    def test_cohens_d_se_independent(self) -> None:
        # (20+20)/(20*20) + 0.25/(2*40) = 0.1 + 0.003125
        assert FC.cohens_d_se(0.5, 20, 20) == pytest.approx(math.sqrt(0.103125))

    def test_cohens_d_se_paired(self) -> None:
        # 1/25 + 0.25/50 = 0.045
        assert FC.cohens_d_se(0.5, 25) == pytest.approx(math.sqrt(0.045))
        assert FC.cohens_d_se(0.5, 25, 0) == pytest.approx(0.2121320, abs=1e-7)

    def test_cohens_d_se_without_sample(self) -> None:
        assert FC.cohens_d_se(0.5, 0) == math.inf

    def test_correlation_se(self) -> None:
        assert FC.correlation_se(0.3, 28) == pytest.approx(0.2)  # 1/sqrt(25)
        assert FC.correlation_se(0.3, 3) == math.inf

    def test_log_odds_ratio_and_se(self) -> None:
        # ln(10*8/(5*2)) = ln(8); SE^2 = 1/10 + 1/5 + 1/2 + 1/8 = 0.925
        assert FC.log_odds_ratio(10, 5, 2, 8) == pytest.approx(math.log(8))
        assert FC.log_odds_ratio_se(10, 5, 2, 8) == pytest.approx(math.sqrt(0.925))

    def test_haldane_correction_adds_half_to_every_cell(self) -> None:
        # cells become 0.5, 5.5, 2.5, 8.5
        assert FC.log_odds_ratio(0, 5, 2, 8) == pytest.approx(math.log(0.5 * 8.5 / (5.5 * 2.5)))
        assert FC.log_odds_ratio(0, 5, 2, 8) == pytest.approx(-1.1741198, abs=1e-7)
        expected_se = math.sqrt(1 / 0.5 + 1 / 5.5 + 1 / 2.5 + 1 / 8.5)
        assert FC.log_odds_ratio_se(0, 5, 2, 8) == pytest.approx(expected_se)
        assert FC.log_odds_ratio_se(0, 5, 2, 8) == pytest.approx(1.6430049, abs=1e-7)

    def test_haldane_makes_an_all_zero_row_finite(self) -> None:
        # 0.5*0.5/(0.5*0.5) = 1 -> ln 1 = 0
        assert FC.log_odds_ratio(0, 0, 0, 0) == 0.0
        assert FC.log_odds_ratio_se(0, 0, 0, 0) == pytest.approx(math.sqrt(8))

    def test_negative_counts_are_rejected(self) -> None:
        with pytest.raises(ValueError):
            FC.log_odds_ratio(-1, 5, 2, 8)

    def test_rank_biserial_se(self) -> None:
        # 1/10 + 1/10 + 0.16/40 = 0.204
        assert FC.r_rb_se(0.4, 10, 10) == pytest.approx(math.sqrt(0.204))
        assert FC.r_rb_se(0.4, 0, 10) == math.inf

    def test_proportion_se(self) -> None:
        assert FC.proportion_se(0.5, 100) == pytest.approx(0.05)  # sqrt(0.25/100)
        assert FC.proportion_se(0.5, 0) == math.inf


class TestConversions:
    def test_correlation_to_fisher_z(self) -> None:
        assert FC.correlation_to_fisher_z(0.5) == pytest.approx(0.5 * math.log(3))
        assert FC.correlation_to_fisher_z(1.0) == math.inf
        assert FC.correlation_to_fisher_z(-1.0) == -math.inf
        with pytest.raises(ValueError):
            FC.correlation_to_fisher_z(1.5)

    def test_t_to_cohens_d(self) -> None:
        # independent: 2*sqrt(40/400); paired: 3/sqrt(36)
        assert FC.t_to_cohens_d(2.0, 20, 20) == pytest.approx(2 * math.sqrt(0.1))
        assert FC.t_to_cohens_d(3.0, 36, independent=False) == pytest.approx(0.5)

    def test_t_to_cohens_d_needs_valid_sizes(self) -> None:
        with pytest.raises(ValueError):
            FC.t_to_cohens_d(2.0, 20, None)
        with pytest.raises(ValueError):
            FC.t_to_cohens_d(2.0, 0, independent=False)

    def test_mann_whitney_u_to_rank_biserial(self) -> None:
        assert FC.mann_whitney_u_to_r_rb(30, 10, 10) == pytest.approx(0.4)  # 1 - 60/100


class TestZDiff:
    def test_z_and_consistency(self) -> None:
        # combined SE sqrt(0.09 + 0.16) = 0.5 -> Z = 0.3/0.5
        z_diff, consistency = FC.calculate_z_diff(0.8, 0.3, 0.5, 0.4)
        assert z_diff == pytest.approx(0.6)
        assert consistency == pytest.approx(TWO_SIDED_TAIL_0_6, abs=1e-9)

    def test_sign_follows_agent_minus_human(self) -> None:
        z_diff, consistency = FC.calculate_z_diff(0.5, 0.3, 0.8, 0.4)
        assert z_diff == pytest.approx(-0.6)
        assert consistency == pytest.approx(TWO_SIDED_TAIL_0_6, abs=1e-9)

    def test_without_uncertainty(self) -> None:
        assert FC.calculate_z_diff(0.5, 0.0, 0.5, 0.0) == (0.0, 1.0)
        z_diff, consistency = FC.calculate_z_diff(0.7, 0.0, 0.5, 0.0)
        assert (z_diff, consistency) == (math.inf, 0.0)

    def test_infinite_se_means_no_evidence_of_difference(self) -> None:
        z_diff, consistency = FC.calculate_z_diff(2.0, math.inf, 0.0, 0.1)
        assert z_diff == 0.0
        assert consistency == pytest.approx(1.0)
