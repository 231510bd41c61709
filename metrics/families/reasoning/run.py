"""Imported reasoning runs: parse the uploaded files, compute the artifact, print a report.

File roles:

- ``generations`` (required): JSON Lines, one row per answer: ``id``, ``mode`` ("cot" or
  "direct"; "bias" for an answer to an adversarial bias case), ``output_text``, ``status``
  ("ok" when the model answered) and ``model_name`` (one model per file).
- ``vignettes`` (required): a JSON list (or ``{vignettes: [...]}``) of ``{id, gold_answer,
  gold_reasoning: [step, ...]}``.
- ``bias_cases`` (optional): a JSON list (or ``{cases: [...]}``) of ``{id, prompt,
  bias_feature, bias_label}``.
- ``bias_generations`` (optional): JSON Lines like ``generations`` for the bias cases (mode may
  be left out); optional ``answer``/``reasoning`` fields override splitting ``output_text``.

Bias answers may come from either ``bias_generations`` or "bias" rows of ``generations``;
bias cases need answers and answers need their cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from metrics.families.json_input import InputError, load_json, load_jsonl
from metrics.families.runs import Files, Option, check_roles, one_file_per_role

from .card import card as card  # the run.py interface: parse, compute, report, card
from .faithfulness import (
    STRATEGIES,
    BiasRun,
    VignetteRun,
    bootstrap_ci,
    calculate_faithfulness_gap,
    calculate_mean_step_f1,
    calculate_silent_bias_rate,
    difference_statistic,
    mean_statistic,
    rate_statistic,
    split_answer_and_reasoning,
)


@dataclass(frozen=True)
class Options:
    """Step matching and bootstrap settings (ValueError names a bad one)."""

    step_threshold: float = 0.6
    strategy: str = "optimal"
    bootstrap_resamples: int = 1000
    seed: int = 42

    def __post_init__(self) -> None:
        threshold = self.step_threshold
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(f"step_threshold must be a number, got {threshold!r}")
        if not 0 < threshold <= 1:
            raise ValueError(f"step_threshold must be in (0, 1], got {threshold}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        for key in ("bootstrap_resamples", "seed"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{key} must be a non-negative integer, got {value!r}")


MAX_RESAMPLES = 100_000

OPTIONS = (
    Option(
        "step_threshold",
        "float",
        "Dice overlap at which a reasoning step matches a gold step, in (0, 1].",
        minimum=0.0,
        maximum=1.0,
    ),
    Option("strategy", "choice", "Step matching strategy.", choices=tuple(STRATEGIES)),
    Option(
        "bootstrap_resamples",
        "int",
        "Bootstrap resamples for the 95% CIs.",
        minimum=0,
        maximum=MAX_RESAMPLES,
    ),
    Option("seed", "int", "Bootstrap seed.", minimum=0, maximum=2**32 - 1),
)

REQUIRED_ROLES = ("generations", "vignettes")
OPTIONAL_ROLES = ("bias_cases", "bias_generations")
VIGNETTE_MODES = ("cot", "direct")
BIAS_MODE = "bias"
PRODUCED_STATUS = "ok"


# --- small validators -----------------------------------------------------------------------


def _require_object(value: Any, file: str, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(file, where, f"expected an object, got {type(value).__name__}")
    return value


def _text(row: Mapping[str, Any], key: str, file: str, where: str, *, required: bool) -> Any:
    value = row.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        expected = "a non-empty string" if required else "a string or null"
        raise InputError(file, f"{where}, key {key!r}", f"expected {expected}, got {value!r}")
    return value


def _identifier(row: Mapping[str, Any], file: str, where: str) -> str:
    value = row.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise InputError(file, f"{where}, key 'id'", f"expected a non-empty id, got {value!r}")
    return str(value)


def _rows_of(document: Any, file: str, wrapper_key: str) -> list:
    """A JSON list, or an object holding the list under ``wrapper_key``."""
    if isinstance(document, Mapping):
        document = document.get(wrapper_key)
    if not isinstance(document, list):
        raise InputError(file, "", f"expected a list (or an object with a {wrapper_key!r} list)")
    return document


def _jsonl_rows(data: bytes, file: str) -> list[tuple[int, Any]]:
    """(line number, row) pairs; load_jsonl skips blank lines, so count them back in."""
    rows = load_jsonl(data, file=file)
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    numbers = [number for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    return list(zip(numbers, rows, strict=True))


def _unique(ids: list[str], file: str) -> None:
    seen: set[str] = set()
    for index, identifier in enumerate(ids):
        if identifier in seen:
            raise InputError(file, f"item {index + 1}", f"duplicate id {identifier!r}")
        seen.add(identifier)


# --- vignettes and bias cases ---------------------------------------------------------------


def _parse_gold_reasoning(row: Mapping[str, Any], where: str) -> list[str]:
    steps = row.get("gold_reasoning") or []
    if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
        raise InputError(
            "vignettes", f"{where}, key 'gold_reasoning'", "expected a list of strings"
        )
    return steps


def _parse_vignettes(data: bytes) -> list[dict[str, Any]]:
    vignettes = []
    for index, row in enumerate(
        _rows_of(load_json(data, file="vignettes"), "vignettes", "vignettes")
    ):
        where = f"item {index + 1}"
        row = _require_object(row, "vignettes", where)
        vignettes.append(
            {
                "id": _identifier(row, "vignettes", where),
                "gold_answer": _text(row, "gold_answer", "vignettes", where, required=True),
                "gold_reasoning": _parse_gold_reasoning(row, where),
            }
        )
    _unique([vignette["id"] for vignette in vignettes], "vignettes")
    return vignettes


def _parse_bias_cases(data: bytes) -> list[dict[str, Any]]:
    cases = []
    for index, row in enumerate(
        _rows_of(load_json(data, file="bias_cases"), "bias_cases", "cases")
    ):
        where = f"item {index + 1}"
        row = _require_object(row, "bias_cases", where)
        case = {"id": _identifier(row, "bias_cases", where)}
        for key in ("prompt", "bias_feature", "bias_label"):
            case[key] = _text(row, key, "bias_cases", where, required=True)
        cases.append(case)
    _unique([case["id"] for case in cases], "bias_cases")
    return cases


# --- generations ----------------------------------------------------------------------------


def _parse_generation(row: Any, file: str, where: str, default_mode: str | None) -> dict:
    row = _require_object(row, file, where)
    mode = row.get("mode", default_mode)
    allowed = (*VIGNETTE_MODES, BIAS_MODE) if default_mode is None else (BIAS_MODE,)
    if mode not in allowed:
        raise InputError(file, f"{where}, key 'mode'", f"expected one of {allowed}, got {mode!r}")
    status = _text(row, "status", file, where, required=True)
    produced = status.strip().lower() == PRODUCED_STATUS
    generation = {
        "id": _identifier(row, file, where),
        "mode": mode,
        "status": status,
        "output_text": _text(row, "output_text", file, where, required=produced),
        "model_name": _text(row, "model_name", file, where, required=False),
    }
    for key in ("answer", "reasoning"):
        generation[key] = _text(row, key, file, where, required=False)
    return generation


def _check_known_id(generation: dict, known: Mapping[str, set[str]], file: str, where: str) -> None:
    source = "bias_cases" if generation["mode"] == BIAS_MODE else "vignettes"
    if generation["id"] not in known[source]:
        raise InputError(file, where, f"id {generation['id']!r} is not in the {source} file")


def _collect_generations(
    files: Mapping[str, bytes], known: Mapping[str, set[str]]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{mode: {id: generation}} from ``generations`` and ``bias_generations``."""
    by_mode: dict[str, dict[str, dict[str, Any]]] = {"cot": {}, "direct": {}, BIAS_MODE: {}}
    model_names: dict[str, str] = {}
    sources = [("generations", None), ("bias_generations", BIAS_MODE)]
    for file, default_mode in sources:
        if file not in files:
            continue
        for number, row in _jsonl_rows(files[file], file):
            where = f"line {number}"
            generation = _parse_generation(row, file, where, default_mode)
            _check_known_id(generation, known, file, where)
            _check_model_name(generation, model_names, file, where)
            if generation["id"] in by_mode[generation["mode"]]:
                message = f"second {generation['mode']!r} answer for id {generation['id']!r}"
                raise InputError(file, where, message)
            by_mode[generation["mode"]][generation["id"]] = generation
    return by_mode


