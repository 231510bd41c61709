"""What the dashboard pages show, built from stored extraction-F1 results only (their reads
are in metrics/selectors.py).

Each function works on a bounded number of rows (the system row, one run row, one page of
discussion rows) and never computes a metric, so pages render in constant time whatever the
data size. The F1 card itself is `metrics.cards.extraction_card` (shared with the audit page
and its htmx refresh); this module adds what the dashboards show around it.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote

from django.conf import settings as django_settings
from django.db.models import Max
from django.template.loader import get_template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from audit.models import LIVE_GROUND_TRUTH, ExtractionRun, GroundTruthSnapshot, RunConfiguration
from evalsite.match_settings import match_settings
from metrics.cards import card_base, extraction_card, extraction_state
from metrics.engine.recompute import results_outdated
from metrics.engine.services import CODE_VERSION, EXTRACTION
from metrics.evaluations.services import evaluation_card
from metrics.families.extraction import SARF_VARIABLES, MatchSettings
from metrics.families.payload.items import ENTITY_KINDS
from metrics.families.plots import category_line_plot, heatmap
from metrics.families.replicates import spread
from metrics.models import Evaluation, MetricResult
from metrics.registry import UPLOADED
from metrics.selectors import DISCUSSION_COUNTS, SORTS, discussion_rows, run_rows_on

log = logging.getLogger(__name__)
Scope = MetricResult.Scope
ENTITY_LABELS = {kind: kind.replace("_", " ") for kind in ENTITY_KINDS}
TREND_SERIES = {
    "aggregate_micro_f1": "Overall F1",
    "people_f1": "People",
    "events_f1": "Events",
    "pair_bonds_f1": "Pair bonds",
    "cumulative_f1": "Cumulative F1",
}


# --- runs: the trend over runs, the selected run ------------------------------------------------


def pick_run(
    runs: list[ExtractionRun], trend: list[dict[str, Any]], requested: int | None
) -> ExtractionRun | None:
    """The run asked for (?run=), else the latest run with results, else the latest run."""
    by_id = {run.pk: run for run in runs}
    if requested in by_id:
        return by_id[requested]
    with_results = [t["run_id"] for t in trend if t.get("n_statements") and t["run_id"] in by_id]
    if with_results:
        return by_id[with_results[-1]]
    return runs[0] if runs else None


def basis_label(snapshot: GroundTruthSnapshot | None) -> str:
    """What figures say beside them: "on live ground truth" or "on GT v12"."""
    return snapshot.basis_label if snapshot else LIVE_GROUND_TRUTH


def run_figures(run: ExtractionRun, row: MetricResult | None) -> dict[str, Any]:
    """A run's headline figures from its stored run row (live or on a snapshot). A
    discussion-unit run's statement figure is None: not applicable, never 0."""
    values = (row.values if row else None) or {}
    whole = run.is_discussion_unit
    return {
        "run": run,
        "whole": whole,
        "status": row.status if row else "none",
        "overall": None if whole else (values.get("system") or {}).get("aggregate_micro_f1"),
        "cumulative": (values.get("cumulative") or {}).get("aggregate_micro_f1"),
        "n_statements": values.get("n_statements") or 0,
        "n_discussions": values.get("n_discussions") or 0,
        "n_left_out": values.get("n_left_out") or 0,
    }


def runs_by_configuration(
    runs: list[ExtractionRun], rows: dict[int, MetricResult], approved: int
) -> list[dict[str, Any]]:
    """The runs grouped by configuration, the most recently run first: each replicate's figures
    and coverage of the approved statements, and per figure the replicates' mean and spread
    (min-max, SD). ``runs`` newest first, with their configurations; ``rows`` their run rows."""
    groups: dict[int, dict[str, Any]] = {}
    for run in runs:
        group = groups.setdefault(
            run.configuration_id, {"configuration": run.configuration, "replicates": []}
        )
        figures = run_figures(run, rows.get(run.pk))
        whole, covered = figures["whole"], figures["n_statements"]
        figures["coverage"] = covered / approved if approved and not whole else None
        group["replicates"].append(figures)
    for group in groups.values():
        group["replicates"].sort(key=lambda figures: figures["run"].replicate)
        group.update(configuration_spreads(group["configuration"], group["replicates"]))
    return list(groups.values())


