"""Verdict and evidence quality: the seven metrics (``quality``), the scoring policies
(``policy``, data in ``policies/``) and uploaded runs (``run``).

The package exports the metrics, as ``metrics.families.verdicts`` always has.
"""

# Imported by the module above from elsewhere in the library; exported here as before.
from .policy import (
    Policy,
    canonical_judgement,
    fields_equivalent,
    is_modifier_detected,
    load_policy,
    normalize_label,
    normalize_verdict,
    score_evidences,
    verdict_for_score,
    verdict_ordinal,
)
from .quality import (
    INVALID_PREDICTION,
    MIN_SNIPPET_SEGMENT_CHARS,
    SNIPPET_SEGMENT_SHARE,
    Result,
    compute_evaluation_metrics,
    compute_evidence_validity,
    compute_final_quality,
    compute_judgement_accuracy,
    compute_macro_f1,
    compute_ordinal_auprc,
    compute_verdict_consistency_enhanced,
    extract_verdict_from_rule,
    is_snippet_valid,
    is_structured,
    result_evidences,
    triggered_rule,
)

__all__ = [
    "INVALID_PREDICTION",
    "MIN_SNIPPET_SEGMENT_CHARS",
    "SNIPPET_SEGMENT_SHARE",
    "Policy",
    "Result",
    "canonical_judgement",
    "compute_evaluation_metrics",
    "compute_evidence_validity",
    "compute_final_quality",
    "compute_judgement_accuracy",
    "compute_macro_f1",
    "compute_ordinal_auprc",
    "compute_verdict_consistency_enhanced",
    "extract_verdict_from_rule",
    "fields_equivalent",
    "is_modifier_detected",
    "is_snippet_valid",
    "is_structured",
    "load_policy",
    "normalize_label",
    "normalize_verdict",
    "result_evidences",
    "score_evidences",
    "triggered_rule",
    "verdict_for_score",
    "verdict_ordinal",
]
