"""Calibration metrics, each calibrator, the fitting helpers and the artifact round trip."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metrics.families.calibration import (
    CalibrationArtifact,
    IsotonicCalibrator,
    LinearCalibrator,
    LogisticCalibrator,
    StandardScalerParams,
    TemperatureScalingCalibrator,
    apply_temperature_scaling,
    calibration_artifact_from_dict,
    calibration_artifact_to_dict,
    compute_binary_nll,
    compute_ece,
    dumps_calibration_artifact,
    ece_bins,
    fit_isotonic_calibrator,
    fit_linear_calibrator,
    fit_logistic_calibrator,
    fit_standard_scaler,
    load_calibration_artifact,
    parse_calibration_artifact,
    save_calibration_artifact,
)
from metrics.families.json_input import InputError

# --------------------------------------------------------------------------- metrics


def test_nll_of_a_coin_is_log_two() -> None:
    assert compute_binary_nll(np.array([0.5, 0.5]), np.array([1, 0])) == pytest.approx(math.log(2))


def test_nll_averages_the_log_loss() -> None:
    # -(log 0.9 + log(1 - 0.2)) / 2
    expected = -(math.log(0.9) + math.log(0.8)) / 2
    assert compute_binary_nll([0.9, 0.2], [1, 0]) == pytest.approx(expected)


def test_nll_stays_finite_for_certain_wrong_predictions() -> None:
    assert math.isfinite(compute_binary_nll([0.0, 1.0], [1, 0]))


def test_ece_bin_lower_edges_are_inclusive() -> None:
    # 0.5 and 0.59 share the bin [0.5, 0.6): confidence 0.545, accuracy 0 -> ECE 0.545.
    assert compute_ece([0.5, 0.59], [0, 0]) == pytest.approx(0.545)
    # 0.49 belongs to [0.4, 0.5): two bins of one sample, |0-0.49|/2 + |0-0.5|/2.
    assert compute_ece([0.49, 0.5], [0, 0]) == pytest.approx((0.49 + 0.5) / 2)


def test_ece_last_bin_is_closed_at_one() -> None:
    # 0.95 and 1.0 share the last bin [0.9, 1.0]: confidence 0.975, accuracy 1/2.
    assert compute_ece([0.95, 1.0], [1, 0]) == pytest.approx(0.475)


def test_ece_weights_bins_by_count() -> None:
    # Bin [0.2, 0.3): three samples at 0.25, one correct -> |1/3 - 0.25| weighted 3/4;
    # bin [0.8, 0.9): one sample at 0.85, correct -> |1 - 0.85| weighted 1/4.
    expected = 0.75 * abs(1 / 3 - 0.25) + 0.25 * 0.15
    assert compute_ece([0.25, 0.25, 0.25, 0.85], [1, 0, 0, 1]) == pytest.approx(expected)


def test_ece_is_zero_when_calibrated_and_respects_n_bins() -> None:
    assert compute_ece([0.5, 0.5, 1.0], [1, 0, 1]) == pytest.approx(0.0)
    # One bin: mean confidence 0.55 vs accuracy 0.5
    assert compute_ece([0.3, 0.8], [1, 0], n_bins=1) == pytest.approx(0.05)
    with pytest.raises(ValueError, match="n_bins"):
        compute_ece([0.5], [1], n_bins=0)


# --------------------------------------------------------------------------- temperature


def test_temperature_scaling_divides_the_logit() -> None:
    # logit(0.8) = ln 4; / 2 = ln 2 -> sigmoid = 2/3
    assert apply_temperature_scaling([0.8], temperature=2.0)[0] == pytest.approx(2 / 3)
    assert apply_temperature_scaling([0.3], temperature=1.0)[0] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="temperature"):
        apply_temperature_scaling([0.3], temperature=0.0)


def test_temperature_fit_finds_the_nll_minimum() -> None:
    # Every raw probability is 0.8 but two thirds are correct: the NLL is minimal where the
    # calibrated probability is 2/3, i.e. ln 4 / T = ln 2, T = 2.
    p = np.full(9, 0.8)
    y = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0])
    calibrator = TemperatureScalingCalibrator.fit(p, y)
    assert calibrator.temperature == pytest.approx(2.0, abs=1e-4)
    assert calibrator.apply([0.8])[0] == pytest.approx(2 / 3, abs=1e-5)


def test_temperature_fit_stays_within_bounds() -> None:
    # Half correct at raw 0.9: the optimum is T -> infinity, clamped to 10.
    fitted = TemperatureScalingCalibrator.fit(np.full(4, 0.9), np.array([1, 0, 1, 0]))
    assert fitted.temperature == pytest.approx(10.0)
    # Always correct at raw 0.6: the optimum is T -> 0, clamped to 0.05.
    fitted = TemperatureScalingCalibrator.fit(np.full(4, 0.6), np.ones(4))
    assert fitted.temperature == pytest.approx(0.05)


def test_temperature_fit_rejects_bad_training_data() -> None:
    with pytest.raises(ValueError, match="no samples"):
        TemperatureScalingCalibrator.fit([], [])
    with pytest.raises(ValueError, match="binary"):
        TemperatureScalingCalibrator.fit([0.5], [2])
    with pytest.raises(ValueError, match="probabilities"):
        TemperatureScalingCalibrator.fit([1.5], [1])
    with pytest.raises(ValueError, match="positive"):
        TemperatureScalingCalibrator(temperature=-1.0)


# --------------------------------------------------------------------------- feature calibrators


def test_logistic_calibrator_standardises_then_applies_sigmoid() -> None:
    calibrator = LogisticCalibrator((2.0,), 0.5, StandardScalerParams((1.0,), (2.0,)))
    # x = 3 -> (3 - 1) / 2 = 1 -> 0.5 + 2 * 1 = 2.5
    assert calibrator.predict_proba([3.0])[0] == pytest.approx(1 / (1 + math.exp(-2.5)))
    batch = calibrator.predict_proba([[1.0], [3.0]])
    assert batch == pytest.approx([1 / (1 + math.exp(-0.5)), 1 / (1 + math.exp(-2.5))])


def test_logistic_calibrator_checks_feature_count() -> None:
    calibrator = LogisticCalibrator((1.0, 1.0), 0.0, StandardScalerParams((0.0, 0.0), (1.0, 1.0)))
    with pytest.raises(ValueError, match="2 feature"):
        calibrator.predict_proba([1.0, 2.0, 3.0])


def test_linear_calibrator_clips_to_unit_interval() -> None:
    calibrator = LinearCalibrator((1.0,), 0.5, StandardScalerParams((0.0,), (1.0,)))
    assert calibrator.predict([[0.2], [1.0], [-1.0]]) == pytest.approx([0.7, 1.0, 0.0])


def test_isotonic_calibrator_interpolates_and_is_flat_outside() -> None:
    calibrator = IsotonicCalibrator((0.0, 1.0, 2.0), (0.2, 0.8, 0.9))
    assert calibrator.predict_proba([0.5, 1.5, -1.0, 5.0]) == pytest.approx([0.5, 0.85, 0.2, 0.9])
    with pytest.raises(ValueError, match="non-decreasing"):
        IsotonicCalibrator((1.0, 0.0), (0.1, 0.2))


def test_standard_scaler_leaves_constant_columns_unscaled() -> None:
    scaler = fit_standard_scaler([[1.0, 5.0], [3.0, 5.0]])
    assert scaler.mean == (2.0, 5.0)
    assert scaler.std == (1.0, 1.0)  # population std of (1, 3) is 1; constant column -> 1


def test_linear_fit_is_ridge_on_standardised_features() -> None:
    # y = 0.1 + 0.2 x on x = 0..3. Standardised x has mean 0 and sum of squares n = 4, so
    # ridge (alpha 1) gives coefficient 4 * (0.2 * std) / (4 + 1) and intercept mean(y) = 0.4.
    x = np.array([0.0, 1.0, 2.0, 3.0])
    calibrator = fit_linear_calibrator(x, 0.1 + 0.2 * x)
    std = math.sqrt(1.25)
    assert calibrator.coefficients[0] == pytest.approx(4 * 0.2 * std / 5)
    assert calibrator.intercept == pytest.approx(0.4)


def test_logistic_fit_is_symmetric_on_symmetric_data() -> None:
    x = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    calibrator = fit_logistic_calibrator(x, np.array([0, 0, 1, 1]))
    assert calibrator.coefficients[0] > 0
    low, high = calibrator.predict_proba([[-1.0], [1.0]])
    assert low + high == pytest.approx(1.0)  # mirror images
    with pytest.raises(ValueError, match="both outcomes"):
        fit_logistic_calibrator(x, np.ones(4))


def test_isotonic_fit_pools_violators() -> None:
    # y = 0, 1, 0, 1 on x = 1..4: the middle pair is pooled to 1/2.
    calibrator = fit_isotonic_calibrator(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1, 0, 1]))
    assert calibrator.predict_proba([1.0, 2.5, 4.0]) == pytest.approx([0.0, 0.5, 1.0])


# --------------------------------------------------------------------------- artifact


def artifacts() -> list[CalibrationArtifact]:
    scaler = StandardScalerParams((3.0, 0.5), (1.0, 0.25))
    return [
        CalibrationArtifact(
            "temperature_scaling",
            TemperatureScalingCalibrator(1.7),
            metadata={"fitted_on": {"mode": "few_shot", "n_samples": 12}},
        ),
        CalibrationArtifact(
            "logistic",
            LogisticCalibrator((0.4, -1.2), 0.1, scaler),
            ("verbalized_confidence", "retrieval_similarity_mean"),
            "correctness",
        ),
        CalibrationArtifact("platt", LinearCalibrator((0.3, 0.2), 0.6, scaler), ("a", "b"), "loss"),
        CalibrationArtifact(
            "isotonic", IsotonicCalibrator((0.0, 1.0), (0.3, 0.9)), ("token_msp",), "correctness"
        ),
    ]


@pytest.mark.parametrize("artifact", artifacts(), ids=lambda a: a.method)
def test_artifact_round_trips_through_json(artifact: CalibrationArtifact, tmp_path) -> None:
    text = dumps_calibration_artifact(artifact)
    assert parse_calibration_artifact(text, file="cal.json") == artifact
    path = tmp_path / "cal.json"
    save_calibration_artifact(artifact, path)
    assert load_calibration_artifact(path) == artifact


def test_artifact_json_follows_the_spec_schema() -> None:
    data = calibration_artifact_to_dict(artifacts()[1])
    assert data["schema_version"] == "1"
    assert data["method"] == "logistic"
    assert data["features"] == ["verbalized_confidence", "retrieval_similarity_mean"]
    assert data["model"] == {
        "coefficients": [0.4, -1.2],
        "intercept": 0.1,
        "link": "sigmoid",
        "scaler": {"mean": [3.0, 0.5], "std": [1.0, 0.25]},
    }
    temperature = calibration_artifact_to_dict(artifacts()[0])
    assert temperature["temperature"] == 1.7
    assert temperature["fitted_on"] == {"mode": "few_shot", "n_samples": 12}


@pytest.mark.parametrize(
    "data",
    [
        {"method": "temperature_scaling", "temperature": 2.5},
        {"method": "temperature_scaling", "model": {"temperature": 2.5}},
    ],
)
def test_temperature_may_sit_at_top_level_or_in_model(data: dict) -> None:
    artifact = calibration_artifact_from_dict(data, file="t.json")
    assert artifact.calibrator == TemperatureScalingCalibrator(2.5)


@pytest.mark.parametrize(
    ("data", "location", "message"),
    [
        ([], "", "object"),
        ({"method": "magic"}, "method", "temperature_scaling"),
        ({"method": "temperature_scaling"}, "temperature", "number"),
        ({"method": "temperature_scaling", "temperature": -2}, "temperature", "positive"),
        ({"method": "logistic", "features": ["a"]}, "model", "object"),
        (
            {"method": "logistic", "features": ["a"], "model": {"intercept": 0}},
            "model.coefficients",
            "list",
        ),
        (
            {
                "method": "logistic",
                "features": ["a"],
                "model": {
                    "coefficients": [1],
                    "intercept": 0,
                    "link": "tanh",
                    "scaler": {"mean": [0], "std": [1]},
                },
            },
            "model.link",
            "sigmoid",
        ),
        (
            {
                "method": "isotonic",
                "features": ["a", "b"],
                "model": {"x_thresholds": [0], "y_thresholds": [1]},
            },
            "",
            "exactly one feature",
        ),
        ({"method": "logistic", "features": [1]}, "features", "strings"),
    ],
)
def test_bad_artifacts_name_the_key(data: object, location: str, message: str) -> None:
    with pytest.raises(InputError) as raised:
        calibration_artifact_from_dict(data, file="bad.json")
    assert raised.value.file == "bad.json"
    assert raised.value.location == location
    assert message in raised.value.message


def test_artifact_json_syntax_error_is_an_input_error() -> None:
    with pytest.raises(InputError, match="invalid JSON"):
        parse_calibration_artifact(b"{not json", file="bad.json")


def test_artifact_text_is_json_with_sorted_keys() -> None:
    text = dumps_calibration_artifact(artifacts()[3])
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["model"] == {"x_thresholds": [0.0, 1.0], "y_thresholds": [0.3, 0.9]}


def test_ece_bins_by_exact_edges_on_a_tenth_grid() -> None:
    # Each k/10 opens its own bin [k/10, (k+1)/10); 1.0 closes the last one.
    grid = [float(f"0.{k}") for k in range(10)] + [1.0]
    assert ece_bins(np.array(grid), 10).tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    for k in range(10):  # a lone correct prediction at p = k/10 is off by 1 - k/10
        assert compute_ece([grid[k]], [1]) == pytest.approx(1 - grid[k])
    twentieths = np.array([k / 20 for k in range(21)])
    assert ece_bins(twentieths, 20).tolist() == [*range(20), 19]


def test_ece_puts_a_confidence_of_exactly_a_bin_edge_in_the_upper_bin() -> None:
    # 0.3, 0.3 and 0.39 share [0.3, 0.4): confidence 0.33, accuracy 2/3.
    assert compute_ece([0.3, 0.3, 0.39], [1, 1, 0]) == pytest.approx(0.33666, abs=1e-5)
    assert round(compute_ece([0.3, 0.3, 0.39], [1, 1, 0]), 3) == 0.337
    # 0.6 and 0.7 each open their bin: two bins of one, errors 0.4 and 0.7.
    assert compute_ece([0.6, 0.7], [1, 0]) == pytest.approx((0.4 + 0.7) / 2)