def configuration_spreads(
    configuration: RunConfiguration, replicates: list[dict[str, Any]]
) -> dict[str, Any]:
    """A configuration's headline figures over its replicates (``run_figures`` dicts)."""
    whole = configuration.is_discussion_unit
    return {
        "whole": whole,
        "overall": None if whole else spread(f["overall"] for f in replicates),
        "cumulative": spread(f["cumulative"] for f in replicates),
    }


def replicates_of(run: ExtractionRun, runs: list[ExtractionRun]) -> dict[str, Any] | None:
    """The configuration of the shown run when it has more than one replicate: each replicate's
    figures on live ground truth (reachable from the page) and their mean and spread. ``runs``:
    every run with its configuration (read once for the page's run picker)."""
    replicates = sorted(
        (r for r in runs if r.configuration_id == run.configuration_id), key=lambda r: r.replicate
    )
    if len(replicates) < 2:
        return None
    rows = run_rows_on(None, run_ids=[r.pk for r in replicates])
    figures = [run_figures(r, rows.get(r.pk)) for r in replicates]
    return {
        "configuration": run.configuration,
        "current": run,
        "replicates": figures,
        "basis": LIVE_GROUND_TRUTH,
        **configuration_spreads(run.configuration, figures),
    }


def _trend_category(summary: dict[str, Any]) -> str:
    """A run on the trend's axis: its prompt version, and its replicate number after the first
    ("v2-examples", "v2-examples #2"); a whole-discussion run's marked "(whole)"."""
    label = re.sub(r" · replicate \d+$", "", summary["label"])
    whole = label.endswith(" · whole discussions")
    label = label.removesuffix(" · whole discussions").split(" · ")[-1]
    replicate = summary.get("replicate") or 1
    return label + (f" #{replicate}" if replicate > 1 else "") + (" (whole)" if whole else "")


def trend_plot(trend: list[dict[str, Any]]) -> SafeString:
    """F1 figures over runs, oldest first; categories are prompt versions (and replicates)."""
    categories = [_trend_category(t) for t in trend]
    series = [
        {"label": label, "values": [t.get(key) for t in trend]}
        for key, label in TREND_SERIES.items()
    ]
    svg = category_line_plot(
        categories,
        series,
        "F1",
        x_label="extraction run (prompt version), oldest first",
        title="F1 over extraction runs",
        width=560,
    )
    return mark_safe(svg)  # metrics.families.plots escapes every label


