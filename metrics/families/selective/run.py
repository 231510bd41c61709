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
``run`` files, or one read in two modes), ``compute`` and ``report``. The file itself is read in
``run_file``, the options in ``run_options`` and one variant's figures in ``run_metrics``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from metrics.families.json_input import InputError
from metrics.families.runs import Files

from .card import card as card  # the run.py interface: parse, compute, report, card
from .run_file import PHQ8_ITEMS, ParsedRun, parse_run, run_items
from .run_metrics import variant_deltas, variant_metrics
from .run_options import LOSS_DEFINITIONS, Options, SelectiveSettings
from .run_options import OPTIONS as OPTIONS

SCHEMA_VERSION = "1"
# Multiply a loss by this to get back raw score points.
LOSS_RAW_MULTIPLIERS = {"abs": 1, "abs_norm": 3}


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
