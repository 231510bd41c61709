"""Confidence variants (confidence scoring functions) computed from per-item `item_signals`.

Each variant maps one item's signals to a scalar where higher means more confident (SSOT:
`confidence/csf_registry.py` and `evaluate_selective_prediction.py`). A variant whose signal
is absent raises `SignalError` naming the key and the variant; nothing is silently
substituted. The only defaults are the ones the spec defines for a key that is present but
null: retrieval similarity null -> 0.0, verbalized confidence null -> 0.5 (mid-scale), and a
calibrator feature null -> the spec's conservative default. Token and consistency signals have
no such default: null means the run did not produce them, which is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from metrics.families.calibration import (
    CalibrationArtifact,
    TemperatureScalingCalibrator,
    predict_calibrated,
)

Signals = Mapping[str, Any]

# Evidence counts saturate at 3 in the hybrid variants: e = min(llm_evidence_count, 3) / 3.
EVIDENCE_COUNT_CAP = 3.0
HYBRID_EVIDENCE_SIMILARITY_WEIGHTS = (0.5, 0.5)  # (evidence, similarity)
HYBRID_THREE_WAY_WEIGHTS = (0.4, 0.3, 0.3)  # (verbalized or consistency, evidence, similarity)
# Verbalized confidence is stated on a 1-5 scale; null counts as the middle of it.
VERBALIZED_NULL_FRACTION = 0.5
SECONDARY_PREFIX = "secondary:"
SECONDARY_COMBINATIONS = ("average", "product")


class SignalError(ValueError):
    """An item signal a confidence variant needs is missing, null or malformed."""

    def __init__(self, key: str, variant: str, problem: str) -> None:
        self.key, self.variant, self.problem = key, variant, problem
        super().__init__(f"item_signals['{key}'] {problem} (required for confidence='{variant}')")


# --------------------------------------------------------------------------- signal access


def _number(signals: Signals, key: str, variant: str, *, nullable: bool) -> float | None:
    """The numeric signal; None only when it is null and `nullable`."""
    if key not in signals:
        raise SignalError(key, variant, "is missing")
    value = signals[key]
    if value is None:
        if nullable:
            return None
        raise SignalError(key, variant, "is null (the run did not produce this signal)")
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise SignalError(key, variant, f"must be a number, got {value!r}")
    return float(value)


def _required(signals: Signals, key: str, variant: str) -> float:
    value = _number(signals, key, variant, nullable=False)
    assert value is not None  # nullable=False never returns None
    return value


def _non_negative(signals: Signals, key: str, variant: str) -> float:
    value = _required(signals, key, variant)
    if value < 0:
        raise SignalError(key, variant, f"must be >= 0, got {value}")
    return value


def _clamp01(value: float) -> float:
    return max(0.0, min(1.0, value))


def _similarity_or_zero(signals: Signals, key: str, variant: str) -> float:
    value = _number(signals, key, variant, nullable=True)
    return 0.0 if value is None else value


def _evidence_fraction(signals: Signals, variant: str) -> float:
    count = _non_negative(signals, "llm_evidence_count", variant)
    return min(count, EVIDENCE_COUNT_CAP) / EVIDENCE_COUNT_CAP


def _verbalized_fraction(signals: Signals, variant: str) -> float:
    """(v - 1) / 4 for the 1-5 verbalized confidence; 0.5 when null."""
    value = _number(signals, "verbalized_confidence", variant, nullable=True)
    if value is None:
        return VERBALIZED_NULL_FRACTION
    if value != int(value) or not 1 <= value <= 5:
        raise SignalError("verbalized_confidence", variant, f"must be 1-5, got {value}")
    return (value - 1.0) / 4.0


# --------------------------------------------------------------------------- base variants


def _llm(signals: Signals, variant: str) -> float:
    return _non_negative(signals, "llm_evidence_count", variant)


def _retrieval_mean(signals: Signals, variant: str) -> float:
    return _similarity_or_zero(signals, "retrieval_similarity_mean", variant)


def _retrieval_max(signals: Signals, variant: str) -> float:
    return _similarity_or_zero(signals, "retrieval_similarity_max", variant)


def _hybrid_evidence_similarity(signals: Signals, variant: str) -> float:
    e = _evidence_fraction(signals, variant)
    s = _clamp01(_retrieval_mean(signals, variant))
    e_weight, s_weight = HYBRID_EVIDENCE_SIMILARITY_WEIGHTS
    return e_weight * e + s_weight * s


def _verbalized(signals: Signals, variant: str) -> float:
    return _verbalized_fraction(signals, variant)


def _three_way(primary: float, signals: Signals, variant: str) -> float:
    e = _evidence_fraction(signals, variant)
    s = _clamp01(_retrieval_mean(signals, variant))
    p_weight, e_weight, s_weight = HYBRID_THREE_WAY_WEIGHTS
    return _clamp01(p_weight * primary + e_weight * e + s_weight * s)


def _hybrid_verbalized(signals: Signals, variant: str) -> float:
    return _three_way(_verbalized_fraction(signals, variant), signals, variant)


def _token_msp(signals: Signals, variant: str) -> float:
    return _clamp01(_required(signals, "token_msp", variant))


def _token_pe(signals: Signals, variant: str) -> float:
    # Stored as entropy (lower = more confident); 1 / (1 + H) maps it onto (0, 1].
    return 1.0 / (1.0 + _non_negative(signals, "token_pe", variant))


def _token_energy(signals: Signals, variant: str) -> float:
    # logsumexp of the top logprobs; exp() is the probability mass they capture.
    return _clamp01(math.exp(_required(signals, "token_energy", variant)))


def _consistency(signals: Signals, variant: str) -> float:
    return _clamp01(_required(signals, "consistency_modal_confidence", variant))


def _consistency_inverse_std(signals: Signals, variant: str) -> float:
    return 1.0 / (1.0 + _non_negative(signals, "consistency_score_std", variant))


def _hybrid_consistency(signals: Signals, variant: str) -> float:
    return _three_way(_consistency(signals, variant), signals, variant)


BaseVariant = Callable[[Signals, str], float]

BASE_VARIANTS: dict[str, BaseVariant] = {
    "llm": _llm,
    "total_evidence": _llm,  # legacy alias: keyword backfill was removed (Spec 047)
    "retrieval_similarity_mean": _retrieval_mean,
    "retrieval_similarity_max": _retrieval_max,
    "hybrid_evidence_similarity": _hybrid_evidence_similarity,
    "verbalized": _verbalized,
    "hybrid_verbalized": _hybrid_verbalized,
    "token_msp": _token_msp,
    "token_pe": _token_pe,
    "token_energy": _token_energy,
    "consistency": _consistency,
    "consistency_inverse_std": _consistency_inverse_std,
    "hybrid_consistency": _hybrid_consistency,
}
CALIBRATED_VARIANTS = ("verbalized_calibrated", "calibrated")
# Every named variant; `secondary:<a>+<b>:<average|product>` combines two base variants.
CONFIDENCE_VARIANTS = (*BASE_VARIANTS, *CALIBRATED_VARIANTS)


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True, slots=True)
class ConfidenceVariant:
    """A parsed variant name: a base, calibrated or secondary (two-base) variant."""

    name: str
    parts: tuple[str, ...]
    combine: str | None = None

    @property
    def needs_calibration(self) -> bool:
        return self.name in CALIBRATED_VARIANTS


def parse_confidence_variant(name: str) -> ConfidenceVariant:
    """Validate a variant name; ValueError lists what is accepted."""
    if not isinstance(name, str):
        raise ValueError(f"confidence variant must be a string, got {name!r}")
    if name in CONFIDENCE_VARIANTS:
        return ConfidenceVariant(name, (name,))
    if not name.startswith(SECONDARY_PREFIX):
        raise ValueError(
            f"unknown confidence variant {name!r}; expected one of {list(CONFIDENCE_VARIANTS)} "
            f"or '{SECONDARY_PREFIX}<a>+<b>:<average|product>'"
        )
    return _parse_secondary(name)


def _parse_secondary(name: str) -> ConfidenceVariant:
    body, _, combine = name[len(SECONDARY_PREFIX) :].rpartition(":")
    first, plus, second = body.partition("+")
    if not (plus and first and second and combine):
        raise ValueError(f"{name!r}: expected '{SECONDARY_PREFIX}<a>+<b>:<average|product>'")
    if combine not in SECONDARY_COMBINATIONS:
        raise ValueError(f"{name!r}: combination must be 'average' or 'product', got {combine!r}")
    for part in (first, second):
        if part not in BASE_VARIANTS:
            raise ValueError(f"{name!r}: {part!r} is not a base variant ({list(BASE_VARIANTS)})")
    return ConfidenceVariant(name, (first, second), combine)


def check_calibration(variant: ConfidenceVariant, calibration: CalibrationArtifact | None) -> None:
    """ValueError when a calibrated variant lacks the calibration artifact it needs."""
    if variant.name == "verbalized_calibrated":
        if calibration is None or calibration.method != "temperature_scaling":
            raise ValueError(
                "confidence='verbalized_calibrated' needs a temperature_scaling calibration"
            )
    elif variant.name == "calibrated" and (
        calibration is None or calibration.method == "temperature_scaling"
    ):
        raise ValueError(
            "confidence='calibrated' needs a supervised calibration (logistic, platt, isotonic)"
        )


# --------------------------------------------------------------------------- evaluation


def compute_confidence(
    variant: str | ConfidenceVariant,
    signals: Signals,
    *,
    calibration: CalibrationArtifact | None = None,
) -> float:
    """The variant's confidence for one item's signals (SignalError if a signal is absent)."""
    parsed = (
        variant if isinstance(variant, ConfidenceVariant) else parse_confidence_variant(variant)
    )
    check_calibration(parsed, calibration)
    if parsed.name == "verbalized_calibrated":
        raw = _verbalized_fraction(signals, parsed.name)
        return predict_calibrated(_temperature(calibration), [raw])
    if parsed.name == "calibrated":
        artifact = cast(CalibrationArtifact, calibration)  # check_calibration: it is set
        return predict_calibrated(artifact.calibrator, _features(signals, artifact, parsed))
    values = [BASE_VARIANTS[part](signals, parsed.name) for part in parsed.parts]
    if parsed.combine is None:
        return values[0]
    return (values[0] + values[1]) / 2.0 if parsed.combine == "average" else values[0] * values[1]


def _temperature(calibration: CalibrationArtifact | None) -> TemperatureScalingCalibrator:
    assert calibration is not None and isinstance(
        calibration.calibrator, TemperatureScalingCalibrator
    )  # guaranteed by check_calibration
    return calibration.calibrator


def _features(
    signals: Signals, calibration: CalibrationArtifact, variant: ConfidenceVariant
) -> list[float]:
    """The artifact's features; a null feature takes the spec's conservative default
    (similarity 0.0, a confidence rating 3.0 = middle of 1-5, anything else 0.0)."""
    values = []
    for key in calibration.features:
        value = _number(signals, key, variant.name, nullable=True)
        if value is None:
            value = 0.0 if "similarity" in key else 3.0 if "confidence" in key else 0.0
        values.append(value)
    return values
