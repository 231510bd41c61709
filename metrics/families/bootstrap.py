"""The participant-cluster bootstrap of selective prediction, under its historical import path.

Its home is ``metrics.families.selective.bootstrap``.
"""

from metrics.families.selective.bootstrap import (
    BootstrapDeltaResult,
    BootstrapResult,
    MetricFn,
    MetricKind,
    ParticipantTables,
    ResampledCurves,
    SelectiveMetric,
    bootstrap_by_participant,
    bootstrap_metrics_by_participant,
    bootstrap_replicates,
    build_participant_tables,
    draw_participant_counts,
    group_by_participant,
    paired_bootstrap_delta_by_participant,
    paired_bootstrap_deltas_by_participant,
    resample_curves,
)

# Imported by the module above from elsewhere in the library; exported here as before.
from metrics.families.selective.curves import (
    ItemPrediction,
    Loss,
    compute_augrc,
    compute_augrc_at_coverage,
    compute_aurc,
    compute_aurc_at_coverage,
    compute_cmax,
    compute_risk_at_coverage,
    loss_divisor,
    trapezoid_area,
    truncated_trapezoid_area,
)

__all__ = [
    "BootstrapDeltaResult",
    "BootstrapResult",
    "ItemPrediction",
    "Loss",
    "MetricFn",
    "MetricKind",
    "ParticipantTables",
    "ResampledCurves",
    "SelectiveMetric",
    "bootstrap_by_participant",
    "bootstrap_metrics_by_participant",
    "bootstrap_replicates",
    "build_participant_tables",
    "compute_augrc",
    "compute_augrc_at_coverage",
    "compute_aurc",
    "compute_aurc_at_coverage",
    "compute_cmax",
    "compute_risk_at_coverage",
    "draw_participant_counts",
    "group_by_participant",
    "loss_divisor",
    "paired_bootstrap_delta_by_participant",
    "paired_bootstrap_deltas_by_participant",
    "resample_curves",
    "trapezoid_area",
    "truncated_trapezoid_area",
]