def trend_export_rows(trend: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("run_id", "label", "created_at", "status", "n_statements", "n_discussions")
    return [{k: t.get(k) for k in (*keys, *TREND_SERIES, "exact_match_rate")} for t in trend]


# --- cards ------------------------------------------------------------------------------------


def f1_card(run: ExtractionRun, *, admin: bool) -> dict[str, Any]:
    """The shared extraction-F1 card; only admins see a failure's error text."""
    card = extraction_card(run)
    if not admin:
        card["error"] = ""
    return card


def cumulative_card(run: ExtractionRun, row: MetricResult | None, *, admin: bool) -> dict:
    """Per-discussion end state (accumulated PDP, AI vs ground truth), pooled and mean."""
    values = (row.values if row else None) or {}
    state = extraction_state(row, whole=run.is_discussion_unit)
    card = {
        **card_base(row, state, reverse("metrics:cumulative_card", args=[run.pk])),
        "run": run,
        "basis": LIVE_GROUND_TRUTH,
        "cumulative": values.get("cumulative"),
        "n_discussions": values.get("n_discussions", 0),
        "n_left_out": values.get("n_left_out") or 0,
    }
    if not admin:
        card["error"] = ""
    return card


def f1_details(row: MetricResult | None, run: ExtractionRun | None = None) -> dict[str, Any]:
    """What the figures compare, and the matching rules in force when they were computed."""
    values = (row.values if row else None) or {}
    stored = row.match_settings if row else {}
    return {
        "whole": bool(run and run.is_discussion_unit),
        "basis": LIVE_GROUND_TRUTH,
        "n_statements": values.get("n_statements") or 0,
        "n_discussions": values.get("n_discussions") or 0,
        "n_left_out": values.get("n_left_out") or 0,
        "rules": match_rules(stored) if stored else [],
        "code_version": row.code_version if row else "",
        # Computed with other settings than those in force: being recomputed.
        "outdated": bool(stored) and MatchSettings.from_dict(stored) != match_settings(),
    }


SETTING_LABELS = {
    "strategy": "Assignment strategy",
    "name_similarity_threshold": "Name similarity above",
    "description_similarity_threshold": "Description similarity at least",
    "date_tolerance_days": "Date tolerance (days)",
    "approximate_date_tolerance_days": "Approximate date tolerance (days)",
    "description_weight": "Event score: description weight",
    "date_weight": "Event score: date weight",
}


def settings_in_force() -> dict[str, Any]:
    """The match settings this deployment computes with (admins' dashboard): each value, the
    environment variable that sets it, and how many stored results still await recomputing."""
    current = match_settings()
    overrides = django_settings.EXTRACTION_MATCH_SETTINGS or {}
    rows = [
        {
            "label": SETTING_LABELS.get(field, field),
            "value": getattr(current, field),
            "variable": variable,
            "overridden": field in overrides,
        }
        for variable, (field, _kind) in django_settings.EXTRACTION_MATCH_ENV.items()
    ]
    results = MetricResult.objects.filter(family=EXTRACTION)
    return {
        "rows": rows,
        "code_version": CODE_VERSION,
        # Run rows only (one per run, indexed): every run row is rewritten with the settings in
        # force when it settles, so they tell the story without scanning every statement row.
        "outdated_runs": results_outdated().filter(scope=Scope.RUN).count(),
        "recomputing": results.filter(status=MetricResult.Status.STALE).count(),
    }


def match_rules(stored: dict[str, Any]) -> list[tuple[str, str]]:
    """The stored MatchSettings as (entity, rule) sentences."""
    s = MatchSettings.from_dict(stored)
    return [
        (
            "People",
            f"match when the name similarity (name + last name) is above "
            f"{s.name_similarity_threshold:g} and their parent links agree.",
        ),
        (
            "Events",
            f"match when the kind is the same, the description similarity is at least "
            f"{s.description_similarity_threshold:g}, the dates are within "
            f"{s.date_tolerance_days} days ({s.approximate_date_tolerance_days} days for "
            f"approximate dates; a missing date matches any) and linked people agree. Score = "
            f"{s.description_weight:g} × description + {s.date_weight:g} × date similarity.",
        ),
        ("Pair bonds", "match when both people match (in either order)."),
        ("Assignment", f"{s.strategy} one-to-one assignment of the best-scoring pairs."),
    ]


def family_cards() -> list[dict[str, Any]]:
    """The latest finished evaluation of each registered metric family, as that family's card.

    Two queries whatever the number of evaluations; a family whose card fails to build is
    shown with the error instead of hiding the dashboard.
    """
    done = Evaluation.objects.filter(status=Evaluation.Status.DONE, family__in=list(UPLOADED))
    latest = done.values("family").annotate(last=Max("pk")).values("last")
    cards = []
    for evaluation in Evaluation.objects.filter(pk__in=latest).order_by("family"):
        family = UPLOADED[evaluation.family]
        item = {"family": family, "evaluation": evaluation, "template": family.card_template}
        item["url"] = _evaluation_url(evaluation.pk)
        try:
            get_template(family.card_template)
            item["card"] = evaluation_card(evaluation)
        except Exception as exc:  # a card bug must not hide the dashboard
            log.exception("card of evaluation %s failed", evaluation.pk)
            item["card"], item["error"] = None, f"{type(exc).__name__}: {exc}"
        cards.append(item)
    return cards


def _evaluation_url(pk: int) -> str:
    return reverse("metrics:evaluation_detail", args=[pk])


# --- errors: kinds, confusion matrices, event kinds ------------------------------------------


def wrong_sarf_codes(sarf: dict[str, dict[str, dict[str, int]]]) -> int:
    """Matched events whose SARF value differs, summed over the four variables."""
    return sum(
        count
        for table in sarf.values()
        for ai_value, row in table.items()
        for gt_value, count in row.items()
        if ai_value != gt_value
    )


def error_kinds(totals: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Missed / spurious entities per type and wrong SARF codes, most common first."""
    totals = totals or {}
    kinds = [
        {
            "kind": f"{entity}_{count}",
            "label": f"{word} {label}",
            "count": int(totals.get(f"{entity}_{count}") or 0),
        }
        for entity, label in ENTITY_LABELS.items()
        for count, word in (("fn", "missed"), ("fp", "spurious"))
    ]
    sarf = {
        "kind": "sarf",
        "label": "wrong SARF codes",
        "count": wrong_sarf_codes(totals.get("sarf") or {}),
    }
    kinds.append(sarf)
    return sorted(kinds, key=lambda k: -k["count"])


def _class_order(table: dict[str, dict[str, int]]) -> list[str]:
    labels = set(table) | {gt for row in table.values() for gt in row}
    return sorted(labels, key=lambda label: (label != "none", label))


def sarf_confusions(totals: dict[str, Any] | None, system: dict | None) -> list[dict]:
    """Per SARF variable: ground truth (rows) × AI (columns) counts over matched events."""
    sarf = (totals or {}).get("sarf", {})
    confusions = []
    for variable in SARF_VARIABLES:
        table = sarf.get(variable, {})
        labels = _class_order(table)
        matrix = [[table.get(ai, {}).get(gt, 0) for ai in labels] for gt in labels]
        total = sum(map(sum, matrix))
        agreed = sum(matrix[i][i] for i in range(len(labels)))
        confusions.append(
            {
                "variable": variable,
                "labels": labels,
                "matrix": matrix,
                "rows": [
                    {
                        "label": gt,
                        "counts": counts,
                        # (AI label, count, the query of the drill-down listing the
                        # statements behind an error's count; "" for agreement or none)
                        "cells": [
                            (ai, n, _drill_query(variable, gt, ai) if n and ai != gt else "")
                            for ai, n in zip(labels, counts, strict=True)
                        ],
                    }
                    for gt, counts in zip(labels, matrix, strict=True)
                ],
                "total": total,
                "agreement": agreed / total if total else None,
                "macro_f1": (system or {}).get(f"{variable}_macro_f1"),
                "svg": _heatmap(variable, labels, matrix) if total else "",
            }
        )
    return confusions


def _drill_query(variable: str, gt: str, ai: str) -> str:
    """The error drill-down's query for one confusion cell, URL-quoted as the template's
    ``urlencode`` quotes (its "&" escaped when written out)."""
    return f"variable={quote(str(variable))}&gt={quote(str(gt))}&ai={quote(str(ai))}"


def _heatmap(variable: str, labels: list[str], matrix: list[list[int]]) -> SafeString:
    svg = heatmap(
        labels,
        labels,
        matrix,
        x_label=f"AI {variable}",
        y_label=f"ground truth {variable}",
        title=f"{variable.title()}: ground truth against AI over matched events",
    )
    return mark_safe(svg)  # metrics.families.plots escapes every label


def confusion_export_rows(confusions: list[dict]) -> list[dict[str, Any]]:
    return [
        {"variable": c["variable"], "ground_truth": gt, "ai": ai, "count": c["matrix"][i][j]}
        for c in confusions
        for i, gt in enumerate(c["labels"])
        for j, ai in enumerate(c["labels"])
        if c["matrix"][i][j]
    ]


# --- per discussion ----------------------------------------------------------------------------


def sort_links(sort: str) -> list[dict[str, Any]]:
    """Table headers: a click sorts ascending, a second click descending."""
    return [
        {
            "key": key,
            "label": label,
            "next": f"-{key}" if sort == key else key,
            "active": sort.removeprefix("-") == key,
            "descending": sort.startswith("-"),
        }
        for key, label in SORTS.items()
    ]


# A discussion's F1 from fewer approved statements than this is shown as tentative.
TENTATIVE_BELOW = 5


def weakest_discussions(run: ExtractionRun, limit: int = 5) -> list[dict[str, Any]]:
    rows = [with_main_error(row) for row in discussion_rows(run, "f1").exclude(f1=None)[:limit]]
    for row in rows:
        row["tentative"] = (row.get("statement_count") or 0) < TENTATIVE_BELOW
    return rows


def with_main_error(row: dict[str, Any]) -> dict[str, Any]:
    """Adds the discussion's most frequent error kind (``main_error``: label, count)."""
    totals = {name: row.get(name) or 0 for name in DISCUSSION_COUNTS}
    totals["sarf"] = row.get("contribution__sarf") or {}
    top = error_kinds(totals)[0]
    row["main_error"] = top if top["count"] else None
    return row