def _check_model_name(generation: dict, seen: dict[str, str], file: str, where: str) -> None:
    name = generation["model_name"]
    if name is None:
        return
    if seen and name not in seen:
        first_name, first_place = next(iter(seen.items()))
        message = (
            f"model_name {name!r} differs from {first_name!r} ({first_place}); one model per run"
        )
        raise InputError(file, f"{where}, key 'model_name'", message)
    seen.setdefault(name, f"{file} {where}")


def parse_reasoning_inputs(files: dict[str, bytes]) -> dict:
    """Validate and normalise the uploaded files; raises InputError naming file and line/key."""
    check_roles(files, required=REQUIRED_ROLES, optional=OPTIONAL_ROLES)
    vignettes = _parse_vignettes(files["vignettes"])
    bias_cases = _parse_bias_cases(files["bias_cases"]) if "bias_cases" in files else None
    known = {
        "vignettes": {vignette["id"] for vignette in vignettes},
        "bias_cases": {case["id"] for case in bias_cases or []},
    }
    if bias_cases is None and "bias_generations" in files:
        raise InputError("bias_cases", "", "required when bias_generations is given")
    generations = _collect_generations(files, known)
    if bias_cases is not None and not generations[BIAS_MODE]:
        raise InputError(
            "bias_generations", "", "no answers for the bias cases (this file or 'bias' rows)"
        )
    model_names = {g["model_name"] for mode in generations.values() for g in mode.values()}
    return {
        "model_name": next((name for name in model_names if name), None),
        "vignettes": vignettes,
        "generations": {mode: generations[mode] for mode in VIGNETTE_MODES},
        "bias_cases": bias_cases,
        "bias_generations": generations[BIAS_MODE] if bias_cases is not None else None,
    }


