"""Confidence variants: each formula on hand-picked signals, and each one's missing-signal
error (no silent substitution)."""

from __future__ import annotations

import math

import pytest

from metrics.families.calibration import (
    CalibrationArtifact,
    IsotonicCalibrator,
    LogisticCalibrator,
    StandardScalerParams,
    TemperatureScalingCalibrator,
)
from metrics.families.selective.confidence import (
    BASE_VARIANTS,
    CONFIDENCE_VARIANTS,
    SignalError,
    compute_confidence,
    parse_confidence_variant,
)

SIGNALS = {
    "llm_evidence_count": 2,
    "retrieval_reference_count": 2,
    "retrieval_similarity_mean": 0.6,
    "retrieval_similarity_max": 0.9,
    "verbalized_confidence": 4,
    "token_msp": 0.7,
    "token_pe": 0.25,
    "token_energy": math.log(0.8),
    "consistency_modal_confidence": 0.8,
    "consistency_score_std": 0.5,
}

TEMPERATURE = CalibrationArtifact("temperature_scaling", TemperatureScalingCalibrator(2.0))
LOGISTIC = CalibrationArtifact(
    "logistic",
    LogisticCalibrator((1.0, 2.0), 0.0, StandardScalerParams((3.0, 0.5), (1.0, 0.5))),
    ("verbalized_confidence", "retrieval_similarity_mean"),
    "correctness",
)


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("llm", 2.0),
        ("total_evidence", 2.0),
        ("retrieval_similarity_mean", 0.6),
        ("retrieval_similarity_max", 0.9),
        # e = 2/3, s = 0.6 -> 0.5 * 2/3 + 0.5 * 0.6
        ("hybrid_evidence_similarity", 0.5 * 2 / 3 + 0.3),
        # (4 - 1) / 4
        ("verbalized", 0.75),
        # 0.4 * 0.75 + 0.3 * 2/3 + 0.3 * 0.6
        ("hybrid_verbalized", 0.3 + 0.2 + 0.18),
        ("token_msp", 0.7),
        # 1 / (1 + 0.25)
        ("token_pe", 0.8),
        # exp(log 0.8)
        ("token_energy", 0.8),
        ("consistency", 0.8),
        # 1 / (1 + 0.5)
        ("consistency_inverse_std", 2 / 3),
        # 0.4 * 0.8 + 0.3 * 2/3 + 0.3 * 0.6
        ("hybrid_consistency", 0.32 + 0.2 + 0.18),
        ("secondary:token_msp+retrieval_similarity_mean:average", 0.65),
        ("secondary:token_msp+verbalized:product", 0.525),
    ],
)
def test_variant_formulas(variant: str, expected: float) -> None:
    assert compute_confidence(variant, SIGNALS) == pytest.approx(expected)


def test_evidence_saturates_at_three() -> None:
    signals = {**SIGNALS, "llm_evidence_count": 7}
    assert compute_confidence("llm", signals) == 7.0
    # e = min(7, 3)/3 = 1 -> 0.5 * 1 + 0.5 * 0.6
    assert compute_confidence("hybrid_evidence_similarity", signals) == pytest.approx(0.8)


def test_verbalized_calibrated_applies_the_temperature() -> None:
    # v = (4 - 1)/4 = 0.75; logit = ln 3; / 2 -> sigmoid(ln sqrt 3) = sqrt3 / (1 + sqrt3)
    value = compute_confidence("verbalized_calibrated", SIGNALS, calibration=TEMPERATURE)
    assert value == pytest.approx(math.sqrt(3) / (1 + math.sqrt(3)))


def test_calibrated_applies_the_supervised_calibrator_to_its_features() -> None:
    # Features (4, 0.6) -> standardised (1, 0.2) -> 1 * 1 + 2 * 0.2 = 1.4
    value = compute_confidence("calibrated", SIGNALS, calibration=LOGISTIC)
    assert value == pytest.approx(1 / (1 + math.exp(-1.4)))


def test_calibrated_null_features_take_the_spec_defaults() -> None:
    # Null confidence -> 3, null similarity -> 0: standardised (0, -1) -> -2
    signals = {**SIGNALS, "verbalized_confidence": None, "retrieval_similarity_mean": None}
    value = compute_confidence("calibrated", signals, calibration=LOGISTIC)
    assert value == pytest.approx(1 / (1 + math.exp(2.0)))


def test_calibrated_isotonic_reads_its_single_feature() -> None:
    isotonic = CalibrationArtifact(
        "isotonic", IsotonicCalibrator((0.0, 1.0), (0.2, 0.6)), ("token_msp",), "correctness"
    )
    # 0.2 + 0.7 * (0.6 - 0.2)
    assert compute_confidence("calibrated", SIGNALS, calibration=isotonic) == pytest.approx(0.48)


# --------------------------------------------------------------------------- null values


def test_null_retrieval_similarity_counts_as_zero() -> None:
    signals = {**SIGNALS, "retrieval_similarity_mean": None, "retrieval_similarity_max": None}
    assert compute_confidence("retrieval_similarity_mean", signals) == 0.0
    assert compute_confidence("retrieval_similarity_max", signals) == 0.0
    assert compute_confidence("hybrid_evidence_similarity", signals) == pytest.approx(1 / 3)


