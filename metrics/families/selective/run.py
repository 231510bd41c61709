"""Imported evaluation runs: parse and validate run-output JSON, build the metrics artifact.

Run-output JSON (as written by the spec's `reproduce_results.py`):

    {"run_metadata": {"run_id": ..., "git_commit": ...},
     "experiments": [
       {"provenance": {"mode": "few_shot"},
        "results": {"mode": "few_shot",
                    "results": [{"participant_id": 300, "success": true,
                                 "ground_truth_items": {"NoInterest": 1, ...},
                                 "predicted_items": {"NoInterest": 2 | null, ...},
                                 "item_signals": {"NoInterest": {...signals...}, ...}},
                                ...]}}]}

Participants with `success: false` are counted as failures and excluded from the metrics.
The artifact follows the spec's schema, whose exact keys and nesting are those built by the
SSOT script `evaluate_selective_prediction.py` (see `compute`).

The run interface (``metrics.families.runs``): ``OPTIONS``, ``Options``, ``parse`` (one or two
``run`` files, or one read in two modes), ``compute`` and ``report``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, cast

from metrics.families.calibration import CalibrationArtifact
from metrics.families.json_input import InputError, load_json
from metrics.families.runs import Files, Option

from .bootstrap import (
    BootstrapDeltaResult,
    BootstrapResult,
    SelectiveMetric,
    bootstrap_metrics_by_participant,
    paired_bootstrap_deltas_by_participant,
)
from .card import card as card  # the run.py interface: parse, compute, report, card
from .confidence import (
    ConfidenceVariant,
    SignalError,
    check_calibration,
    compute_confidence,
    parse_confidence_variant,
)
from .curves import (
    LOSS_DIVISORS,
    ItemPrediction,
    Loss,
    compute_augrc,
    compute_augrc_at_coverage,
    compute_augrc_optimal,
    compute_aurc,
    compute_aurc_achievable,
    compute_aurc_at_coverage,
    compute_aurc_optimal,
    compute_cmax,
    compute_risk_coverage_curve,
    selective_risk_at_coverage,
)

# PHQ-8 item names, in questionnaire order (item_index follows this order).
PHQ8_ITEMS = (
    "NoInterest",
    "Depressed",
    "Sleep",
    "Tired",
    "Appetite",
    "Failure",
    "Concentrating",
    "Moving",
)
MAX_ITEM_SCORE = 3
SCHEMA_VERSION = "1"
DEFAULT_COVERAGE_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

LOSS_DEFINITIONS = {"abs": "abs(pred - gt)", "abs_norm": "abs(pred - gt) / 3"}
# Multiply a loss by this to get back raw score points.
LOSS_RAW_MULTIPLIERS = {"abs": 1, "abs_norm": 3}


# --------------------------------------------------------------------------- parsed run


@dataclass(frozen=True, slots=True)
class ParticipantResult:
    """One participant of a run. Failed participants carry no item data."""

    participant_id: int
    success: bool
    ground_truth: tuple[int, ...] = ()
    predicted: tuple[int | None, ...] = ()
    item_signals: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedRun:
    """One experiment (mode) of a run-output file, validated."""

    file: str
    run_id: str | None
    git_commit: str | None
    mode: str | None
    participants: tuple[ParticipantResult, ...]

    @property
    def included_ids(self) -> frozenset[int]:
        return frozenset(p.participant_id for p in self.participants if p.success)

    @property
    def failed_ids(self) -> frozenset[int]:
        return frozenset(p.participant_id for p in self.participants if not p.success)

    @property
    def all_ids(self) -> frozenset[int]:
        return frozenset(p.participant_id for p in self.participants)


# --------------------------------------------------------------------------- parsing


def parse_run(data: bytes | str, *, file: str, mode: str | None) -> ParsedRun:
    """Parse run-output JSON; `mode` picks the experiment (required when there are several).

    Every problem raises InputError naming the file, where (experiment, participant, item,
    key) and what was expected.
    """
    document = _expect_object(load_json(data, file=file), file, "top level")
    index, experiment = _select_experiment(document, file=file, mode=mode)
    where = f"experiments[{index}].results"
    results = _expect_object(experiment.get("results"), file, where)
    rows = results.get("results")
    if not isinstance(rows, list):
        raise InputError(file, f"{where}.results", "expected a list of participant results")
    participants = tuple(
        _parse_participant(row, file, f"{where}.results[{i}]") for i, row in enumerate(rows)
    )
    _reject_duplicates(participants, file)
    metadata = document.get("run_metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return ParsedRun(
        file=file,
        run_id=_optional_text(metadata.get("run_id")),
        git_commit=_optional_text(metadata.get("git_commit")),
        mode=_experiment_mode(experiment),
        participants=participants,
    )


def _expect_object(value: Any, file: str, location: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(file, location, f"expected a JSON object, got {_describe(value)}")
    return value


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _experiment_mode(experiment: Mapping[str, Any]) -> str | None:
    for container in (experiment.get("results"), experiment.get("provenance")):
        if isinstance(container, Mapping) and isinstance(container.get("mode"), str):
            return container["mode"]
    return None


def experiment_modes(data: bytes | str) -> list[str]:
    """The modes of a run file's experiments, in file order; [] when the file cannot tell (the
    upload page offers them before the file is parsed for real)."""
    try:
        document = load_json(data, file="run")
    except InputError:
        return []
    experiments = document.get("experiments") if isinstance(document, Mapping) else None
    if not isinstance(experiments, list):
        return []
    modes = [_experiment_mode(e) for e in experiments if isinstance(e, Mapping)]
    return list(dict.fromkeys(mode for mode in modes if mode))


def _select_experiment(
    document: Mapping[str, Any], *, file: str, mode: str | None
) -> tuple[int, Mapping[str, Any]]:
    experiments = document.get("experiments")
    if not isinstance(experiments, list) or not experiments:
        raise InputError(file, "experiments", "expected a non-empty list of experiments")
    for index, experiment in enumerate(experiments):
        _expect_object(experiment, file, f"experiments[{index}]")
    modes = [_experiment_mode(experiment) for experiment in experiments]
    if mode is None:
        if len(experiments) > 1:
            raise InputError(file, "experiments", f"several experiments {modes}: choose a mode")
        return 0, experiments[0]
    if mode not in modes:
        raise InputError(file, "experiments", f"no experiment with mode {mode!r}; found {modes}")
    index = modes.index(mode)
    return index, experiments[index]


def _parse_participant(row: Any, file: str, where: str) -> ParticipantResult:
    row = _expect_object(row, file, where)
    pid = row.get("participant_id")
    if isinstance(pid, bool) or not isinstance(pid, int):
        raise InputError(
            file, f"{where}.participant_id", f"expected an integer, got {_describe(pid)}"
        )
    success = row.get("success")
    if not isinstance(success, bool):
        raise InputError(
            file, f"participant {pid}: success", f"expected true or false, got {_describe(success)}"
        )
    if not success:
        return ParticipantResult(pid, False)
    return ParticipantResult(
        participant_id=pid,
        success=True,
        ground_truth=tuple(_item_values(row, "ground_truth_items", pid, file, _ground_truth)),
        predicted=tuple(_item_values(row, "predicted_items", pid, file, _prediction)),
        item_signals=tuple(_item_values(row, "item_signals", pid, file, _signals)),
    )


def _item_values(
    row: Mapping[str, Any], key: str, pid: int, file: str, read: Callable[[Any, str, str], Any]
) -> Iterable[Any]:
    """The value of each PHQ-8 item under row[key], read (validated) by `read`."""
    mapping = _expect_object(row.get(key), file, f"participant {pid}: {key}")
    missing = [item for item in PHQ8_ITEMS if item not in mapping]
    if missing:
        raise InputError(file, f"participant {pid}: {key}", f"missing PHQ-8 items {missing}")
    for item in PHQ8_ITEMS:
        yield read(mapping[item], file, f"participant {pid}: {key}['{item}']")


def _score(value: Any) -> int | None:
    """An item score 0-3 (integral floats accepted), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if value != int(value) or not 0 <= value <= MAX_ITEM_SCORE:
        return None
    return int(value)