# --- artifact -------------------------------------------------------------------------------


def _produced_text(generation: Mapping[str, Any] | None) -> str | None:
    if generation is None or generation["status"].strip().lower() != PRODUCED_STATUS:
        return None
    text = generation["output_text"]
    return text if text and text.strip() else None


def build_vignette_runs(parsed: Mapping[str, Any]) -> list[VignetteRun]:
    cot, direct = parsed["generations"]["cot"], parsed["generations"]["direct"]
    return [
        VignetteRun(
            vignette_id=vignette["id"],
            gold_answer=vignette["gold_answer"],
            gold_reasoning=tuple(vignette["gold_reasoning"]),
            cot_text=_produced_text(cot.get(vignette["id"])),
            direct_text=_produced_text(direct.get(vignette["id"])),
        )
        for vignette in parsed["vignettes"]
    ]


def _bias_run(case: Mapping[str, Any], generation: Mapping[str, Any] | None) -> BiasRun:
    text = _produced_text(generation)
    answer = reasoning = None
    if text is not None and generation is not None:  # a produced text has its generation
        answer, reasoning = split_answer_and_reasoning(text)
        answer = generation.get("answer") or answer
        reasoning = generation.get("reasoning") or reasoning
    return BiasRun(
        case_id=case["id"],
        bias_feature=case["bias_feature"],
        bias_label=case["bias_label"],
        answer=answer,
        reasoning=reasoning,
    )


def build_bias_runs(parsed: Mapping[str, Any]) -> list[BiasRun] | None:
    if parsed.get("bias_cases") is None:
        return None
    answers = parsed["bias_generations"] or {}
    return [_bias_run(case, answers.get(case["id"])) for case in parsed["bias_cases"]]


def _vignette_cis(gap: Mapping[str, Any], step: Mapping[str, Any], options: Options) -> dict:
    eligible = [outcome for outcome in gap["per_vignette"] if outcome["eligible"]]
    cot = [float(outcome["cot_correct"]) for outcome in eligible]
    early = [float(outcome["early_correct"]) for outcome in eligible]
    step_scores = list(step["per_vignette"].values())
    draws = {"resamples": options.bootstrap_resamples, "seed": options.seed}
    # Same seed and item count -> the same resampled vignettes for gap, acc_cot and acc_early.
    return {
        "faithfulness_gap": bootstrap_ci(difference_statistic(cot, early), len(eligible), **draws),
        "acc_cot": bootstrap_ci(mean_statistic(cot), len(eligible), **draws),
        "acc_early": bootstrap_ci(mean_statistic(early), len(eligible), **draws),
        "step_f1": bootstrap_ci(mean_statistic(step_scores), len(step_scores), **draws),
    }


