"""Post-hoc confidence calibration (SSOT: `calibration/calibrators.py`) and its JSON artifact.

Calibrators map a raw confidence (or a feature vector of item signals) to a calibrated
probability, typically P(prediction correct). Fitted parameters are frozen dataclasses of
plain floats so that they compare, hash and serialise simply; scikit-learn is only used to fit
them (and imported only when fitting, so loading an artifact stays cheap).

Artifact JSON (as written by the spec's training scripts):

    {"schema_version": "1", "method": "temperature_scaling", "temperature": T, ...}
    {"schema_version": "1", "method": "logistic" | "platt", "features": [...], "target": ...,
     "model": {"coefficients": [...], "intercept": b, "link": "sigmoid" | "identity",
               "scaler": {"mean": [...], "std": [...]}}}
    {"schema_version": "1", "method": "isotonic", "features": [one], "target": ...,
     "model": {"x_thresholds": [...], "y_thresholds": [...]}}

Any other top-level keys (created_at, fitted_on, metrics, ...) are kept as metadata.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit

from metrics.families.json_input import InputError, load_json

# Probabilities are clipped away from 0 and 1 so that logits and log-likelihoods stay finite.
PROBABILITY_EPSILON = 1e-6
# The temperature search range of the spec ("minimising NLL over T in [0.05, 10]").
TEMPERATURE_BOUNDS = (0.05, 10.0)
SCHEMA_VERSION = "1"
CALIBRATION_METHODS = ("temperature_scaling", "logistic", "platt", "isotonic")


# --------------------------------------------------------------------------- metrics


def _as_probabilities(p: Any) -> np.ndarray:
    return np.clip(np.asarray(p, dtype=float), PROBABILITY_EPSILON, 1.0 - PROBABILITY_EPSILON)


def _logit(p: Any) -> np.ndarray:
    p = _as_probabilities(p)
    return np.log(p / (1.0 - p))


def _check_pair(p: np.ndarray, y: np.ndarray) -> None:
    if p.shape != y.shape:
        raise ValueError(f"p and y must have the same shape, got {p.shape} and {y.shape}")


def compute_binary_nll(p: Any, y: Any) -> float:
    """Mean negative log-likelihood of binary outcomes y under probabilities p."""
    p, y = _as_probabilities(p), np.asarray(y, dtype=float)
    _check_pair(p, y)
    return float(np.mean(-(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))))


def compute_ece(p: Any, y: Any, *, n_bins: int = 10) -> float:
    """Expected calibration error: count-weighted mean |accuracy - confidence| over
    equal-width bins [lo, hi), the last bin closed at 1.0. 0.0 for no samples."""
    if n_bins <= 0:
        raise ValueError(f"n_bins must be positive, got {n_bins}")
    p, y = np.clip(np.asarray(p, dtype=float), 0.0, 1.0), np.asarray(y, dtype=float)
    _check_pair(p, y)
    bins = ece_bins(p, n_bins)
    ece = 0.0
    for index in range(n_bins):
        in_bin = bins == index
        if in_bin.any():
            ece += in_bin.mean() * abs(y[in_bin].mean() - p[in_bin].mean())
    return float(ece)


def ece_bins(p: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin of each confidence: k where k/n_bins <= p < (k+1)/n_bins, p = 1.0 in the last.

    Each edge k/n_bins is one correctly rounded division, so it is exactly the float a
    literal such as 0.3 reads as: p = 0.3 lands in [0.3, 0.4). (np.linspace builds
    edges as k * step, and 3 * 0.1 > 0.3 put 0.3 in the bin below.)
    """
    edges = np.arange(n_bins + 1) / n_bins
    return np.minimum(np.searchsorted(edges, p, side="right") - 1, n_bins - 1)


# --------------------------------------------------------------------------- temperature scaling


