"""PAS / ECS agreement metrics between human studies and agent replications (pure Python).

Source of truth: the "PAS/ECS Mathematical Foundations" spec. Main metrics: PAS raw and ECS as
weighted Lin's CCC. Legacy / auxiliary, never reported as primary: PAS normalised, ECS_Strict
(Z-diff), the Pearson r and caricature regression of the effect profiles.

Modules: `pas` (per-test PAS, Fisher-z pooling), `ecs` (weighted CCC / Pearson / regression,
ECS_Strict), `effect_sizes` (d-equivalents, standard errors, Z-diff).
"""

from .ecs import (
    EMPTY_ECS_STRICT,
    MIN_TESTS_FOR_ECS,
    EcsPoint,
    aggregate_finding_ecs,
    aggregate_study_ecs_strict,
    collect_ecs_points,
    compute_ecs_corr,
    effect_d,
    weighted_ccc,
    weighted_corr,
    weighted_linreg,
)
from .effect_sizes import BINOMIAL_NULL_PROPORTION, FrequentistConsistency, statistical_family
from .pas import (
    EMPTY_PAS_NORM,
    EMPTY_PAS_RAW,
    FISHER_EPSILON,
    NEUTRAL_HUMAN_THRESHOLD,
    THREE_WAY_STATES,
    aggregate_finding_pas_norm,
    aggregate_finding_pas_raw,
    aggregate_pas_inverse_variance,
    aggregate_study_pas,
    calc_pas,
    compute_n_eff_for_test,
    fisher_z_inverse,
    fisher_z_transform,
    group_by_finding,
    human_ceiling,
    normalised_ratio,
    per_test_pas,
    pool_fisher_z,
)

__all__ = [
    "BINOMIAL_NULL_PROPORTION",
    "EMPTY_ECS_STRICT",
    "EMPTY_PAS_NORM",
    "EMPTY_PAS_RAW",
    "FISHER_EPSILON",
    "MIN_TESTS_FOR_ECS",
    "NEUTRAL_HUMAN_THRESHOLD",
    "THREE_WAY_STATES",
    "EcsPoint",
    "FrequentistConsistency",
    "aggregate_finding_ecs",
    "aggregate_finding_pas_norm",
    "aggregate_finding_pas_raw",
    "aggregate_pas_inverse_variance",
    "aggregate_study_ecs_strict",
    "aggregate_study_pas",
    "calc_pas",
    "collect_ecs_points",
    "compute_ecs_corr",
    "compute_n_eff_for_test",
    "effect_d",
    "fisher_z_inverse",
    "fisher_z_transform",
    "group_by_finding",
    "human_ceiling",
    "normalised_ratio",
    "per_test_pas",
    "pool_fisher_z",
    "statistical_family",
    "weighted_ccc",
    "weighted_corr",
    "weighted_linreg",
]