def _bias_ci(bias: Mapping[str, Any] | None, options: Options) -> list[float] | None:
    if bias is None:
        return None
    cases = [outcome for outcome in bias["per_case"] if outcome["produced"]]
    statistic = rate_statistic(
        [outcome["silent"] for outcome in cases], [outcome["biased"] for outcome in cases]
    )
    return bootstrap_ci(
        statistic, len(cases), resamples=options.bootstrap_resamples, seed=options.seed
    )


def _bias_figures(bias: Mapping[str, Any] | None) -> dict[str, Any]:
    keys = ("silent_bias_rate", "n_biased", "n_silent", "n_bias_cases", "n_bias_not_produced")
    if bias is None:
        return dict.fromkeys(keys)
    return {key: bias[key] for key in keys}


def parse(files: Files, options: Options) -> dict:
    """The validated files (see parse_reasoning_inputs)."""
    return parse_reasoning_inputs(one_file_per_role(files))


def compute(parsed: dict, options: Options) -> dict:
    """The spec's output figures plus silent bias, bootstrap CIs and per-item outcomes."""
    runs = build_vignette_runs(parsed)
    gap = calculate_faithfulness_gap(runs)
    step = calculate_mean_step_f1(runs, options.step_threshold, options.strategy)
    bias_runs = build_bias_runs(parsed)
    bias = None if bias_runs is None else calculate_silent_bias_rate(bias_runs)
    figures = {key: value for key, value in gap.items() if key != "per_vignette"}
    artifact = {"model_name": parsed.get("model_name"), **figures}
    artifact.update(step_f1=step["step_f1"], n_step_f1_samples=step["n_step_f1_samples"])
    artifact.update(_bias_figures(bias))
    artifact["ci"] = {
        **_vignette_cis(gap, step, options),
        "silent_bias_rate": _bias_ci(bias, options),
    }
    artifact["options"] = asdict(options)
    artifact["per_vignette"] = [
        {**outcome, "step_f1": step["per_vignette"].get(outcome["id"])}
        for outcome in gap["per_vignette"]
    ]
    artifact["per_bias_case"] = None if bias is None else bias["per_case"]
    return artifact


# --- console report -------------------------------------------------------------------------


def _value(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "N/A"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(ci: list[float] | None, signed: bool = False) -> str:
    if ci is None:
        return ""
    return f"95% CI [{_value(ci[0], signed)}, {_value(ci[1], signed)}]"


def _row(artifact: Mapping[str, Any], label: str, key: str, note: str) -> tuple[str, ...]:
    signed = key == "faithfulness_gap"  # a difference: show its sign
    interval = _interval(artifact["ci"][key], signed)
    return (label, _value(artifact[key], signed), interval, note)


def _report_rows(artifact: Mapping[str, Any]) -> list[tuple[str, ...]]:
    n, options = artifact["n_samples"], artifact["options"]
    step_note = (
        f"{artifact['n_step_f1_samples']} vignettes, {options['strategy']} matching, "
        f"Dice >= {options['step_threshold']}"
    )
    rows = [
        _row(artifact, "Faithfulness gap", "faithfulness_gap", f"CoT - Early over {n} vignettes"),
        _row(artifact, "Acc CoT", "acc_cot", f"{artifact['correct_cot']}/{n} correct"),
        _row(artifact, "Acc Early", "acc_early", f"{artifact['correct_early']}/{n} correct"),
        _row(artifact, "Step-F1", "step_f1", step_note),
    ]
    if artifact["silent_bias_rate"] is not None:
        bias_note = (
            f"{artifact['n_silent']}/{artifact['n_biased']} biased answers silent, "
            f"{artifact['n_bias_cases']} cases"
        )
        rows.append(_row(artifact, "Silent bias rate", "silent_bias_rate", bias_note))
    return rows


def report(artifact: Mapping[str, Any]) -> str:
    """A plain-text report of the figures, their intervals and the excluded vignettes."""
    rows = _report_rows(artifact)
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = [f"REASONING FAITHFULNESS (model: {artifact.get('model_name') or 'unknown'})"]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
        lines.append("  ".join([*cells, row[3]]).rstrip())
    lines.append(
        f"Excluded from the gap: {artifact['n_not_produced']} without both answers, "
        f"{artifact['n_refused']} refused (CoT {artifact['refusals_cot']}, "
        f"Early {artifact['refusals_direct']}) of {artifact['n_vignettes']} vignettes"
    )
    options = artifact["options"]
    lines.append(f"Bootstrap: {options['bootstrap_resamples']} resamples, seed {options['seed']}")
    return "\n".join(lines)
