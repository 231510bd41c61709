"""The selective-prediction card: an uploaded run's artifact as the context of
``templates/metrics/cards/family_selective_prediction.html`` (headline figures with their CIs,
MAE at coverage, excess AURC, the risk–coverage plot and its numbers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formatting import NA, cell, fmt
from ..plots import line_plot

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
            cell(_point(m, key), ((m.get("bootstrap") or {}).get("ci95") or {}).get(key))
            for m in metrics
        ]
        delta = None
        if deltas is not None:
            delta = cell(deltas[key]["delta"], deltas[key]["ci95"], signed=True)
        rows.append({"key": key, "label": label, "cells": cells, "delta": delta})
    return rows


def _selective_mae(metrics: list[Mapping[str, Any]], deltas: Mapping[str, Any] | None) -> list:
    rows = []
    for key in metrics[0].get("mae_at_coverage", {}):
        cells = []
        for m in metrics:
            point = m["mae_at_coverage"].get(key)
            cis = ((m.get("bootstrap") or {}).get("ci95") or {}).get("mae_at_coverage", {})
            figure = cell(point["value"] if point else None, cis.get(key))
            figure["achieved"] = fmt(point["achieved"], 3) if point else NA
            cells.append(figure)
        delta = None
        if deltas is not None:
            item = deltas["mae_at_coverage"][key]
            delta = cell(item["delta"], item["ci95"], signed=True)
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


def card(artifact: Mapping[str, Any]) -> dict[str, Any]:
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
        "curve_svg": line_plot(
            [{"label": s["label"], "points": s["points"]} for s in series],
            "coverage",
            f"selective risk ({artifact['loss']['name']})",
            x_range=(0.0, 1.0),
            title="Risk–coverage curve",
        ),
        "curves": series,
    }
