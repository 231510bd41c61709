"""Effect sizes, their standard errors and the Z-difference (spec section "Effect Size & SE").

Everything here is a pure function of numbers. The d-equivalent conversion feeds the main ECS
(Lin's CCC); the standard errors and the Z-difference only feed the legacy ECS_Strict.
"""

from __future__ import annotations

import math

from .numbers import finite_or_none

# Null proportion of binomial / sign tests (spec: "p0 = 0.5").
BINOMIAL_NULL_PROPORTION = 0.5

# Accepted spellings of each test family, compared after `_normalise_type_name`.
_TEST_TYPE_ALIASES: dict[str, frozenset[str]] = {
    "t": frozenset(
        {"t_test", "ttest", "ttest_ind", "ttest_rel", "ttest_1samp", "f_test", "ftest", "anova"}
    ),
    "correlation": frozenset({"correlation", "pearson", "spearman", "pearsonr", "spearmanr"}),
    "chi_square": frozenset({"chi_square", "chi2", "chisquare", "chi_squared"}),
    "mann_whitney": frozenset({"mannwhitneyu", "mann_whitney", "mann_whitney_u", "wilcoxon"}),
    "binomial": frozenset({"binomial", "binomtest", "binom_test", "sign_test"}),
}


def _normalise_type_name(test_type: str) -> str:
    return test_type.strip().lower().replace("-", "_").replace(" ", "_")


def statistical_family(test_type: str | None) -> str | None:
    """Family of a statistical test type ("t", "correlation", "chi_square", "mann_whitney",
    "binomial"), or None when the type is missing or unknown."""
    if not isinstance(test_type, str):
        return None
    name = _normalise_type_name(test_type)
    for family, aliases in _TEST_TYPE_ALIASES.items():
        if name in aliases:
            return family
    return None


def _r_to_d(r: float) -> float | None:
    """d = 2r / sqrt(1 - r^2); undefined (None) at |r| >= 1 where d is infinite."""
    if abs(r) >= 1.0:
        return None
    return 2.0 * r / math.sqrt(1.0 - r * r)


def _d_from_fisher_z(z: float) -> float | None:
    # r = tanh(z) and d = 2r/sqrt(1-r^2) simplify to d = 2*sinh(z); the closed form keeps
    # large |z| (where tanh rounds to exactly 1.0) finite instead of dividing by zero.
    try:
        return 2.0 * math.sinh(z)
    except OverflowError:
        return None


def _d_from_proportion(p: float) -> float | None:
    if not 0.0 <= p <= 1.0:
        return None
    p0 = BINOMIAL_NULL_PROPORTION
    return 2.0 * (p - p0) / math.sqrt(p0 * (1.0 - p0))