def _ground_truth(value: Any, file: str, location: str) -> int:
    score = _score(value)
    if score is None:
        raise InputError(file, location, f"expected an item score 0-3, got {_describe(value)}")
    return score


def _prediction(value: Any, file: str, location: str) -> int | None:
    score = _score(value)
    if value is not None and score is None:
        raise InputError(
            file, location, f"expected an item score 0-3 or null (abstain), got {_describe(value)}"
        )
    return score


def _signals(value: Any, file: str, location: str) -> Mapping[str, Any]:
    return _expect_object(value, file, location)


def _reject_duplicates(participants: Sequence[ParticipantResult], file: str) -> None:
    seen: set[int] = set()
    for participant in participants:
        if participant.participant_id in seen:
            raise InputError(
                file, f"participant {participant.participant_id}", "appears more than once"
            )
        seen.add(participant.participant_id)


# --------------------------------------------------------------------------- items


def run_items(
    run: ParsedRun,
    *,
    variant: str | ConfidenceVariant,
    calibration: CalibrationArtifact | None = None,
    participant_ids: Iterable[int] | None = None,
) -> list[ItemPrediction]:
    """Item predictions of the successful participants (optionally only `participant_ids`),
    ranked by the confidence variant. A missing signal is an InputError naming the item."""
    if not isinstance(variant, ConfidenceVariant):
        variant = parse_confidence_variant(variant)
    wanted = None if participant_ids is None else set(participant_ids)
    return [
        item
        for participant in run.participants
        if participant.success and (wanted is None or participant.participant_id in wanted)
        for item in _participant_items(run, participant, variant, calibration)
    ]


