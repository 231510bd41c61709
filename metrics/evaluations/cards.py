"""Card contexts of the imported-evaluation families: artifact dict → template context.

Each family's card template (``templates/metrics/cards/family_<name>.html``) receives the dict
its function here returns as ``card``. Figures are formatted here (the artifact JSON, which
every card links to, keeps the full-precision numbers); plots are inline SVG from
`metrics.plots`, each with its numbers in a table next to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from metrics import plots

NA = "n/a"


# --- formatting ------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 3, *, signed: bool = False) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return NA
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", "−")


def fmt_ci(ci: Sequence[float] | None, digits: int = 3, *, signed: bool = False) -> str:
    if not ci or len(ci) != 2:
        return ""
    return f"[{fmt(ci[0], digits, signed=signed)}, {fmt(ci[1], digits, signed=signed)}]"


def fmt_pct(value: Any) -> str:
    return NA if value is None else f"{value * 100:.1f}%"


def _svg(markup: str) -> SafeString:
    # plots.* escape every text they emit; the markup is safe to insert.
    return mark_safe(markup)


def _cell(value: Any, ci: Sequence[float] | None = None, *, signed: bool = False) -> dict:
    return {"value": fmt(value, signed=signed), "ci": fmt_ci(ci, signed=signed)}


# --- selective prediction --------------------------------------------------------------------

SELECTIVE_HEADLINE = (
    ("aurc_full", "AURC"),
    ("augrc_full", "AUGRC"),
    ("aurc_at_c", "AURC@c"),
    ("augrc_at_c", "AUGRC@c"),
    ("cmax", "Cmax"),
)


def _point(metrics: Mapping[str, Any], key: str) -> Any:
    value = metrics.get(key)
    return value.get("value") if isinstance(value, Mapping) else value


def _per_input(block: Mapping[str, Any], n_inputs: int) -> list[Mapping[str, Any]]:
    if n_inputs == 1:
        return [block]
    return [block[f"input_{index}"] for index in range(n_inputs)]


def _selective_headline(
    metrics: list[Mapping[str, Any]], deltas: Mapping[str, Any] | None
) -> list[dict]:
    rows = []
    for key, label in SELECTIVE_HEADLINE:
        cells = [
            _cell(_point(m, key), ((m.get("bootstrap") or {}).get("ci95") or {}).get(key))
            for m in metrics
        ]
        delta = None
        if deltas is not None:
            delta = _cell(deltas[key]["delta"], deltas[key]["ci95"], signed=True)
        rows.append({"key": key, "label": label, "cells": cells, "delta": delta})
    return rows


def _selective_mae(metrics: list[Mapping[str, Any]], deltas: Mapping[str, Any] | None) -> list:
    rows = []
    for key in metrics[0].get("mae_at_coverage", {}):
        cells = []
        for m in metrics:
            point = m["mae_at_coverage"].get(key)
            cis = ((m.get("bootstrap") or {}).get("ci95") or {}).get("mae_at_coverage", {})
            cell = _cell(point["value"] if point else None, cis.get(key))
            cell["achieved"] = fmt(point["achieved"], 3) if point else NA
            cells.append(cell)
        delta = None
        if deltas is not None:
            item = deltas["mae_at_coverage"][key]
            delta = _cell(item["delta"], item["ci95"], signed=True)
        rows.append({"coverage": key, "cells": cells, "delta": delta})
    return rows


def _input_labels(inputs: Sequence[Mapping[str, Any]]) -> list[str]:
    labels = [item.get("mode") or item.get("path") or f"input {i}" for i, item in enumerate(inputs)]
    if len(set(labels)) < len(labels):
        labels = [f"{label} ({i + 1})" for i, label in enumerate(labels)]
    return labels


def _curve_series(variants: list[dict], input_labels: list[str]) -> list[dict]:
    series = []
    for variant in variants:
        for label, metrics in zip(input_labels, variant["metrics"], strict=True):
            curve = metrics["curve"]
            name = variant["name"] if len(input_labels) == 1 else f"{variant['name']} · {label}"
            points = list(zip(curve["coverage"], curve["selective_risk"], strict=True))
            rows = [
                {
                    "coverage": fmt(c),
                    "risk": fmt(r, 4),
                    "generalized": fmt(g, 4),
                    "threshold": fmt(t, 4),
                }
                for c, r, g, t in zip(
                    curve["coverage"],
                    curve["selective_risk"],
                    curve["generalized_risk"],
                    curve["threshold"],
                    strict=True,
                )
            ]
            series.append({"label": name, "points": points, "rows": rows})
    return series


def selective_card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    inputs = artifact["inputs"]
    comparison = artifact["comparison"]
    paired = bool(comparison.get("enabled"))
    labels = _input_labels(inputs)
    variants = []
    for name, block in artifact["confidence_variants"].items():
        metrics = _per_input(block, len(inputs))
        deltas = (comparison.get("deltas") or {}).get(name) if paired else None
        variants.append(
            {
                "name": name,
                "metrics": metrics,
                "headline": _selective_headline(metrics, deltas),
                "mae": _selective_mae(metrics, deltas),
                "excess": [
                    {
                        "label": label,
                        "eaurc": fmt(m.get("eaurc"), 4),
                        "aurc_optimal": fmt(m.get("aurc_optimal"), 4),
                        "aurc_achievable": fmt(m.get("aurc_achievable"), 4),
                    }
                    for label, m in zip(labels, metrics, strict=True)
                ],
                "bootstrap": metrics[0].get("bootstrap") or {},
            }
        )
    series = _curve_series(variants, labels)
    area = variants[0]["metrics"][0].get("aurc_at_c", {}) if variants else {}
    return {
        "paired": paired,
        "inputs": inputs,
        "input_labels": labels,
        "population": artifact["population"],
        "loss": artifact["loss"],
        "area_coverage": fmt(area.get("requested"), 2),
        "variants": variants,
        "comparison": comparison,
        "curve_svg": _svg(
            plots.line_plot(
                [{"label": s["label"], "points": s["points"]} for s in series],
                "coverage",
                f"selective risk ({artifact['loss']['name']})",
                x_range=(0.0, 1.0),
                title="Risk–coverage curve",
            )
        ),
        "curves": series,
    }


# --- agreement -------------------------------------------------------------------------------


def _agreement_studies(artifact: Mapping[str, Any]) -> list[dict]:
    main, auxiliary = artifact["main"], artifact["auxiliary"]
    pas = main["pas_raw"].get("per_study") or {}
    ecs = main["ecs"].get("per_study") or {}
    pas_norm = auxiliary["pas_norm"].get("per_study") or {}
    strict = auxiliary["ecs_strict"].get("per_study") or {}
    rows = []
    for study in sorted(set(pas) | set(ecs)):
        pas_row, ecs_row = pas.get(study) or {}, ecs.get(study) or {}
        rows.append(
            {
                "study_id": study,
                "pas_raw": fmt(pas_row.get("value")),
                "n_findings": pas_row.get("n_findings", 0),
                "n_tests": pas_row.get("n_tests", 0),
                "ecs": fmt(ecs_row.get("value")),
                "n_ecs_tests": ecs_row.get("n_tests", 0),
                "pas_norm": fmt(pas_norm.get(study)),
                "ecs_strict": fmt(strict.get(study)),
            }
        )
    return rows


def agreement_card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    main, auxiliary = artifact["main"], artifact["auxiliary"]
    scatter = artifact.get("scatter") or []
    domains = main["ecs"].get("per_domain") or {}
    return {
        "pas_raw": fmt(main["pas_raw"].get("overall")),
        "n_studies": main["pas_raw"].get("n_studies"),
        "ecs": fmt(main["ecs"]["overall"].get("value")),
        "ecs_n": main["ecs"]["overall"].get("n_tests"),
        "ecs_measure": main["ecs"].get("measure", ""),
        "domains": [
            {"name": name, "value": fmt(row.get("value")), "n": row.get("n_tests")}
            for name, row in sorted(domains.items())
        ],
        "pas_norm": fmt(auxiliary["pas_norm"].get("overall")),
        "ecs_strict": fmt(auxiliary["ecs_strict"].get("overall")),
        "ecs_pearson": fmt((auxiliary.get("ecs_pearson") or {}).get("overall")),
        "studies": _agreement_studies(artifact),
        "counts": artifact.get("counts", {}),
        "scatter_svg": _svg(
            plots.scatter_plot(
                [
                    {
                        "x": p.get("human_d"),
                        "y": p.get("agent_d"),
                        "size": p.get("weight"),
                        "label": f"{p.get('study_id')} {p.get('finding_id')}",
                    }
                    for p in scatter
                ],
                "human effect size (d)",
                "agent effect size (d)",
                identity_line=True,
                title="Human vs agent effect sizes (dot area: ECS weight)",
            )
        ),
        "points": [
            {
                "study_id": p.get("study_id"),
                "finding_id": p.get("finding_id"),
                "test_name": p.get("test_name") or "",
                "human_d": fmt(p.get("human_d")),
                "agent_d": fmt(p.get("agent_d")),
                "weight": fmt(p.get("weight")),
            }
            for p in scatter
        ],
    }


# --- verdicts --------------------------------------------------------------------------------


def _verdict_notes(artifact: Mapping[str, Any]) -> dict[str, str]:
    evidence = artifact["details"]["evidence_details"]
    judgement = artifact["details"].get("judgement_details") or {}
    consistency = artifact["details"].get("consistency_details") or {}
    matched = evidence["total_matched"]
    return {
        "auprc": "ranking quality (ordinal)",
        "macro_f1": "classification quality",
        "evidence_precision": f"{matched}/{evidence['total_claimed']} claimed exist in GT",
        "evidence_recall": f"{matched}/{evidence['total_gt_evidence']} GT evidences found",
        "snippet_validity": (
            f"{evidence['valid_snippets']}/{evidence['total_snippets']} quotes match source"
        ),
        "judgement_accuracy": (
            f"{judgement.get('correct', 0)}/{judgement.get('total', 0)} fields correct"
        ),
        "verdict_consistency": (
            f"{consistency.get('consistent', 0)}/{consistency.get('total', 0)} "
            "evidence+rule→verdict"
        ),
    }


VERDICT_METRICS = (
    ("auprc", "AUPRC", "Final quality"),
    ("macro_f1", "Macro F1", "Final quality"),
    ("evidence_precision", "Evidence precision", "Evidence quality"),
    ("evidence_recall", "Evidence recall", "Evidence quality"),
    ("snippet_validity", "Snippet validity", "Evidence quality"),
    ("judgement_accuracy", "Judgement accuracy", "Reasoning quality"),
    ("verdict_consistency", "Verdict consistency", "Reasoning quality"),
)


def verdicts_card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    notes = _verdict_notes(artifact)
    judgement = artifact["details"].get("judgement_details") or {}
    check = artifact["details"].get("ground_truth_check") or {}
    return {
        "metrics": [
            {
                "key": key,
                "label": label,
                "tier": tier,
                "value": fmt_pct(artifact.get(key)),
                "note": notes[key],
            }
            for key, label, tier in VERDICT_METRICS
        ],
        "run_id": artifact.get("run_id"),
        "model": artifact.get("model"),
        "policy_id": artifact.get("policy_id"),
        "method": artifact.get("method"),
        "n_samples": artifact.get("n_samples"),
        "n_structured": artifact.get("n_structured"),
        "n_with_gt": artifact.get("n_with_gt"),
        "fields": [
            {**row, "field": name, "accuracy": fmt_pct(row.get("accuracy"))}
            for name, row in (judgement.get("per_field") or {}).items()
        ],
        "gt_check": check,
        "fields_svg": _field_accuracy_svg(judgement.get("per_field") or {}),
        "confusion": _verdict_confusion(artifact["details"].get("verdict_confusion")),
    }


def _verdict_confusion(confusion: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """True against predicted verdict as a heatmap and a table whose cells name their samples;
    None for an artifact stored before the samples' verdicts were kept."""
    if not confusion or not confusion.get("per_sample"):
        return None
    truth, predicted = confusion["truth_labels"], confusion["predicted_labels"]
    samples: dict[tuple[str, str], list[str]] = {}
    for sample in confusion["per_sample"]:
        samples.setdefault((sample["truth"], sample["predicted"]), []).append(sample["business_id"])
    rows = [
        {
            "label": name,
            "cells": [
                {"count": count, "samples": samples.get((name, column), []), "hit": name == column}
                for column, count in zip(predicted, counts, strict=True)
            ],
        }
        for name, counts in zip(truth, confusion["matrix"], strict=True)
    ]
    svg = plots.heatmap(
        truth,
        predicted,
        confusion["matrix"],
        x_label="predicted verdict",
        y_label="true verdict",
        title="Verdicts: true against predicted",
    )
    return {"columns": predicted, "rows": rows, "svg": _svg(svg)}


