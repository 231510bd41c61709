"""PAS (Probability of Agreement State): per-test score and Test -> Finding -> Study pooling.

PAS raw is a main metric; PAS normalised is legacy / auxiliary and must not be reported as
primary (spec, "Main metrics"). A test is a mapping with at least `finding_id` and either `pas`
or both `pi_human` and `pi_agent`; sample sizes (or a stored `n_eff`) give the pooling weights.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .effect_sizes import statistical_family
from .numbers import finite_or_none

Test = Mapping[str, Any]
Posterior = float | Mapping[str, float]

# Fisher-z clamp: r is kept inside [-1 + eps, 1 - eps] so atanh stays finite (spec).
FISHER_EPSILON = 1e-6
# |r_h| below this means neutral human evidence: normalisation is undefined (spec).
NEUTRAL_HUMAN_THRESHOLD = 1e-8
# Empty-finding fallbacks (spec, "Empty/Invalid Data Fallbacks").
EMPTY_PAS_RAW = 0.5
EMPTY_PAS_NORM = 0.0
# Keys of a three-way posterior: effect in the positive direction, no effect, negative direction.
THREE_WAY_STATES = ("pi_plus", "pi_zero", "pi_minus")


def _probability(value: object, name: str) -> float:
    number = finite_or_none(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return number


def calc_pas(pi_h: Posterior, pi_a: Posterior) -> float:
    """Probability that human and agent are in the same state.

    Scalars (posterior probability of an effect): pi_h*pi_a + (1-pi_h)*(1-pi_a).
    Three-way dicts with keys pi_plus / pi_zero / pi_minus: sum over states of pi_h*pi_a
    (a missing state counts as probability 0).
    """
    if isinstance(pi_h, Mapping) and isinstance(pi_a, Mapping):
        return sum(
            _probability(pi_h.get(state, 0.0), f"pi_h[{state}]")
            * _probability(pi_a.get(state, 0.0), f"pi_a[{state}]")
            for state in THREE_WAY_STATES
        )
    if isinstance(pi_h, Mapping) or isinstance(pi_a, Mapping):
        raise TypeError("calc_pas takes two scalars or two three-way dicts, not a mix")
    human = _probability(pi_h, "pi_h")
    agent = _probability(pi_a, "pi_a")
    return human * agent + (1.0 - human) * (1.0 - agent)


def fisher_z_transform(r: float, clamp: bool = True) -> float:
    """z = atanh(r). With clamp, r is first limited to [-1 + 1e-6, 1 - 1e-6]; without it,
    |r| >= 1 gives +-inf. NaN stays NaN so callers can skip it."""
    value = float(r)
    if math.isnan(value):
        return math.nan
    if clamp:
        value = min(max(value, -1.0 + FISHER_EPSILON), 1.0 - FISHER_EPSILON)
    if abs(value) >= 1.0:
        return math.copysign(math.inf, value)
    return math.atanh(value)


def fisher_z_inverse(z: float) -> float:
    """r = tanh(z); +-inf maps to +-1, NaN stays NaN."""
    return math.tanh(float(z))


def per_test_pas(test: Test) -> float | None:
    """The test's PAS: its `pas` value (0.0 is a real value), else calc_pas of its posteriors.
    None when neither is available or the value is not finite."""
    value = test.get("pas")
    if value is None:
        pi_human, pi_agent = test.get("pi_human"), test.get("pi_agent")
        if pi_human is None or pi_agent is None:
            return None
        value = calc_pas(pi_human, pi_agent)
    return finite_or_none(value)


def _first_positive(test: Test, keys: Sequence[str]) -> float | None:
    for key in keys:
        number = finite_or_none(test.get(key))
        if number is not None and number > 0:
            return number
    return None


def _contingency_total(table: object) -> float | None:
    if not isinstance(table, Sequence) or isinstance(table, str):
        return None
    cells = [cell for row in table for cell in (row if isinstance(row, Sequence) else [row])]
    numbers = [finite_or_none(cell) for cell in cells]
    if not numbers or any(number is None for number in numbers):
        return None
    total = sum(numbers)  # type: ignore[arg-type]
    return total if total > 0 else None


def compute_n_eff_for_test(test: Test) -> float:
    """Effective sample size used as the Fisher-z pooling weight (spec, "n_eff").

    A stored positive `n_eff` wins. Otherwise by test family: t/F/ANOVA n1 + n2 (independent)
    or n (paired / one-sample); correlation n; chi-square the sum of the contingency table;
    Mann-Whitney n1 + n2; binomial n. Sample sizes are read from `n1`/`n2`/`n` or the
    replication's `n_agent`/`n1_agent`/`n2_agent` (and `contingency_table[_agent]`).
    Fallback 1 (unweighted).
    """
    stored = _first_positive(test, ["n_eff"])
    if stored is not None:
        return stored
    family = statistical_family(test.get("statistical_test_type"))
    n1 = _first_positive(test, ["n1", "n_agent", "n1_agent", "n"])
    n2 = _first_positive(test, ["n2", "n2_agent"])
    n_eff: float | None = None
    if family == "t" and n1 is not None:
        n_eff = n1 + n2 if n2 is not None else n1
    elif family == "mann_whitney" and n1 is not None and n2 is not None:
        n_eff = n1 + n2
    elif family in ("correlation", "binomial"):
        n_eff = _first_positive(test, ["n", "n_agent", "n1"])
    elif family == "chi_square":
        table = test.get("contingency_table", test.get("contingency_table_agent"))
        n_eff = _contingency_total(table)
    return n_eff if n_eff is not None else 1.0


def pool_fisher_z(z_values: Sequence[float], weights: Sequence[float]) -> float:
    """Weighted mean of Fisher z values; the unweighted mean when the weights sum to <= 0."""
    if not z_values:
        raise ValueError("pool_fisher_z needs at least one z value")
    if len(z_values) != len(weights):
        raise ValueError("z_values and weights differ in length")
    total_weight = math.fsum(weights)
    if not total_weight > 0:  # also catches a NaN sum
        return math.fsum(z_values) / len(z_values)
    return math.fsum(w * z for z, w in zip(z_values, weights, strict=True)) / total_weight


def _pooled_r(z_values: list[float], weights: list[float]) -> float | None:
    """tanh of the pooled z, or None when nothing is poolable or the pool is not finite."""
    if not z_values:
        return None
    z_bar = pool_fisher_z(z_values, weights)
    if not math.isfinite(z_bar):
        return None
    return fisher_z_inverse(z_bar)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def aggregate_finding_pas_raw(tests: Sequence[Test]) -> float:
    """Finding-level PAS raw: K=1 -> that test's PAS; K>1 -> n_eff-weighted Fisher-z pool of
    r_i = 2*PAS_i - 1, back to (r_f + 1)/2. Empty -> 0.5. Tests without a finite PAS are
    skipped; if no z survives, the simple mean of the PAS values (0.5 if there are none)."""
    if not tests:
        return EMPTY_PAS_RAW
    if len(tests) == 1:
        only = per_test_pas(tests[0])
        return only if only is not None else EMPTY_PAS_RAW
    pas_values: list[float] = []
    z_values: list[float] = []
    weights: list[float] = []
    for test in tests:
        pas = per_test_pas(test)
        if pas is None:
            continue
        pas_values.append(pas)
        z = fisher_z_transform(2.0 * pas - 1.0, clamp=True)
        if math.isfinite(z):
            z_values.append(z)
            weights.append(compute_n_eff_for_test(test))
    pooled = _pooled_r(z_values, weights)
    if pooled is None:
        return _mean(pas_values) if pas_values else EMPTY_PAS_RAW
    return (pooled + 1.0) / 2.0


def human_ceiling(pi_human: Posterior) -> float:
    """H = the PAS an agent would reach by matching the human posteriors exactly:
    pi_h^2 + (1 - pi_h)^2 (scalar), or the sum of squared state probabilities (three-way)."""
    return calc_pas(pi_human, pi_human)


def normalised_ratio(test: Test) -> float | None:
    """r' = (2*PAS - 1) / (2*H - 1); None when PAS or pi_human is missing or the human
    evidence is neutral (|2H - 1| < 1e-8), where normalisation is undefined."""
    pas = per_test_pas(test)
    pi_human = test.get("pi_human")
    if pas is None or pi_human is None:
        return None
    r_human = 2.0 * human_ceiling(pi_human) - 1.0
    if abs(r_human) < NEUTRAL_HUMAN_THRESHOLD:
        return None
    return (2.0 * pas - 1.0) / r_human


def aggregate_finding_pas_norm(tests: Sequence[Test]) -> float:
    """Finding-level PAS normalised (legacy): K=1 -> r'_1 (0.0 when undefined); K>1 -> clamp
    each r' to [-1+1e-6, 1-1e-6], n_eff-weighted Fisher-z pool, tanh. Tests with neutral human
    evidence are skipped; if none survive, the mean of the valid ratios, else 0.0. Empty -> 0.0."""
    if not tests:
        return EMPTY_PAS_NORM
    if len(tests) == 1:
        only = normalised_ratio(tests[0])
        return only if only is not None else EMPTY_PAS_NORM
    ratios: list[float] = []
    z_values: list[float] = []
    weights: list[float] = []
    for test in tests:
        ratio = normalised_ratio(test)
        if ratio is None:
            continue
        ratios.append(ratio)
        z = fisher_z_transform(ratio, clamp=True)
        if math.isfinite(z):
            z_values.append(z)
            weights.append(compute_n_eff_for_test(test))
    pooled = _pooled_r(z_values, weights)
    if pooled is None:
        return _mean(ratios) if ratios else EMPTY_PAS_NORM
    return pooled


def group_by_finding(tests: Sequence[Test]) -> dict[Any, list[Test]]:
    """Tests grouped by `finding_id`, in first-seen order."""
    groups: dict[Any, list[Test]] = {}
    for test in tests:
        groups.setdefault(test["finding_id"], []).append(test)
    return groups


def aggregate_study_pas(tests: Sequence[Test]) -> tuple[float, float, dict[Any, dict[str, Any]]]:
    """(PAS raw, PAS norm, per finding) of one study: simple means of the finding-level values,
    so each finding counts once however many tests it has. Empty -> (0.5, 0.0, {})."""
    per_finding: dict[Any, dict[str, Any]] = {}
    for finding_id, finding_tests in group_by_finding(tests).items():
        per_finding[finding_id] = {
            "pas_raw": aggregate_finding_pas_raw(finding_tests),
            "pas_norm": aggregate_finding_pas_norm(finding_tests),
            "n_tests": len(finding_tests),
        }
    if not per_finding:
        return EMPTY_PAS_RAW, EMPTY_PAS_NORM, {}
    raw = _mean([finding["pas_raw"] for finding in per_finding.values()])
    norm = _mean([finding["pas_norm"] for finding in per_finding.values()])
    return raw, norm, per_finding


def aggregate_pas_inverse_variance(
    pas_values: Sequence[float | None],
    se_values: Sequence[float | None],
    min_se: float = 1e-10,
) -> tuple[float, float]:
    """Inverse-variance pooled mean of per-study PAS and its SE.

    Studies whose SE is finite and >= min_se get weight 1/SE^2: mean = sum(w*PAS)/sum(w),
    SE = 1/sqrt(sum(w)); studies without a usable SE then get weight 0. When no study has a
    usable SE: the simple mean and (1/K)*sqrt(sum SE^2) (missing SEs count as 0).
    Non-finite PAS values are dropped with their SE. Nothing left -> (0.0, 0.0).
    """
    if len(pas_values) != len(se_values):
        raise ValueError("pas_values and se_values differ in length")
    pairs = [
        (pas, finite_or_none(se) or 0.0)
        for pas, se in ((finite_or_none(p), s) for p, s in zip(pas_values, se_values, strict=True))
        if pas is not None
    ]
    if not pairs:
        return 0.0, 0.0
    weights = [1.0 / (se * se) if se >= min_se else 0.0 for _, se in pairs]
    total_weight = math.fsum(weights)
    if total_weight > 0:
        mean = math.fsum(w * pas for w, (pas, _) in zip(weights, pairs, strict=True)) / total_weight
        return mean, 1.0 / math.sqrt(total_weight)
    k = len(pairs)
    mean = math.fsum(pas for pas, _ in pairs) / k
    return mean, math.sqrt(math.fsum(se * se for _, se in pairs)) / k