def _participant_items(
    run: ParsedRun,
    participant: ParticipantResult,
    variant: ConfidenceVariant,
    calibration: CalibrationArtifact | None,
) -> list[ItemPrediction]:
    return [
        ItemPrediction(
            participant_id=participant.participant_id,
            item_index=index,
            pred=participant.predicted[index],
            gt=participant.ground_truth[index],
            confidence=_item_confidence(run, participant, name, variant, calibration),
        )
        for index, name in enumerate(PHQ8_ITEMS)
    ]


def _item_confidence(
    run: ParsedRun,
    participant: ParticipantResult,
    item: str,
    variant: ConfidenceVariant,
    calibration: CalibrationArtifact | None,
) -> float:
    signals = participant.item_signals[PHQ8_ITEMS.index(item)]
    try:
        return compute_confidence(variant, signals, calibration=calibration)
    except SignalError as exc:
        location = f"participant {participant.participant_id}: item_signals['{item}']"
        raise InputError(run.file, location, str(exc)) from exc


# --------------------------------------------------------------------------- options


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


# --------------------------------------------------------------------------- per-variant metrics


def _grid_key(coverage: float) -> str:
    return f"{coverage:.2f}"


def _area_metrics(settings: SelectiveSettings) -> dict[str, SelectiveMetric]:
    loss, area = settings.loss, settings.area_coverage
    return {
        "aurc_full": SelectiveMetric.aurc(loss=loss),
        "augrc_full": SelectiveMetric.augrc(loss=loss),
        "aurc_at_c": SelectiveMetric.aurc_at_coverage(max_coverage=area, loss=loss),
        "augrc_at_c": SelectiveMetric.augrc_at_coverage(max_coverage=area, loss=loss),
        "cmax": SelectiveMetric.cmax(),
    }


def _mae_metrics(settings: SelectiveSettings) -> dict[str, SelectiveMetric]:
    return {
        _grid_key(c): SelectiveMetric.risk_at_coverage(target_coverage=c, loss=settings.loss)
        for c in settings.coverage_grid
    }