class FrequentistConsistency:
    """Effect-size conversions and standard errors (spec: FrequentistConsistency.*)."""

    @staticmethod
    def effect_to_d_equiv(test_type: str | None, value: float | None) -> float | None:
        """Cohen's d-equivalent of an effect size stored in its test's native unit.

        t/F/ANOVA: already d. Correlation: Fisher z -> r = tanh(z) -> 2r/sqrt(1-r^2).
        Chi-square: log OR * sqrt(3)/pi. Mann-Whitney: rank-biserial r -> 2r/sqrt(1-r^2).
        Binomial: proportion p -> 2(p - 0.5)/sqrt(0.25). None when the value is missing or
        non-finite, the type is unknown, or the conversion is undefined (|r| >= 1, p not in [0, 1]).
        """
        number = finite_or_none(value)
        family = statistical_family(test_type)
        if number is None or family is None:
            return None
        if family == "t":
            return number
        if family == "correlation":
            return _d_from_fisher_z(number)
        if family == "chi_square":
            return number * math.sqrt(3.0) / math.pi
        if family == "mann_whitney":
            return _r_to_d(number)
        return _d_from_proportion(number)

    @staticmethod
    def cohens_d_se(d: float, n1: float, n2: float = 0) -> float:
        """SE of Cohen's d: independent groups when n2 > 0, else one-sample / paired.

        Independent: sqrt((n1+n2)/(n1*n2) + d^2/(2(n1+n2))). Paired: sqrt(1/n + d^2/(2n)).
        Infinite (no information) when n1 <= 0.
        """
        if n1 <= 0:
            return math.inf
        if n2 > 0:
            n_total = n1 + n2
            return math.sqrt(n_total / (n1 * n2) + d * d / (2.0 * n_total))
        return math.sqrt(1.0 / n1 + d * d / (2.0 * n1))

    @staticmethod
    def correlation_se(r: float, n: float) -> float:
        """SE of Fisher's z of a correlation: 1/sqrt(n - 3); infinite when n <= 3.

        `r` is accepted for signature compatibility; the spec's SE does not depend on it.
        """
        if n <= 3:
            return math.inf
        return 1.0 / math.sqrt(n - 3.0)

    @staticmethod
    def correlation_to_fisher_z(r: float) -> float:
        """Fisher's z = 0.5*ln((1+r)/(1-r)), unclamped: +-inf at r = +-1."""
        if abs(r) > 1.0:
            raise ValueError(f"a correlation must lie in [-1, 1], got {r}")
        if abs(r) == 1.0:
            return math.copysign(math.inf, r)
        return math.atanh(r)

    @staticmethod
    def t_to_cohens_d(
        t: float, n1: float, n2: float | None = None, independent: bool = True
    ) -> float:
        """Cohen's d of a t statistic: t*sqrt((n1+n2)/(n1*n2)) independent, t/sqrt(n1) paired."""
        if independent:
            if n2 is None:
                raise ValueError("an independent-samples t needs n2")
            if n1 <= 0 or n2 <= 0:
                raise ValueError(f"sample sizes must be positive, got n1={n1}, n2={n2}")
            return t * math.sqrt((n1 + n2) / (n1 * n2))
        if n1 <= 0:
            raise ValueError(f"sample size must be positive, got n={n1}")
        return t / math.sqrt(n1)

    @staticmethod
    def mann_whitney_u_to_r_rb(u: float, n1: float, n2: float) -> float:
        """Rank-biserial correlation of a Mann-Whitney U: 1 - 2U/(n1*n2)."""
        if n1 <= 0 or n2 <= 0:
            raise ValueError(f"sample sizes must be positive, got n1={n1}, n2={n2}")
        return 1.0 - 2.0 * u / (n1 * n2)

    @staticmethod
    def log_odds_ratio(a: float, b: float, c: float, d: float) -> float:
        """ln(ad/bc) of a 2x2 table [[a, b], [c, d]], Haldane-Anscombe corrected."""
        a, b, c, d = _haldane_corrected(a, b, c, d)
        return math.log((a * d) / (b * c))

    @staticmethod
    def log_odds_ratio_se(a: float, b: float, c: float, d: float) -> float:
        """sqrt(1/a + 1/b + 1/c + 1/d) of a 2x2 table, Haldane-Anscombe corrected."""
        a, b, c, d = _haldane_corrected(a, b, c, d)
        return math.sqrt(1.0 / a + 1.0 / b + 1.0 / c + 1.0 / d)

    @staticmethod
    def r_rb_se(r_rb: float, n1: float, n2: float) -> float:
        """SE of the rank-biserial r: sqrt(1/n1 + 1/n2 + r^2/(2(n1+n2))); inf if a group is empty."""
        if n1 <= 0 or n2 <= 0:
            return math.inf
        return math.sqrt(1.0 / n1 + 1.0 / n2 + r_rb * r_rb / (2.0 * (n1 + n2)))

    @staticmethod
    def proportion_se(p: float, n: float) -> float:
        """SE of a proportion p = k/n: sqrt(p(1-p)/n); infinite when n <= 0."""
        if n <= 0:
            return math.inf
        return math.sqrt(p * (1.0 - p) / n)

    @staticmethod
    def calculate_z_diff(
        effect_agent: float, se_agent: float, effect_human: float, se_human: float
    ) -> tuple[float, float]:
        """(Z_diff, consistency): Z = (d_a - d_h)/sqrt(SE_a^2 + SE_h^2), consistency = 2(1 - Phi(|Z|)).

        With no uncertainty at all (both SEs zero) equal effects are a perfect match (0, 1) and
        different effects a complete mismatch (inf, 0).
        """
        combined_variance = se_agent**2 + se_human**2
        if combined_variance <= 0:
            if effect_agent == effect_human:
                return 0.0, 1.0
            return math.copysign(math.inf, effect_agent - effect_human), 0.0
        z_diff = (effect_agent - effect_human) / math.sqrt(combined_variance)
        if not math.isfinite(z_diff):
            return z_diff, 0.0
        # sf = 1 - cdf, computed without cancellation for large |Z|.
        from scipy import stats  # here: every process of the site would pay its import

        return z_diff, float(2.0 * stats.norm.sf(abs(z_diff)))


def _haldane_corrected(a: float, b: float, c: float, d: float) -> tuple[float, ...]:
    """Add 0.5 to every cell when any cell is zero (Haldane-Anscombe)."""
    cells = (a, b, c, d)
    if any(cell < 0 for cell in cells):
        raise ValueError(f"contingency counts must be non-negative, got {cells}")
    if any(cell == 0 for cell in cells):
        return tuple(cell + 0.5 for cell in cells)
    return cells