def test_null_verbalized_confidence_is_mid_scale() -> None:
    signals = {**SIGNALS, "verbalized_confidence": None}
    assert compute_confidence("verbalized", signals) == 0.5


@pytest.mark.parametrize(
    ("variant", "key"),
    [
        ("token_msp", "token_msp"),
        ("token_pe", "token_pe"),
        ("token_energy", "token_energy"),
        ("consistency", "consistency_modal_confidence"),
        ("consistency_inverse_std", "consistency_score_std"),
        ("hybrid_consistency", "consistency_modal_confidence"),
        ("llm", "llm_evidence_count"),
    ],
)
def test_null_signal_without_a_defined_default_is_an_error(variant: str, key: str) -> None:
    with pytest.raises(SignalError, match="is null") as raised:
        compute_confidence(variant, {**SIGNALS, key: None})
    assert raised.value.key == key
    assert raised.value.variant == variant


# --------------------------------------------------------------------------- missing signals

REQUIRED_KEYS = {
    "llm": ["llm_evidence_count"],
    "total_evidence": ["llm_evidence_count"],
    "retrieval_similarity_mean": ["retrieval_similarity_mean"],
    "retrieval_similarity_max": ["retrieval_similarity_max"],
    "hybrid_evidence_similarity": ["llm_evidence_count", "retrieval_similarity_mean"],
    "verbalized": ["verbalized_confidence"],
    "hybrid_verbalized": [
        "verbalized_confidence",
        "llm_evidence_count",
        "retrieval_similarity_mean",
    ],
    "token_msp": ["token_msp"],
    "token_pe": ["token_pe"],
    "token_energy": ["token_energy"],
    "consistency": ["consistency_modal_confidence"],
    "consistency_inverse_std": ["consistency_score_std"],
    "hybrid_consistency": [
        "consistency_modal_confidence",
        "llm_evidence_count",
        "retrieval_similarity_mean",
    ],
    "verbalized_calibrated": ["verbalized_confidence"],
    "calibrated": ["verbalized_confidence", "retrieval_similarity_mean"],
    "secondary:token_pe+consistency:product": ["token_pe", "consistency_modal_confidence"],
}
CALIBRATIONS = {"verbalized_calibrated": TEMPERATURE, "calibrated": LOGISTIC}


def test_every_named_variant_is_covered() -> None:
    assert set(CONFIDENCE_VARIANTS) <= set(REQUIRED_KEYS)


@pytest.mark.parametrize(
    ("variant", "key"),
    [(variant, key) for variant, keys in REQUIRED_KEYS.items() for key in keys],
)
def test_missing_signal_is_an_error_naming_key_and_variant(variant: str, key: str) -> None:
    signals = {k: v for k, v in SIGNALS.items() if k != key}
    with pytest.raises(SignalError) as raised:
        compute_confidence(variant, signals, calibration=CALIBRATIONS.get(variant))
    assert raised.value.key == key
    assert f"item_signals['{key}'] is missing" in str(raised.value)
    assert f"confidence='{variant}'" in str(raised.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("token_msp", "high"),
        ("llm_evidence_count", True),
        ("llm_evidence_count", -1),
        ("verbalized_confidence", 7),
        ("verbalized_confidence", 2.5),
        ("token_pe", float("nan")),
    ],
)
def test_malformed_signals_are_errors(key: str, value: object) -> None:
    variant = {
        "token_msp": "token_msp",
        "llm_evidence_count": "llm",
        "verbalized_confidence": "verbalized",
        "token_pe": "token_pe",
    }[key]
    with pytest.raises(SignalError) as raised:
        compute_confidence(variant, {**SIGNALS, key: value})
    assert raised.value.key == key


# --------------------------------------------------------------------------- names and calibration


@pytest.mark.parametrize(
    "name",
    [
        "bogus",
        "secondary:token_msp:average",
        "secondary:token_msp+bogus:average",
        "secondary:token_msp+llm:median",
        "secondary:calibrated+llm:average",
    ],
)
def test_unknown_or_malformed_variant_names_are_errors(name: str) -> None:
    with pytest.raises(ValueError):
        parse_confidence_variant(name)


def test_secondary_variants_combine_base_variants_only() -> None:
    parsed = parse_confidence_variant("secondary:llm+token_msp:product")
    assert parsed.parts == ("llm", "token_msp")
    assert parsed.combine == "product"
    assert set(parsed.parts) <= set(BASE_VARIANTS)


@pytest.mark.parametrize(
    ("variant", "calibration"),
    [
        ("verbalized_calibrated", None),
        ("verbalized_calibrated", LOGISTIC),
        ("calibrated", None),
        ("calibrated", TEMPERATURE),
    ],
)
def test_calibrated_variants_require_the_right_artifact(
    variant: str, calibration: CalibrationArtifact | None
) -> None:
    with pytest.raises(ValueError, match="calibration"):
        compute_confidence(variant, SIGNALS, calibration=calibration)
