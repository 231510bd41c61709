"""ECS (Effect Consistency Score): weighted Lin's CCC of human vs agent effect profiles (main),
plus the weighted Pearson r / caricature regression (figures) and ECS_Strict (legacy, Z-diff).

Effect sizes are compared as Cohen's d-equivalents: a test's `human_effect_d` / `agent_effect_d`
when finite, else its `*_effect_size` converted by `statistical_test_type`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .effect_sizes import FrequentistConsistency
from .numbers import finite_or_none
from .pas import group_by_finding

Test = Mapping[str, Any]

# A CCC / Pearson r over fewer points is undefined (two points always correlate perfectly).
MIN_TESTS_FOR_ECS = 3
# ECS_Strict of a finding without any usable Z_diff (spec, "Empty/Invalid Data Fallbacks").
EMPTY_ECS_STRICT = 0.0


@dataclass(frozen=True)
class _Moments:
    mean_x: float
    mean_y: float
    var_x: float
    var_y: float
    cov: float


def _weighted_moments(x: Sequence, y: Sequence, w: Sequence) -> _Moments | None:
    """Weighted means, variances and covariance with the weights normalised to sum to 1, so
    scaling every weight leaves them unchanged and equal weights give the population moments.
    Triples with a missing / non-finite value or a weight <= 0 are dropped; None when fewer
    than two triples remain."""
    if not len(x) == len(y) == len(w):
        raise ValueError("x, y and w differ in length")
    kept = [
        (xi, yi, wi)
        for xi, yi, wi in (map(finite_or_none, triple) for triple in zip(x, y, w, strict=True))
        if xi is not None and yi is not None and wi is not None and wi > 0
    ]
    if len(kept) < 2:
        return None
    xs, ys, ws = (np.array(column, dtype=float) for column in zip(*kept, strict=True))
    ws = ws / ws.sum()
    mean_x, mean_y = float(ws @ xs), float(ws @ ys)
    dx, dy = xs - mean_x, ys - mean_y
    # A constant profile has exactly zero variance; rounding in the mean must not fake some.
    var_x = 0.0 if np.all(xs == xs[0]) else float(ws @ (dx * dx))
    var_y = 0.0 if np.all(ys == ys[0]) else float(ws @ (dy * dy))
    return _Moments(mean_x, mean_y, var_x, var_y, float(ws @ (dx * dy)))


def _clamp_unit(value: float) -> float:
    return max(-1.0, min(1.0, value))


def weighted_corr(x: Sequence, y: Sequence, w: Sequence) -> float | None:
    """Weighted Pearson r; None with fewer than two valid points or a constant profile."""
    moments = _weighted_moments(x, y, w)
    if moments is None or moments.var_x <= 0 or moments.var_y <= 0:
        return None
    return _clamp_unit(moments.cov / math.sqrt(moments.var_x * moments.var_y))


def weighted_linreg(x: Sequence, y: Sequence, w: Sequence) -> tuple[float | None, float | None]:
    """Weighted least squares y = a*x + b as (a, b); (None, None) when x is constant or there
    are fewer than two valid points. Used for the legacy "caricature" regression."""
    moments = _weighted_moments(x, y, w)
    if moments is None or moments.var_x <= 0:
        return None, None
    slope = moments.cov / moments.var_x
    return slope, moments.mean_y - slope * moments.mean_x


def weighted_ccc(x: Sequence, y: Sequence, w: Sequence) -> float | None:
    """Weighted Lin's CCC: 2cov / (var_x + var_y + (mean_x - mean_y)^2) with normalised weights.

    Equal weights give textbook Lin's CCC. None with fewer than two valid points; 1.0 when both
    profiles are the same constant (every point on the identity line, the formula's 0/0).
    """
    moments = _weighted_moments(x, y, w)
    if moments is None:
        return None
    denominator = moments.var_x + moments.var_y + (moments.mean_x - moments.mean_y) ** 2
    if denominator <= 0:
        return 1.0
    return _clamp_unit(2.0 * moments.cov / denominator)


def effect_d(test: Test, side: str) -> float | None:
    """Cohen's d-equivalent of one side ("human" or "agent") of a test, or None."""
    direct = finite_or_none(test.get(f"{side}_effect_d"))
    if direct is not None:
        return direct
    return FrequentistConsistency.effect_to_d_equiv(
        test.get("statistical_test_type"), test.get(f"{side}_effect_size")
    )


@dataclass(frozen=True)
class EcsPoint:
    """One test in the human-vs-agent effect profile. `weight` is the two-level fairness weight
    (1/valid findings of the study) * (1/valid tests of the finding); `index` is the test's
    position in the input list."""

    study_id: Any
    finding_id: Any
    human_d: float
    agent_d: float
    weight: float
    index: int


def collect_ecs_points(tests: Sequence[Test]) -> list[EcsPoint]:
    """Tests with both d-equivalents finite, weighted so that each study sums to 1 and each of
    its findings shares that equally (only tests with both effects count)."""
    valid: dict[Any, dict[Any, list[tuple[int, float, float]]]] = {}
    for index, test in enumerate(tests):
        human_d, agent_d = effect_d(test, "human"), effect_d(test, "agent")
        if human_d is None or agent_d is None:
            continue
        findings = valid.setdefault(test["study_id"], {})
        findings.setdefault(test["finding_id"], []).append((index, human_d, agent_d))
    points = []
    for study_id, findings in valid.items():
        for finding_id, rows in findings.items():
            weight = 1.0 / (len(findings) * len(rows))
            for index, human_d, agent_d in rows:
                points.append(EcsPoint(study_id, finding_id, human_d, agent_d, weight, index))
    return sorted(points, key=lambda point: point.index)


def _profile(points: Sequence[EcsPoint], equal_weights: bool) -> dict[str, Any]:
    """CCC, Pearson r and caricature fit of some points; all None below MIN_TESTS_FOR_ECS."""
    if len(points) < MIN_TESTS_FOR_ECS:
        return {"ccc": None, "pearson": None, "caricature": {"a": None, "b": None}}
    x = [point.human_d for point in points]
    y = [point.agent_d for point in points]
    w = [1.0 if equal_weights else point.weight for point in points]
    slope, intercept = weighted_linreg(x, y, w)
    return {
        "ccc": weighted_ccc(x, y, w),
        "pearson": weighted_corr(x, y, w),
        "caricature": {"a": slope, "b": intercept},
    }


def _fill_level(result: dict[str, Any], level: str, key: Any, profile: dict[str, Any]) -> None:
    result[f"ecs_{level}"][key] = profile["ccc"]
    result[f"ecs_corr_{level}"][key] = profile["pearson"]
    result[f"caricature_{level}"][key] = profile["caricature"]


def compute_ecs_corr(
    tests: Sequence[Test], study_groups: Mapping[str, Sequence[Any]] | None = None
) -> dict[str, Any]:
    """ECS as weighted Lin's CCC overall (two-level weights), per domain (two-level weights
    over the domain's studies, `study_groups` = {domain: [study ids]}) and per study (equal
    weights); each is None with fewer than 3 valid tests. Also the Pearson r (`ecs_corr_*`),
    the caricature regression (`caricature_*`) and the valid-test counts (`n_tests_*`)."""
    points = collect_ecs_points(tests)
    overall = _profile(points, equal_weights=False)
    result: dict[str, Any] = {
        "ecs_overall": overall["ccc"],
        "ecs_corr_overall": overall["pearson"],
        "caricature_overall": overall["caricature"],
        "n_tests_overall": len(points),
    }
    for level in ("domain", "per_study"):
        for prefix in ("ecs_", "ecs_corr_", "caricature_", "n_tests_"):
            result[f"{prefix}{level}"] = {}
    for study_id in dict.fromkeys(test["study_id"] for test in tests):
        study_points = [point for point in points if point.study_id == study_id]
        _fill_level(result, "per_study", study_id, _profile(study_points, equal_weights=True))
        result["n_tests_per_study"][study_id] = len(study_points)
    for domain, study_ids in (study_groups or {}).items():
        members = set(study_ids)
        domain_points = [point for point in points if point.study_id in members]
        _fill_level(result, "domain", domain, _profile(domain_points, equal_weights=False))
        result["n_tests_domain"][domain] = len(domain_points)
    return result


def aggregate_finding_ecs(tests: Sequence[Test]) -> float:
    """Finding-level ECS_Strict (legacy): Z_f = |Z_diff| (one test) or the RMS of the Z_diffs,
    ECS = 2(1 - Phi(Z_f)). Non-finite / missing `z_diff` values are skipped; no usable value
    (or no test) -> 0.0."""
    z_values = [z for z in (finite_or_none(test.get("z_diff")) for test in tests) if z is not None]
    if not z_values:
        return EMPTY_ECS_STRICT
    z_finding = math.sqrt(math.fsum(z * z for z in z_values) / len(z_values))
    # For one test the RMS is |Z_diff|, so one formula covers both of the spec's cases.
    from scipy import stats  # here: every process of the site would pay its import

    return float(2.0 * stats.norm.sf(z_finding))


def aggregate_study_ecs_strict(tests: Sequence[Test]) -> tuple[float, dict[Any, float]]:
    """(study ECS_Strict, per finding): the simple mean of the finding values. Empty -> 0.0."""
    per_finding = {
        finding_id: aggregate_finding_ecs(finding_tests)
        for finding_id, finding_tests in group_by_finding(tests).items()
    }
    if not per_finding:
        return EMPTY_ECS_STRICT, {}
    return math.fsum(per_finding.values()) / len(per_finding), per_finding
