"""An uploaded run-output file: parsed and validated into participants, and their item
predictions ranked by a confidence variant.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metrics.families.calibration import CalibrationArtifact
from metrics.families.json_input import InputError, load_json

from .confidence import (
    ConfidenceVariant,
    SignalError,
    compute_confidence,
    parse_confidence_variant,
)
from .curves import (
    ItemPrediction,
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