def _point_metrics(items: Sequence[ItemPrediction], settings: SelectiveSettings) -> dict[str, Any]:
    loss, area = settings.loss, settings.area_coverage
    cmax = compute_cmax(items)
    aurc, augrc = compute_aurc(items, loss=loss), compute_augrc(items, loss=loss)
    aurc_optimal = compute_aurc_optimal(items, loss=loss)
    augrc_optimal = compute_augrc_optimal(items, loss=loss)
    achievable = compute_aurc_achievable(items, loss=loss)
    truncated = {"requested": area, "used": min(area, cmax)}
    return {
        "cmax": cmax,
        "aurc_full": aurc,
        "augrc_full": augrc,
        "aurc_optimal": aurc_optimal,
        "augrc_optimal": augrc_optimal,
        "eaurc": aurc - aurc_optimal,
        "eaugrc": augrc - augrc_optimal,
        "aurc_achievable": achievable,
        "interpretation": {
            "aurc_gap_pct": _percent(aurc - aurc_optimal, aurc_optimal),
            "augrc_gap_pct": _percent(augrc - augrc_optimal, augrc_optimal),
            "achievable_gain_pct": _percent(aurc - achievable, aurc),
        },
        "aurc_at_c": {
            **truncated,
            "value": compute_aurc_at_coverage(items, max_coverage=area, loss=loss),
        },
        "augrc_at_c": {
            **truncated,
            "value": compute_augrc_at_coverage(items, max_coverage=area, loss=loss),
        },
    }


def _percent(part: float, whole: float) -> float:
    return part / whole * 100.0 if whole > 0 else 0.0


def _mae_grid(items: Sequence[ItemPrediction], settings: SelectiveSettings) -> dict[str, Any]:
    curve = compute_risk_coverage_curve(items, loss=settings.loss)
    grid: dict[str, Any] = {}
    for c in settings.coverage_grid:
        value = selective_risk_at_coverage(curve, target_coverage=c)
        achieved = next((cov for cov in curve.coverage if cov >= c), None)
        grid[_grid_key(c)] = (
            None if value is None else {"requested": c, "achieved": achieved, "value": value}
        )
    return grid


def _ci(result: BootstrapResult | BootstrapDeltaResult) -> list[float] | None:
    return None if result.ci95 is None else list(result.ci95)


def _bootstrap_block(
    items: Sequence[ItemPrediction], settings: SelectiveSettings
) -> dict[str, Any]:
    if settings.n_resamples == 0:
        return {}
    results = bootstrap_metrics_by_participant(
        items, metrics=_all_metrics(settings), n_resamples=settings.n_resamples, seed=settings.seed
    )
    mae = {key: results[f"mae:{key}"] for key in _mae_metrics(settings)}
    return {
        "seed": settings.seed,
        "n_resamples": settings.n_resamples,
        "ci95": {
            **{name: _ci(results[name]) for name in _area_metrics(settings)},
            "mae_at_coverage": {
                key: None if r.point_estimate is None else _ci(r) for key, r in mae.items()
            },
        },
        "drop_rate": {
            "mae_at_coverage": {
                key: 1.0 if r.point_estimate is None else r.drop_rate for key, r in mae.items()
            }
        },
    }


def variant_metrics(items: Sequence[ItemPrediction], settings: SelectiveSettings) -> dict[str, Any]:
    """The per-variant block of the artifact for one input."""
    curve = compute_risk_coverage_curve(items, loss=settings.loss)
    return {
        **_point_metrics(items, settings),
        "mae_at_coverage": _mae_grid(items, settings),
        "bootstrap": _bootstrap_block(items, settings),
        "curve": {
            "coverage": list(curve.coverage),
            "selective_risk": list(curve.selective_risk),
            "generalized_risk": list(curve.generalized_risk),
            "threshold": list(curve.threshold),
        },
    }


