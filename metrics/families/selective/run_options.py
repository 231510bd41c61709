"""The options of a selective-prediction evaluation: as asked for (``OPTIONS``), as given
(``Options``) and resolved into settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from metrics.families.calibration import CalibrationArtifact
from metrics.families.runs import Option

from .confidence import (
    ConfidenceVariant,
    check_calibration,
    parse_confidence_variant,
)
from .curves import (
    LOSS_DIVISORS,
    Loss,
)

DEFAULT_COVERAGE_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

LOSS_DEFINITIONS = {"abs": "abs(pred - gt)", "abs_norm": "abs(pred - gt) / 3"}


@dataclass(frozen=True, slots=True)
class SelectiveSettings:
    """Validated options."""

    loss: Loss
    variants: tuple[ConfidenceVariant, ...]
    n_resamples: int
    seed: int
    coverage_grid: tuple[float, ...]
    area_coverage: float
    intersection_only: bool
    calibration: CalibrationArtifact | None


@dataclass(frozen=True)
class Options:
    """The options of a selective-prediction run (the SSOT script's defaults).

    Constructing one checks every value (ValueError says which option); ``settings`` holds
    them parsed (confidence variants, coverages as floats).
    """

    mode: str | None = None  # experiment mode of the (first) run; read by parse
    second_mode: str | None = None  # parse: with one file, read it again in this mode
    loss: str = "abs_norm"
    confidence_variants: Sequence[str] = ("llm", "total_evidence")
    bootstrap_resamples: int = 10_000
    seed: int = 42
    coverage_grid: Sequence[float] = DEFAULT_COVERAGE_GRID
    area_coverage: float = 0.5
    intersection_only: bool = False
    calibration: CalibrationArtifact | None = None
    settings: SelectiveSettings = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", resolve_options(self))


MAX_RESAMPLES = 100_000

OPTIONS = (
    Option(
        "mode",
        "str",
        "Experiment mode of the (first) run, e.g. few_shot; needed when a file holds several.",
    ),
    Option(
        "second_mode",
        "str",
        "Mode of the second input; with one file, that file is read again in this mode and "
        "the two modes are compared (paired deltas).",
    ),
    Option("loss", "choice", "Item loss.", choices=tuple(LOSS_DEFINITIONS)),
    Option(
        "confidence_variants",
        "str_list",
        "Confidence signals ranking the items (comma-separated), e.g. llm, token_msp, "
        "secondary:llm+token_msp:average.",
    ),
    Option(
        "bootstrap_resamples",
        "int",
        "Participant-level bootstrap resamples for the 95% CIs (0: no CIs).",
        minimum=0,
        maximum=MAX_RESAMPLES,
    ),
    Option("seed", "int", "Bootstrap seed.", minimum=0, maximum=2**32 - 1),
    Option("coverage_grid", "float_list", "Coverages of the MAE@coverage table."),
    Option(
        "area_coverage", "float", "Coverage up to which the truncated AURC/AUGRC are integrated."
    ),
    Option(
        "intersection_only", "bool", "Paired runs: compare only the participants both runs hold."
    ),
)


def resolve_options(options: Options) -> SelectiveSettings:
    """Every value of ``options`` checked and parsed (ValueError says which option)."""
    if options.loss not in LOSS_DIVISORS:
        raise ValueError(f"loss must be one of {sorted(LOSS_DIVISORS)}, got {options.loss!r}")
    settings = SelectiveSettings(
        loss=cast(Loss, options.loss),  # one of LOSS_DIVISORS, checked above
        variants=_variants(options.confidence_variants),
        n_resamples=_integer(options.bootstrap_resamples, "bootstrap_resamples", 0, None),
        seed=_integer(options.seed, "seed", 0, 2**32 - 1),
        coverage_grid=_coverages(options.coverage_grid),
        area_coverage=_coverage(options.area_coverage, "area_coverage"),
        intersection_only=_flag(options.intersection_only, "intersection_only"),
        calibration=_calibration(options.calibration),
    )
    for variant in settings.variants:
        check_calibration(variant, settings.calibration)
    return settings


def _variants(value: Any) -> tuple[ConfidenceVariant, ...]:
    names = [value] if isinstance(value, str) else list(value or [])
    if not names:
        raise ValueError("confidence_variants must name at least one variant")
    return tuple(parse_confidence_variant(name) for name in dict.fromkeys(names))


def _integer(value: Any, name: str, low: int, high: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be in [{low}, {high if high is not None else 'inf'}]")
    return value


def _coverage(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return float(value)


def _coverages(value: Any) -> tuple[float, ...]:
    values = [value] if isinstance(value, int | float) else list(value or [])
    if not values:
        raise ValueError("coverage_grid must hold at least one coverage")
    return tuple(_coverage(v, "coverage_grid value") for v in values)


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def _calibration(value: Any) -> CalibrationArtifact | None:
    if value is not None and not isinstance(value, CalibrationArtifact):
        raise ValueError("calibration must be a CalibrationArtifact (see calibration.py)")
    return value