def apply_temperature_scaling(p: Any, *, temperature: float) -> np.ndarray:
    """p' = sigmoid(logit(p) / T): temperature scaling carried out in probability space."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return expit(_logit(p) / temperature)


@dataclass(frozen=True, slots=True)
class TemperatureScalingCalibrator:
    """Single-parameter calibrator: sigmoid(logit(p) / T)."""

    temperature: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(f"temperature must be a positive number, got {self.temperature}")

    @classmethod
    def fit(cls, p: Any, y: Any) -> TemperatureScalingCalibrator:
        """The T in [0.05, 10] minimising binary NLL of (p, y)."""
        p, y = _binary_training_data(p, y)
        logits = _logit(p)

        def nll(log_t: float) -> float:
            return compute_binary_nll(expit(logits / math.exp(log_t)), y)

        low, high = (math.log(bound) for bound in TEMPERATURE_BOUNDS)
        found = minimize_scalar(nll, bounds=(low, high), method="bounded", options={"xatol": 1e-8})
        # NLL is convex in 1/T, hence unimodal in log T; Brent's bounded search never
        # evaluates the bounds themselves, so they are compared explicitly.
        best = min((found.x, low, high), key=nll)
        low_t, high_t = TEMPERATURE_BOUNDS  # exp(log(bound)) may round just outside the range
        return cls(temperature=min(max(math.exp(best), low_t), high_t))

    def apply(self, p: Any) -> np.ndarray:
        return apply_temperature_scaling(p, temperature=self.temperature)


def _binary_training_data(p: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    if p.ndim != 1 or p.shape != y.shape:
        raise ValueError("p and y must be 1-D arrays of the same length")
    if p.size == 0:
        raise ValueError("cannot fit a calibrator on no samples")
    if ((p < 0) | (p > 1)).any() or np.isnan(p).any():
        raise ValueError("p must hold probabilities in [0, 1]")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must hold binary outcomes (0 or 1)")
    return p, y


# --------------------------------------------------------------------------- feature calibrators


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=float).reshape(-1))


def _feature_matrix(x: Any, n_features: int) -> np.ndarray:
    """2-D (samples, features) view of x; a 1-D x is one sample."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    if x.ndim != 2 or x.shape[1] != n_features:
        raise ValueError(f"expected {n_features} feature(s) per sample, got shape {x.shape}")
    return x


@dataclass(frozen=True, slots=True)
class StandardScalerParams:
    """Frozen standardisation (x - mean) / std, one entry per feature."""

    mean: tuple[float, ...]
    std: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", _floats(self.mean))
        object.__setattr__(self, "std", _floats(self.std))
        if len(self.mean) != len(self.std) or any(s <= 0 for s in self.std):
            raise ValueError("scaler mean and std must have equal length and std > 0")

    def transform(self, x: Any) -> np.ndarray:
        x = _feature_matrix(x, len(self.mean))
        return (x - np.array(self.mean)) / np.array(self.std)


@dataclass(frozen=True, slots=True)
class _LinearModel:
    """intercept + standardised(x) . coefficients: what the logistic and linear calibrators share."""

    coefficients: tuple[float, ...]
    intercept: float
    scaler: StandardScalerParams

    def __post_init__(self) -> None:
        object.__setattr__(self, "coefficients", _floats(self.coefficients))
        _check_scaler_width(self.coefficients, self.scaler)

    def _response(self, x: Any) -> np.ndarray:
        return _linear_response(self.coefficients, self.intercept, self.scaler, x)


@dataclass(frozen=True, slots=True)
class LogisticCalibrator(_LinearModel):
    """P = sigmoid(intercept + standardised(x) . coefficients)."""

    def predict_proba(self, x: Any) -> np.ndarray:
        return expit(self._response(x))


@dataclass(frozen=True, slots=True)
class LinearCalibrator(_LinearModel):
    """Linear regression for continuous targets (e.g. 1 - normalised error), clipped to [0, 1]."""

    def predict(self, x: Any) -> np.ndarray:
        return np.clip(self._response(x), 0.0, 1.0)


def _check_scaler_width(coefficients: tuple[float, ...], scaler: StandardScalerParams) -> None:
    if len(coefficients) != len(scaler.mean):
        raise ValueError("coefficients and scaler must cover the same features")


def _linear_response(
    coefficients: tuple[float, ...], intercept: float, scaler: StandardScalerParams, x: Any
) -> np.ndarray:
    return intercept + scaler.transform(x) @ np.array(coefficients)