def _field_accuracy_svg(per_field: Mapping[str, Any]) -> SafeString:
    """Judgement accuracy per field as bars (the table beside it has the counts)."""
    if not per_field:
        return _svg("")
    names = list(per_field)
    values = [per_field[name].get("accuracy") for name in names]
    bars = {"label": "Judgement accuracy", "values": values}
    return _svg(plots.bar_plot(names, [bars], "Accuracy", x_label="Field", height=240))


# --- reasoning -------------------------------------------------------------------------------

REASONING_FIGURES = (
    ("faithfulness_gap", "Faithfulness gap", "n_samples", True),
    ("acc_cot", "Accuracy, chain of thought", "n_samples", False),
    ("acc_early", "Accuracy, early answer", "n_samples", False),
    ("step_f1", "Step-F1", "n_step_f1_samples", False),
    ("silent_bias_rate", "Silent bias rate", "n_biased", False),
)


def reasoning_card(artifact: Mapping[str, Any]) -> dict[str, Any]:
    cis = artifact.get("ci") or {}
    figures = [
        {
            "key": key,
            "label": label,
            "n": artifact.get(n_key),
            **_cell(artifact.get(key), cis.get(key), signed=signed),
        }
        for key, label, n_key, signed in REASONING_FIGURES
        if key != "silent_bias_rate" or artifact.get("silent_bias_rate") is not None
    ]
    return {
        "model_name": artifact.get("model_name"),
        "figures": figures,
        "has_bias": artifact.get("silent_bias_rate") is not None,
        "artifact": artifact,
        "options": artifact.get("options") or {},
        "vignettes": [
            {**row, "step_f1_text": fmt(row.get("step_f1"))}
            for row in artifact.get("per_vignette") or []
        ],
        "accuracy_svg": _mode_accuracy_svg(artifact),
        "step_f1_svg": _step_f1_svg(artifact.get("per_vignette") or []),
    }


