"""The prompt-improvement loop's pages: the comparison of a baseline and a candidate (a run or a
configuration with its replicates) and the trend across prompt versions. Both read stored
results only (``metrics.engine.derived``, ``metrics.engine.trend``): workers compute them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render

from audit.models import ExtractionRun, GroundTruthSnapshot
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest
from metrics.engine import comparison as cmp
from metrics.engine.derived import comparison_read
from metrics.engine.trend import TREND_FIGURES, figure_label, trend_read
from metrics.families.extraction.experiments import DEFAULT_LEVEL, LEVELS
from metrics.families.plots import Bars, TrendPoint, bar_plot, trend_plot
from metrics.views.dashboards import table_download

LIST_LABELS = {
    "aggregate": "All entities",
    "people": "People",
    "events": "Events",
    "pair_bonds": "Pair bonds",
    "symptom": "Symptom codes",
    "anxiety": "Anxiety codes",
    "relationship": "Relationship codes",
    "functioning": "Functioning codes",
}
KIND_NAMES = {"people": "people", "events": "events", "pair_bonds": "pair bonds"}
# The figures' names under the chart's bars (the table beside it names them in full).
CHART_LABELS = {
    "aggregate": "Overall",
    "people": "People",
    "events": "Events",
    "pair_bonds": "Pair bonds",
    "symptom": "Symptom",
    "anxiety": "Anxiety",
    "relationship": "Relationship",
    "functioning": "Functioning",
    "exact_match": "Exact match",
    "cumulative": "Cum. overall",
    "cumulative_people": "Cum. people",
    "cumulative_events": "Cum. events",
    "cumulative_pair_bonds": "Cum. bonds",
}


def level_get(value: object) -> float:
    """The level asked for (80, 90, 95, 99 or 0.95...), else the default."""
    try:
        level = float(str(value))
    except ValueError:
        return DEFAULT_LEVEL
    level = level / 100 if level > 1 else level
    return next((known for known in LEVELS if abs(known - level) < 1e-9), DEFAULT_LEVEL)


def _choices() -> dict[str, Any]:
    """The pickers' runs and configurations (those with replicates), from one read of the
    runs with their configurations; ``runs_by_id`` lets the sides be found without another."""
    runs = list(
        ExtractionRun.objects.labelled("notes", "created_at", "configuration__created_at").order_by(
            "created_at"
        )
    )
    counted = Counter(run.configuration_id for run in runs)
    replicated = {
        r.configuration_id: r.configuration for r in runs if counted[r.configuration_id] > 1
    }
    configurations = [
        (f"c{c.pk}", f"{c.label} — all {counted[c.pk]} replicates")
        for c in sorted(replicated.values(), key=lambda c: (c.created_at, c.pk))
    ]
    run_choices = [(f"r{r.pk}", f"{r.label} · {r.created_at:%Y-%m-%d}") for r in runs]
    snapshots = list(GroundTruthSnapshot.objects.only("name", "created_at").order_by("-created_at"))
    return {
        "configurations": configurations,
        "run_choices": run_choices,
        "runs_by_id": {run.pk: run for run in runs},
        "snapshots": snapshots,
    }


# --- comparison -------------------------------------------------------------------------------


def _side_runs(baseline: cmp.Side, candidate: cmp.Side) -> list[tuple[str, list[ExtractionRun]]]:
    """Each side's runs (a configuration's replicates), so that each one can be opened."""
    return [("Baseline", list(baseline.runs)), ("Candidate", list(candidate.runs))]


@admin_required
def comparison(request: HtmxHttpRequest) -> HttpResponse:
    """Baseline vs candidate: every figure's difference, its interval and verdict at the level
    picked, and the statements that changed most (filtered by entity type or SARF variable)."""
    params = request.GET
    baseline_name, baseline_spec = _side_param(params, "baseline", "left")
    candidate_name, candidate_spec = _side_param(params, "candidate", "right")
    level = level_get(params.get("level", DEFAULT_LEVEL))
    context: dict[str, Any] = {
        **_choices(),
        "level": level,
        "level_text": f"{level:.0%}",
        "levels": [(lv, f"{lv:.0%}") for lv in LEVELS],
        "list_labels": LIST_LABELS,
    }
    if not baseline_spec and not candidate_spec:
        runs = context["run_choices"]
        context.update(
            picking=True,
            baseline_spec=runs[-2][0] if len(runs) > 1 else "",
            candidate_spec=runs[-1][0] if runs else "",
        )
        return render(request, "metrics/run_compare.html", context)
    try:
        known = context["runs_by_id"]
        baseline = cmp.side_get(baseline_spec or "", name=baseline_name, runs=known)
        candidate = cmp.side_get(candidate_spec or "", name=candidate_name, runs=known)
        snapshot = cmp.snapshot_get(params.get("snapshot"))
    except cmp.ComparisonInputError as exc:
        context.update(error=str(exc), baseline_spec=baseline_spec, candidate_spec=candidate_spec)
        return render(request, "metrics/run_compare.html", context, status=400)
    asked = params.get("figure") or ""
    figure = asked if asked in LIST_LABELS else "aggregate"
    direction = "better" if params.get("direction") == "better" else "worse"
    # The figures and the one list shown, not every list the comparison stores.
    stored = comparison_read(baseline, candidate, snapshot, whole=False, listed=(figure, direction))
    values = stored.values
    context.update(
        baseline=baseline,
        candidate=candidate,
        baseline_spec=baseline.spec,
        candidate_spec=candidate.spec,
        snapshot=snapshot,
        basis=cmp.basis_label(snapshot),
        stored=stored,
        side_runs=_side_runs(baseline, candidate),
        figure=figure,
        figure_text=LIST_LABELS[figure],
        direction=direction,
    )
    if values:
        rows = figure_rows(values, level)
        listed = statement_rows(values, figure, direction)
        download = _download(request, baseline, candidate, rows, listed)
        if download:
            return download
        context.update(
            c=values,
            rows=rows,
            listed=listed,
            chart=_chart(rows, level),
            query=_query(baseline, candidate, snapshot, level),
        )
    if request.htmx and request.htmx.target == "comparison-result":
        return render(request, "metrics/run_compare.html#result", context)
    return render(request, "metrics/run_compare.html", context)


def _side_param(params: Any, name: str, alias: str) -> tuple[str, str | None]:
    """A side's spec and the parameter it came in (``left``/``right`` are taken too): a
    problem names the parameter the link or the form used."""
    if params.get(name) or not params.get(alias):
        return name, params.get(name)
    return alias, params.get(alias)


def _query(baseline: cmp.Side, candidate: cmp.Side, snapshot: Any, level: float) -> str:
    basis = snapshot.pk if snapshot else "live"
    return f"baseline={baseline.spec}&candidate={candidate.spec}&snapshot={basis}&level={level}"


def _download(
    request: HtmxHttpRequest,
    baseline: cmp.Side,
    candidate: cmp.Side,
    rows: list[dict[str, Any]],
    listed: list[dict[str, Any]],
) -> HttpResponse | None:
    name = f"compare-{baseline.spec}-{candidate.spec}"
    if request.GET.get("table") == "statements":
        plain = [{k: v for k, v in row.items() if k != "changes"} for row in listed]
        return table_download(request, f"{name}-statements", plain)
    return table_download(request, name, [row["export"] for row in rows])


def figure_rows(values: dict[str, Any], level: float) -> list[dict[str, Any]]:
    """One row per figure: each side's mean and replicate range, the difference, its
    interval at ``level`` and the verdict in words."""
    rows = []
    for figure in values["figures"]:
        interval = next(
            (i for i in figure["intervals"] if abs(i["level"] - level) < 1e-9),
            {"low": None, "high": None, "verdict": "within noise"},
        )
        applicable = figure["applicable"] and figure["delta"] is not None
        verdict = interval["verdict"] if applicable else "not applicable"
        rows.append(
            {
                "key": figure["key"],
                "label": figure["label"],
                "baseline": figure["baseline"],
                "candidate": figure["candidate"],
                "delta": figure["delta"],
                "low": interval["low"],
                "high": interval["high"],
                "verdict": verdict,
                "applicable": applicable,
                "export": {
                    "figure": figure["key"],
                    "baseline": figure["baseline"]["point"],
                    "baseline_replicates": figure["baseline"]["replicates"],
                    "candidate": figure["candidate"]["point"],
                    "candidate_replicates": figure["candidate"]["replicates"],
                    "difference": figure["delta"],
                    "level": level,
                    "ci_low": interval["low"],
                    "ci_high": interval["high"],
                    "verdict": verdict,
                    "dropped_share": figure["drop_rate"],
                },
            }
        )
    return rows


def statement_rows(values: dict[str, Any], figure: str, direction: str) -> list[dict[str, Any]]:
    """The listed statements of one filter and direction, with where they are and, in words,
    what changed (for a SARF filter, only that variable's codes)."""
    details = values.get("details") or {}
    out = []
    for row in (values.get("statements") or {}).get(figure, {}).get(direction, []):
        detail = details.get(str(row["statement_id"]), {})
        changes = detail.get("changes") or {}
        out.append(
            {
                **row,
                "discussion_id": detail.get("discussion_id"),
                "order": detail.get("order"),
                "text": detail.get("text", ""),
                "changes": _change_lines(changes, figure),
            }
        )
    return out


def _change_lines(changes: dict[str, Any], figure: str) -> list[str]:
    kinds = [figure] if figure in KIND_NAMES else list(KIND_NAMES) if figure == "aggregate" else []
    lines = []
    for kind in kinds:
        part = changes.get(kind) or {}
        for key, words in (
            ("newly_missed", "newly missed"),
            ("newly_spurious", "newly spurious"),
            ("newly_matched", "newly matched"),
            ("no_longer_spurious", "no longer spurious"),
        ):
            if part.get(key):
                lines.append(f"{KIND_NAMES[kind]} {words}: " + "; ".join(map(str, part[key])))
    for flip in changes.get("sarf") or []:
        if figure in (flip["variable"], "aggregate", "events"):
            lines.append(
                f"{flip['variable']} of {flip['event']}: {flip['baseline']} → {flip['candidate']}"
                f" (ground truth {flip['gt']}; {flip['change']})"
            )
    return lines


def _chart(rows: list[dict[str, Any]], level: float) -> Any:
    shown = [r for r in rows if r["applicable"]]
    if not shown:
        return ""
    deltas = [r["delta"] for r in shown]
    reach = max([abs(v) for r in shown for v in (r["delta"], r["low"], r["high"]) if v is not None])
    bars = Bars(
        "candidate − baseline",
        tuple(deltas),
        tuple(r["low"] for r in shown),
        tuple(r["high"] for r in shown),
        level=f"{level:.0%}",
    )
    return bar_plot(
        [CHART_LABELS.get(r["key"], r["label"]) for r in shown],
        [bars],
        "difference",
        y_range=(-max(reach, 0.05) * 1.1, max(reach, 0.05) * 1.1),
        width=max(640, 96 * len(shown)),
        title=f"Differences with their {level:.0%} intervals (above 0: the candidate is better)",
    )


# --- trend ------------------------------------------------------------------------------------


@admin_required
def trend(request: HtmxHttpRequest) -> HttpResponse:
    """Each configuration's figure over its replicates in time order, with intervals, the
    replicates' range, notes, and breaks where neighbours are not comparable."""
    try:
        snapshot = cmp.snapshot_get(request.GET.get("snapshot"))
    except cmp.ComparisonInputError as exc:
        context = {**_choices(), "error": str(exc), "figures": _figure_choices()}
        return render(request, "metrics/trend.html", context, status=400)
    figure = request.GET.get("figure")
    figure = figure if figure in TREND_FIGURES else "aggregate"
    level = level_get(request.GET.get("level", DEFAULT_LEVEL))
    entries = trend_read(snapshot)
    points = trend_points(entries, figure, level)
    download = table_download(
        request, f"trend-{figure}", [{k: v for k, v in p.items() if k != "point"} for p in points]
    )
    if download:
        return download
    context = {
        **_choices(),
        "snapshot": snapshot,
        "basis": cmp.basis_label(snapshot),
        "figure": figure,
        "figures": _figure_choices(),
        "level": level,
        "level_text": f"{level:.0%}",
        "levels": [(lv, f"{lv:.0%}") for lv in LEVELS],
        "points": points,
        "updating": any(e["stored"].updating for e in entries),
        "chart": trend_plot(
            [p["point"] for p in points], figure_label(figure), level=f"{level:.0%}"
        )
        if points
        else "",
    }
    if request.htmx and request.htmx.target == "trend-result":
        return render(request, "metrics/trend.html#result", context)
    return render(request, "metrics/trend.html", context)


def _figure_choices() -> list[tuple[str, str]]:
    return [(f, figure_label(f)) for f in TREND_FIGURES]


def trend_points(entries: list[dict[str, Any]], figure: str, level: float) -> list[dict[str, Any]]:
    """One row per configuration (oldest first) with its figure, and why it is not comparable
    with the one before (unit, match settings, the discussions it was scored on)."""
    points, previous, previous_id = [], None, None
    for entry in entries:
        values = entry["stored"].values or {}
        data = (values.get("figures") or {}).get(figure) or {}
        side = data.get("side") or {}
        spread = side.get("spread") or {}
        interval: dict[str, Any] = next(
            (i for i in data.get("intervals") or [] if abs(i["level"] - level) < 1e-9), {}
        )
        reason = _break_reason(previous, values) if previous is not None and values else ""
        runs = values.get("runs") or []
        notes = "; ".join(
            f"replicate {r['replicate']}: {r['notes']}" if len(runs) > 1 else r["notes"]
            for r in runs
            if r["notes"]
        )
        configuration = entry["configuration"]
        row = {
            "configuration": configuration.pk,
            "previous_configuration": previous_id,
            "label": configuration.label,
            "replicates": len(entry["runs"]),
            "mean": side.get("point"),
            "sd": spread.get("sd"),
            "min": spread.get("min"),
            "max": spread.get("max"),
            "ci_low": interval.get("low"),
            "ci_high": interval.get("high"),
            "level": level,
            "not_comparable_with_previous": reason,
            "notes": notes,
            "updating": entry["stored"].updating,
            # A whole-discussion run has cumulative figures only: the others are not applicable.
            "applicable": figure == "cumulative" or not configuration.is_discussion_unit,
        }
        row["point"] = TrendPoint(
            label=configuration.prompt_version,
            value=row["mean"],
            low=row["ci_low"],
            high=row["ci_high"],
            spread_min=row["min"],
            spread_max=row["max"],
            note=f"{configuration.label}. {notes}".strip(),
            break_reason=reason,
        )
        points.append(row)
        previous, previous_id = values or previous, configuration.pk
    return points


def _break_reason(previous: dict[str, Any], values: dict[str, Any]) -> str:
    reasons = []
    if previous.get("unit") != values.get("unit"):
        reasons.append("different unit (statement vs whole discussion)")
    if previous.get("match_settings") != values.get("match_settings"):
        reasons.append("different match settings")
    if previous.get("discussions") != values.get("discussions"):
        reasons.append("scored on different discussions")
    return "; ".join(reasons)