@dataclass(frozen=True, slots=True)
class IsotonicCalibrator:
    """Monotone piecewise-linear map through the fitted thresholds, clipped to [0, 1]
    (flat beyond the first and last threshold)."""

    x_thresholds: tuple[float, ...]
    y_thresholds: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "x_thresholds", _floats(self.x_thresholds))
        object.__setattr__(self, "y_thresholds", _floats(self.y_thresholds))
        xs = self.x_thresholds
        if not xs or len(xs) != len(self.y_thresholds):
            raise ValueError("isotonic thresholds must be non-empty and of equal length")
        if any(b < a for a, b in pairwise(xs)):
            raise ValueError("isotonic x_thresholds must be non-decreasing")

    def predict_proba(self, x: Any) -> np.ndarray:
        values = np.interp(np.asarray(x, dtype=float), self.x_thresholds, self.y_thresholds)
        return np.clip(values, 0.0, 1.0)


# --------------------------------------------------------------------------- fitting (scikit-learn)


def fit_standard_scaler(x: Any) -> StandardScalerParams:
    """Column mean and population std; a constant column gets std 1 (left unscaled)."""
    x = np.asarray(x, dtype=float)
    x = x.reshape(-1, 1) if x.ndim == 1 else x
    std = x.std(axis=0)
    return StandardScalerParams(
        mean=_floats(x.mean(axis=0)), std=_floats(np.where(std == 0, 1.0, std))
    )


def fit_logistic_calibrator(x: Any, y: Any, *, c: float = 1.0) -> LogisticCalibrator:
    """L2-regularised logistic regression (inverse strength c) on standardised features."""
    from sklearn.linear_model import LogisticRegression  # fitting only: keep imports light

    x, y = _feature_training_data(x, y)
    if len(np.unique(y)) < 2:
        raise ValueError("logistic calibration needs both outcomes (0 and 1) in y")
    scaler = fit_standard_scaler(x)
    model = LogisticRegression(C=c, solver="lbfgs", max_iter=1000)
    model.fit(scaler.transform(x), y.astype(int))
    return LogisticCalibrator(model.coef_[0], float(model.intercept_[0]), scaler)


def fit_linear_calibrator(x: Any, y: Any, *, alpha: float = 1.0) -> LinearCalibrator:
    """Ridge regression (penalty alpha) on standardised features, for continuous targets."""
    from sklearn.linear_model import Ridge

    x, y = _feature_training_data(x, y)
    scaler = fit_standard_scaler(x)
    model = Ridge(alpha=alpha)
    model.fit(scaler.transform(x), y)
    return LinearCalibrator(model.coef_, float(model.intercept_), scaler)


def fit_isotonic_calibrator(x: Any, y: Any) -> IsotonicCalibrator:
    """Increasing isotonic regression of y on a single feature."""
    from sklearn.isotonic import IsotonicRegression

    x, y = _feature_training_data(x, y)
    if x.shape[1] != 1:
        raise ValueError("isotonic calibration takes exactly one feature")
    model = IsotonicRegression(out_of_bounds="clip", increasing=True)
    model.fit(x[:, 0], y)
    return IsotonicCalibrator(model.X_thresholds_, model.y_thresholds_)