def _mode_accuracy_svg(artifact: Mapping[str, Any]) -> SafeString:
    """Accuracy with chain of thought and of the early answer, each with its 95% CI."""
    cis = artifact.get("ci") or {}
    keys = ("acc_cot", "acc_early")
    bars = {
        "label": "Accuracy",
        "values": [artifact.get(key) for key in keys],
        "lows": [(cis.get(key) or [None, None])[0] for key in keys],
        "highs": [(cis.get(key) or [None, None])[1] for key in keys],
    }
    categories = ["With chain of thought", "Early answer"]
    return _svg(plots.bar_plot(categories, [bars], "Accuracy (95% CI)", height=240))


STEP_F1_BINS = 5


def _step_f1_svg(vignettes: Sequence[Mapping[str, Any]]) -> SafeString:
    """How the per-vignette Step-F1 values spread: counts in five bins of width 0.2."""
    scores = [row["step_f1"] for row in vignettes if isinstance(row.get("step_f1"), int | float)]
    if not scores:
        return _svg("")
    counts = [0] * STEP_F1_BINS
    for score in scores:
        counts[min(int(score * STEP_F1_BINS), STEP_F1_BINS - 1)] += 1
    labels = [f"{i / STEP_F1_BINS:.1f}–{(i + 1) / STEP_F1_BINS:.1f}" for i in range(STEP_F1_BINS)]
    bars = {"label": "Vignettes", "values": counts}
    return _svg(
        plots.bar_plot(
            labels, [bars], "Vignettes", x_label="Step-F1", y_range=(0, max(counts)), height=240
        )
    )
