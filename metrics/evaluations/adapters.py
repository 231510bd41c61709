"""Adapters between the registry's uniform calls and each pure family module.

parse(files, options) -> parsed  (raises InputError naming file, row/key and the problem)
compute(parsed, options) -> artifact (JSON-ready dict)
report(artifact) -> str         (the console output of the management commands)

Option declarations take their defaults from the family modules, so the defaults have one
source. Where a family only finds some input problems while computing (signals a confidence
variant needs, participant sets of a paired run, verdicts unknown to the policy), parse does a
cheap dry run (no bootstrap) so a bad upload is refused before anything is stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from metrics.evaluations.base import Option
from metrics.families.agreement import run as agreement_run
from metrics.families.reasoning import STRATEGIES
from metrics.families.reasoning import run as reasoning_run
from metrics.families.selective import run as selective_run
from metrics.families.verdicts import run as verdicts_run
from metrics.families.verdicts.policy import UnknownPolicyError, load_policy

if TYPE_CHECKING:
    from metrics.evaluations.base import InputFile

MAX_RESAMPLES = 100_000


def _option(*args: Any, **kwargs: Any) -> Option:
    return Option(*args, **kwargs)


def _only(files: Mapping[str, Sequence[InputFile]]) -> dict[str, bytes]:
    """{role: bytes} for families taking one file per role."""
    return {role: items[0].data for role, items in files.items() if items}


# --- selective prediction --------------------------------------------------------------------

_SELECTIVE = selective_run.SELECTIVE_OPTIONS
_PARSE_ONLY = ("mode", "second_mode")

SELECTIVE_REGISTRY_OPTIONS = (
    _option(
        "mode",
        "str",
        _SELECTIVE["mode"],
        "Experiment mode of the (first) run, e.g. few_shot; needed when a file holds several.",
    ),
    _option(
        "second_mode",
        "str",
        None,
        "Mode of the second input; with one file, that file is read again in this mode and "
        "the two modes are compared (paired deltas).",
    ),
    _option(
        "loss",
        "choice",
        _SELECTIVE["loss"],
        "Item loss.",
        choices=tuple(selective_run.LOSS_DEFINITIONS),
    ),
    _option(
        "confidence_variants",
        "str_list",
        list(_SELECTIVE["confidence_variants"]),
        "Confidence signals ranking the items (comma-separated), e.g. llm, token_msp, "
        "secondary:llm+token_msp:average.",
    ),
    _option(
        "bootstrap_resamples",
        "int",
        _SELECTIVE["bootstrap_resamples"],
        "Participant-level bootstrap resamples for the 95% CIs (0: no CIs).",
        minimum=0,
        maximum=MAX_RESAMPLES,
    ),
    _option("seed", "int", _SELECTIVE["seed"], "Bootstrap seed.", minimum=0, maximum=2**32 - 1),
    _option(
        "coverage_grid",
        "float_list",
        list(_SELECTIVE["coverage_grid"]),
        "Coverages of the MAE@coverage table.",
    ),
    _option(
        "area_coverage",
        "float",
        _SELECTIVE["area_coverage"],
        "Coverage up to which the truncated AURC/AUGRC are integrated.",
    ),
    _option(
        "intersection_only",
        "bool",
        _SELECTIVE["intersection_only"],
        "Paired runs: compare only the participants both runs hold.",
    ),
)


def _selective_family_options(options: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in options.items() if key not in _PARSE_ONLY}


def selective_check_options(options: Mapping[str, Any]) -> None:
    selective_run.resolve_options(_selective_family_options(options))


def selective_parse(
    files: Mapping[str, Sequence[InputFile]], options: Mapping[str, Any]
) -> list[selective_run.ParsedRun]:
    inputs = list(files["run"])
    second_mode = options.get("second_mode")
    if len(inputs) == 1 and second_mode:
        inputs = inputs * 2
    modes = [options.get("mode"), second_mode or options.get("mode")]
    runs = [
        selective_run.parse_run(item.data, file=item.name, mode=mode)
        for item, mode in zip(inputs, modes, strict=False)
    ]
    # Dry run without the bootstrap: signals and participant sets are checked now.
    selective_compute(runs, {**options, "bootstrap_resamples": 0})
    return runs


def selective_compute(
    runs: list[selective_run.ParsedRun], options: Mapping[str, Any]
) -> dict[str, Any]:
    return selective_run.compute_selective_artifact(
        runs, options=_selective_family_options(options)
    )


def _ci_text(ci: Sequence[float] | None) -> str:
    return f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""


def selective_report(artifact: Mapping[str, Any]) -> str:
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


# --- agreement -------------------------------------------------------------------------------

_AGREEMENT = agreement_run.AGREEMENT_OPTIONS

AGREEMENT_REGISTRY_OPTIONS = (
    _option(
        "study_groups",
        "mapping",
        _AGREEMENT["study_groups"],
        'Per-domain ECS groups as JSON, e.g. {"Cognition": ["study_001"]}; empty: the '
        "Domain column.",
    ),
    _option(
        "composite_finding_ids",
        "bool",
        _AGREEMENT["composite_finding_ids"],
        "Identify a finding by (Sub_Study_ID, Finding_ID).",
    ),
)


def agreement_check_options(options: Mapping[str, Any]) -> None:
    agreement_run.resolve_options(options)


def agreement_parse(
    files: Mapping[str, Sequence[InputFile]], options: Mapping[str, Any]
) -> list[dict[str, Any]]:
    item = files["tests"][0]
    return agreement_run.parse_tests(item.data, file=item.name)


def agreement_compute(tests: list[dict[str, Any]], options: Mapping[str, Any]) -> dict[str, Any]:
    return agreement_run.compute_agreement_artifact(tests, options=options)


def _figure(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def agreement_report(artifact: Mapping[str, Any]) -> str:
    main, auxiliary, counts = artifact["main"], artifact["auxiliary"], artifact["counts"]
    return "\n".join(
        [
            f"REPLICATION AGREEMENT ({counts['n_tests']} tests, {counts['n_findings']} "
            f"findings, {counts['n_studies']} studies)",
            f"Main:      PAS (raw) {_figure(main['pas_raw']['overall'])}   "
            f"ECS (CCC) {_figure(main['ecs']['overall']['value'])} "
            f"(n={main['ecs']['overall']['n_tests']})",
            f"Auxiliary: PAS (normalised) {_figure(auxiliary['pas_norm']['overall'])}   "
            f"ECS_Strict {_figure(auxiliary['ecs_strict']['overall'])}",
        ]
    )


# --- verdicts --------------------------------------------------------------------------------

VERDICT_REGISTRY_OPTIONS = (
    _option(
        "policy_id",
        "str",
        verdicts_run.VERDICT_OPTIONS["policy_id"],
        "Scoring policy, e.g. V2 or G1_allergy_V2; empty: the results file's policy_id.",
    ),
    _option(
        "method",
        "str",
        verdicts_run.VERDICT_OPTIONS["method"],
        "Method label; empty: the results file's method.",
    ),
)


def verdicts_check_options(options: Mapping[str, Any]) -> None:
    if options.get("policy_id"):
        try:
            load_policy(options["policy_id"])
        except UnknownPolicyError as exc:
            raise ValueError(f"option 'policy_id': {exc}") from exc


def verdicts_parse(
    files: Mapping[str, Sequence[InputFile]], options: Mapping[str, Any]
) -> dict[str, Any]:
    parsed = verdicts_run.parse_verdict_inputs(_only(files))
    # Dry run: ground-truth verdicts unknown to the policy are input errors too.
    verdicts_compute(parsed, options)
    return parsed


def verdicts_compute(parsed: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    return verdicts_run.compute_verdict_artifact(parsed, options=options)


def verdicts_report(artifact: Mapping[str, Any]) -> str:
    return verdicts_run.format_console_table(artifact)


# --- reasoning -------------------------------------------------------------------------------

_REASONING = reasoning_run.REASONING_OPTIONS

REASONING_REGISTRY_OPTIONS = (
    _option(
        "step_threshold",
        "float",
        _REASONING["step_threshold"],
        "Dice overlap at which a reasoning step matches a gold step, in (0, 1].",
        minimum=0.0,
        maximum=1.0,
    ),
    _option(
        "strategy",
        "choice",
        _REASONING["strategy"],
        "Step matching strategy.",
        choices=tuple(STRATEGIES),
    ),
    _option(
        "bootstrap_resamples",
        "int",
        _REASONING["bootstrap_resamples"],
        "Bootstrap resamples for the 95% CIs.",
        minimum=0,
        maximum=MAX_RESAMPLES,
    ),
    _option("seed", "int", _REASONING["seed"], "Bootstrap seed.", minimum=0, maximum=2**32 - 1),
)


def reasoning_check_options(options: Mapping[str, Any]) -> None:
    if options["step_threshold"] <= 0:
        raise ValueError("option 'step_threshold': must be in (0, 1]")


def reasoning_parse(
    files: Mapping[str, Sequence[InputFile]], options: Mapping[str, Any]
) -> dict[str, Any]:
    return reasoning_run.parse_reasoning_inputs(_only(files))


def reasoning_compute(parsed: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    return reasoning_run.compute_reasoning_artifact(parsed, options=options)


def reasoning_report(artifact: Mapping[str, Any]) -> str:
    return reasoning_run.format_reasoning_report(artifact)