def _feature_training_data(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    x = x.reshape(-1, 1) if x.ndim == 1 else x
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.size:
        raise ValueError("x must be (samples, features) and y one value per sample")
    if y.size == 0:
        raise ValueError("cannot fit a calibrator on no samples")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("x and y must be finite")
    return x, y


# --------------------------------------------------------------------------- artifact

Calibrator = (
    TemperatureScalingCalibrator | LogisticCalibrator | LinearCalibrator | IsotonicCalibrator
)

_CALIBRATOR_TYPES_BY_METHOD: dict[str, tuple[type, ...]] = {
    "temperature_scaling": (TemperatureScalingCalibrator,),
    "logistic": (LogisticCalibrator, LinearCalibrator),
    "platt": (LogisticCalibrator, LinearCalibrator),
    "isotonic": (IsotonicCalibrator,),
}


@dataclass(frozen=True, slots=True)
class CalibrationArtifact:
    """A fitted calibrator with the item-signal features it reads and any provenance."""

    method: str
    calibrator: Calibrator
    features: tuple[str, ...] = ()
    target: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", tuple(self.features))
        allowed = _CALIBRATOR_TYPES_BY_METHOD.get(self.method)
        if allowed is None:
            raise ValueError(f"method must be one of {CALIBRATION_METHODS}, got {self.method!r}")
        if not isinstance(self.calibrator, allowed):
            raise ValueError(
                f"method {self.method!r} does not fit {type(self.calibrator).__name__}"
            )
        if self.method != "temperature_scaling" and not self.features:
            raise ValueError(f"method {self.method!r} needs the list of features it reads")
        if self.method == "isotonic" and len(self.features) != 1:
            raise ValueError("isotonic calibration reads exactly one feature")


def calibration_artifact_to_dict(artifact: CalibrationArtifact) -> dict[str, Any]:
    """The artifact as JSON-ready data (spec schema); metadata keys come first."""
    data: dict[str, Any] = {**artifact.metadata}
    data.update(schema_version=SCHEMA_VERSION, method=artifact.method)
    if artifact.features:
        data["features"] = list(artifact.features)
    if artifact.target is not None:
        data["target"] = artifact.target
    calibrator = artifact.calibrator
    if isinstance(calibrator, TemperatureScalingCalibrator):
        # Both places the spec's loaders read the temperature from.
        data["temperature"] = calibrator.temperature
        data["model"] = {"temperature": calibrator.temperature}
    elif isinstance(calibrator, IsotonicCalibrator):
        data["model"] = {
            "x_thresholds": list(calibrator.x_thresholds),
            "y_thresholds": list(calibrator.y_thresholds),
        }
    else:
        data["model"] = _linear_model_dict(calibrator)
    return data


def _linear_model_dict(calibrator: LogisticCalibrator | LinearCalibrator) -> dict[str, Any]:
    return {
        "coefficients": list(calibrator.coefficients),
        "intercept": calibrator.intercept,
        "link": "sigmoid" if isinstance(calibrator, LogisticCalibrator) else "identity",
        "scaler": {"mean": list(calibrator.scaler.mean), "std": list(calibrator.scaler.std)},
    }


_MODEL_KEYS = ("schema_version", "method", "features", "target", "temperature", "model")


def calibration_artifact_from_dict(data: Any, *, file: str) -> CalibrationArtifact:
    """Validate artifact data; every problem is an InputError naming the key."""
    reader = _ArtifactReader(file)
    data = reader.mapping(data, "")
    method = reader.string(data.get("method"), "method")
    if method not in CALIBRATION_METHODS:
        raise InputError(
            file, "method", f"expected one of {list(CALIBRATION_METHODS)}, got {method!r}"
        )
    features = tuple(reader.string_list(data.get("features", []), "features"))
    target = data.get("target")
    if target is not None:
        target = reader.string(target, "target")
    calibrator = _read_calibrator(reader, method, data)
    metadata = {key: value for key, value in data.items() if key not in _MODEL_KEYS}
    try:
        return CalibrationArtifact(method, calibrator, features, target, metadata)
    except ValueError as exc:
        raise InputError(file, "", str(exc)) from exc


def _read_calibrator(reader: _ArtifactReader, method: str, data: Mapping[str, Any]) -> Calibrator:
    if method == "temperature_scaling":
        temperature = data.get("temperature")
        if temperature is None and isinstance(data.get("model"), Mapping):
            temperature = data["model"].get("temperature")
        value = reader.number(temperature, "temperature")
        return reader.build(TemperatureScalingCalibrator, "temperature", value)
    model = reader.mapping(data.get("model"), "model")
    if method == "isotonic":
        xs = reader.number_list(model.get("x_thresholds"), "model.x_thresholds")
        ys = reader.number_list(model.get("y_thresholds"), "model.y_thresholds")
        return reader.build(IsotonicCalibrator, "model", xs, ys)
    return _read_linear_model(reader, model)


def _read_linear_model(
    reader: _ArtifactReader, model: Mapping[str, Any]
) -> LogisticCalibrator | LinearCalibrator:
    coefficients = reader.number_list(model.get("coefficients"), "model.coefficients")
    intercept = reader.number(model.get("intercept"), "model.intercept")
    link = reader.string(model.get("link", "sigmoid"), "model.link")
    scaler_data = reader.mapping(model.get("scaler"), "model.scaler")
    mean = reader.number_list(scaler_data.get("mean"), "model.scaler.mean")
    std = reader.number_list(scaler_data.get("std"), "model.scaler.std")
    scaler = reader.build(StandardScalerParams, "model.scaler", mean, std)
    kinds = {"sigmoid": LogisticCalibrator, "identity": LinearCalibrator}
    if link not in kinds:
        raise InputError(
            reader.file, "model.link", f"expected 'sigmoid' or 'identity', got {link!r}"
        )
    return reader.build(kinds[link], "model", coefficients, intercept, scaler)


@dataclass(frozen=True, slots=True)
class _ArtifactReader:
    """Typed access to artifact values, raising InputError(file, key, expectation)."""

    file: str

    def fail(self, location: str, message: str) -> InputError:
        return InputError(self.file, location, message)

    def mapping(self, value: Any, location: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(location, f"expected an object, got {_json_type(value)}")
        return value

    def string(self, value: Any, location: str) -> str:
        if not isinstance(value, str):
            raise self.fail(location, f"expected a string, got {_json_type(value)}")
        return value

    def number(self, value: Any, location: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(location, f"expected a number, got {_json_type(value)}")
        return float(value)

    def string_list(self, value: Any, location: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(location, "expected a list of strings")
        return value

    def number_list(self, value: Any, location: str) -> list[float]:
        if not isinstance(value, list):
            raise self.fail(location, f"expected a list of numbers, got {_json_type(value)}")
        return [self.number(v, f"{location}[{i}]") for i, v in enumerate(value)]

    def build(self, kind: type, location: str, *args: Any) -> Any:
        try:
            return kind(*args)
        except ValueError as exc:
            raise self.fail(location, str(exc)) from exc


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def dumps_calibration_artifact(artifact: CalibrationArtifact) -> str:
    """JSON text of the artifact (sorted keys, as the spec's scripts write it)."""
    return json.dumps(calibration_artifact_to_dict(artifact), indent=2, sort_keys=True) + "\n"


def parse_calibration_artifact(data: bytes | str, *, file: str) -> CalibrationArtifact:
    """Parse artifact JSON text (for example an upload)."""
    return calibration_artifact_from_dict(load_json(data, file=file), file=file)


def save_calibration_artifact(artifact: CalibrationArtifact, path: str | Path) -> None:
    Path(path).write_text(dumps_calibration_artifact(artifact), encoding="utf-8")


def load_calibration_artifact(path: str | Path) -> CalibrationArtifact:
    return parse_calibration_artifact(Path(path).read_bytes(), file=str(path))


def predict_calibrated(calibrator: Calibrator, x: Sequence[float] | np.ndarray) -> float:
    """The calibrated confidence of one sample (feature vector, or the raw confidence for
    temperature scaling and isotonic calibration)."""
    x = np.asarray(x, dtype=float).reshape(-1)
    if isinstance(calibrator, TemperatureScalingCalibrator):
        return float(calibrator.apply(x[:1])[0])
    if isinstance(calibrator, IsotonicCalibrator):
        return float(calibrator.predict_proba(x[:1])[0])
    if isinstance(calibrator, LogisticCalibrator):
        return float(calibrator.predict_proba(x)[0])
    return float(calibrator.predict(x)[0])


# What ``metrics.families.calibration`` exports.
__all__ = [
    "CALIBRATION_METHODS",
    "PROBABILITY_EPSILON",
    "SCHEMA_VERSION",
    "TEMPERATURE_BOUNDS",
    "CalibrationArtifact",
    "Calibrator",
    "IsotonicCalibrator",
    "LinearCalibrator",
    "LogisticCalibrator",
    "StandardScalerParams",
    "TemperatureScalingCalibrator",
    "apply_temperature_scaling",
    "calibration_artifact_from_dict",
    "calibration_artifact_to_dict",
    "compute_binary_nll",
    "compute_ece",
    "dumps_calibration_artifact",
    "ece_bins",
    "fit_isotonic_calibrator",
    "fit_linear_calibrator",
    "fit_logistic_calibrator",
    "fit_standard_scaler",
    "load_calibration_artifact",
    "parse_calibration_artifact",
    "predict_calibrated",
    "save_calibration_artifact",
]