def _all_metrics(settings: SelectiveSettings) -> dict[str, SelectiveMetric]:
    """Area metrics under their artifact names, MAE@c under 'mae:<c>'."""
    mae = {f"mae:{key}": metric for key, metric in _mae_metrics(settings).items()}
    return {**_area_metrics(settings), **mae}


def _mae_delta(result: BootstrapDeltaResult) -> dict[str, Any]:
    # As for a single run: no interval around an undefined point estimate.
    undefined = result.delta_point_estimate is None
    return {
        "delta": result.delta_point_estimate,
        "ci95": None if undefined else _ci(result),
        "drop_rate": result.drop_rate,
    }


def variant_deltas(
    left: Sequence[ItemPrediction], right: Sequence[ItemPrediction], settings: SelectiveSettings
) -> dict[str, Any]:
    """Paired deltas (right - left) with bootstrap CIs for one variant."""
    results = paired_bootstrap_deltas_by_participant(
        left,
        right,
        metrics=_all_metrics(settings),
        n_resamples=settings.n_resamples,
        seed=settings.seed,
    )
    deltas: dict[str, Any] = {
        name: {"delta": results[name].delta_point_estimate, "ci95": _ci(results[name])}
        for name in _area_metrics(settings)
    }
    deltas["mae_at_coverage"] = {
        key: _mae_delta(results[f"mae:{key}"]) for key in _mae_metrics(settings)
    }
    return deltas


# --------------------------------------------------------------------------- artifact


def parse(files: Files, options: Options) -> list[ParsedRun]:
    """The ``run`` file(s) in their modes, after a dry run without the bootstrap (the
    signals the confidence variants need and the participant sets are checked now)."""
    inputs = list(files["run"])
    if len(inputs) == 1 and options.second_mode:
        inputs = inputs * 2
    modes = [options.mode, options.second_mode or options.mode]
    runs = [
        parse_run(item.data, file=item.name, mode=mode)
        for item, mode in zip(inputs, modes, strict=False)
    ]
    compute(runs, replace(options, bootstrap_resamples=0))
    return runs


def compute(runs: Sequence[ParsedRun], options: Options) -> dict[str, Any]:
    """The metrics artifact of one run, or of two runs with their paired comparison
    (delta = right - left, i.e. runs[1] - runs[0])."""
    settings = options.settings
    if len(runs) not in (1, 2):
        raise ValueError(f"expected one or two runs, got {len(runs)}")
    analysis_ids = _analysis_ids(runs, settings)
    variants: dict[str, Any] = {}
    deltas: dict[str, Any] = {}
    for variant in settings.variants:
        items = [
            run_items(
                run, variant=variant, calibration=settings.calibration, participant_ids=analysis_ids
            )
            for run in runs
        ]
        metrics = [variant_metrics(run_items_, settings) for run_items_ in items]
        if len(runs) == 1:
            variants[variant.name] = metrics[0]
        else:
            variants[variant.name] = {f"input_{i}": m for i, m in enumerate(metrics)}
            deltas[variant.name] = variant_deltas(items[0], items[1], settings)
    return {
        "schema_version": SCHEMA_VERSION,
        "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "inputs": [
            {"path": run.file, "run_id": run.run_id, "git_commit": run.git_commit, "mode": run.mode}
            for run in runs
        ],
        "population": _population(runs, analysis_ids),
        "loss": {
            "name": settings.loss,
            "definition": LOSS_DEFINITIONS[settings.loss],
            "raw_multiplier": LOSS_RAW_MULTIPLIERS[settings.loss],
        },
        "confidence_variants": variants,
        "comparison": _comparison(runs, analysis_ids, settings, deltas),
    }


def _analysis_ids(runs: Sequence[ParsedRun], settings: SelectiveSettings) -> frozenset[int]:
    """Participants the metrics cover: the successful ones (in both runs when paired)."""
    if len(runs) == 1:
        ids = runs[0].included_ids
    else:
        left, right = runs
        if left.all_ids != right.all_ids and not settings.intersection_only:
            raise InputError(
                right.file,
                "participants",
                f"participant set differs from {left.file} "
                f"(only left: {sorted(left.all_ids - right.all_ids)}, "
                f"only right: {sorted(right.all_ids - left.all_ids)}); "
                "set intersection_only to compare the overlap",
            )
        ids = left.included_ids & right.included_ids
    if not ids:
        raise InputError(
            runs[-1].file, "participants", "no participant with success=true to evaluate"
        )
    return ids


def _predicted_count(run: ParsedRun, ids: frozenset[int]) -> int:
    return sum(
        1
        for p in run.participants
        if p.participant_id in ids and p.success
        for pred in p.predicted
        if pred is not None
    )


def _population(runs: Sequence[ParsedRun], ids: frozenset[int]) -> dict[str, Any]:
    items_total = len(ids) * len(PHQ8_ITEMS)
    predicted = [_predicted_count(run, ids) for run in runs]
    if len(runs) == 1:
        failed = len(runs[0].failed_ids)
        total = len(ids) + failed
        items_predicted: Any = predicted[0]
        cmax: Any = predicted[0] / items_total
    else:
        total = len(runs[0].all_ids & runs[1].all_ids)
        failed = total - len(ids)
        # Two inputs: one value each, keyed like the per-variant metrics.
        items_predicted = {f"input_{i}": n for i, n in enumerate(predicted)}
        cmax = {f"input_{i}": n / items_total for i, n in enumerate(predicted)}
    return {
        "participants_included": len(ids),
        "participants_failed": failed,
        "participants_total": total,
        "items_total": items_total,
        "items_predicted": items_predicted,
        "cmax": cmax,
    }


def _comparison(
    runs: Sequence[ParsedRun],
    ids: frozenset[int],
    settings: SelectiveSettings,
    deltas: dict[str, Any],
) -> dict[str, Any]:
    paired = len(runs) == 2
    comparison: dict[str, Any] = {
        "enabled": paired,
        "intersection_only": settings.intersection_only,
        "deltas": deltas if paired else None,
    }
    if paired:
        left, right = runs
        overlap = left.all_ids & right.all_ids
        comparison.update(
            participants_left_only=len(left.all_ids - right.all_ids),
            participants_right_only=len(right.all_ids - left.all_ids),
            participants_overlap_total=len(overlap),
            participants_overlap_included=len(ids),
            participants_failed_left=len(overlap & left.failed_ids),
            participants_failed_right=len(overlap & right.failed_ids),
        )
    return comparison


def _ci_text(ci: Sequence[float] | None) -> str:
    return f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""


def report(artifact: Mapping[str, Any]) -> str:
    """Population, then AURC / AUGRC / Cmax per confidence variant (and paired deltas)."""
    population = artifact["population"]
    lines = [
        f"SELECTIVE PREDICTION (loss {artifact['loss']['name']}; "
        f"{population['participants_included']} participants, "
        f"{population['participants_failed']} failed, {population['items_total']} items)"
    ]
    for name, block in artifact["confidence_variants"].items():
        inputs = block if "input_0" in block else {"": block}
        for key, metrics in inputs.items():
            ci = (metrics.get("bootstrap") or {}).get("ci95", {})
            label = f"{name} {key}".strip()
            lines.append(
                f"{label}: AURC {metrics['aurc_full']:.4f}{_ci_text(ci.get('aurc_full'))}  "
                f"AUGRC {metrics['augrc_full']:.4f}{_ci_text(ci.get('augrc_full'))}  "
                f"Cmax {metrics['cmax']:.4f}{_ci_text(ci.get('cmax'))}"
            )
    for name, deltas in (artifact["comparison"].get("deltas") or {}).items():
        lines.append(
            f"{name} delta (input_1 - input_0): "
            + "  ".join(
                f"{metric} {deltas[metric]['delta']:+.4f}{_ci_text(deltas[metric]['ci95'])}"
                for metric in ("aurc_full", "augrc_full", "cmax")
                if deltas[metric]["delta"] is not None
            )
        )
    return "\n".join(lines)
