"""An error pattern and how often it happens: the patterns a run's errors show, and the
statements where one happens most (from the stored error index; wrong parent links from the
runs' statement results).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Q, Sum

from audit.models import Extraction, ExtractionRun, Feedback
from evalsite.api import DomainError
from metrics.engine.errors import ERROR_COUNT_KINDS, error_figure
from metrics.engine.services import EXTRACTION
from metrics.families.extraction.patterns import (
    PARENT_LINKS,
    Pattern,
    parent_link_errors,
    pattern_cells,
    pattern_parse,
    sarf_patterns,
)
from metrics.models import MetricResult, StatementError

DEFAULT_STATEMENTS = 20
MAX_STATEMENTS = 50
PARENT_CHUNK = 2000


class PacketInputError(DomainError):
    status_code = 400


class PacketNotAllowed(DomainError):
    status_code = 403


class PacketNotReady(DomainError):
    """A run's error analysis was never computed: it is being computed now."""

    status_code = 409


def pattern_get(key: object) -> Pattern:
    try:
        return pattern_parse(str(key or ""))
    except ValueError as exc:
        raise PacketInputError(f"pattern: {exc}") from exc


def statements_wanted(value: object) -> int:
    if value in (None, ""):
        return DEFAULT_STATEMENTS
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_STATEMENTS:
        raise PacketInputError(f"n: expected a whole number from 1 to {MAX_STATEMENTS}")
    return int(text)


# --- counting ------------------------------------------------------------------------------------


def pattern_figures(pattern: Pattern, totals: dict[str, list[int]]) -> list[str]:
    """The error index's figures the pattern sums (SARF: its confusion cells that occur)."""
    if pattern.kind == "entity":
        return [f"{pattern.entity}_{'fn' if pattern.missed else 'fp'}"]
    if pattern.kind == "event_kind":
        return [error_figure(event_kind=pattern.event_kind, missed=pattern.missed)]
    cells = []
    for figure in totals:
        parts = figure.split(":")
        ours = len(parts) == 4 and parts[0] == "sarf" and parts[1] == pattern.variable
        if ours and pattern.cell(parts[2], parts[3]):
            cells.append(figure)
    return sorted(cells)


def errors_total(totals: dict[str, list[int]]) -> int:
    """Every error the error analysis counts: missed and spurious items, wrong SARF codes."""
    return sum(totals.get(kind, (0, 0))[1] for kind in (*ERROR_COUNT_KINDS, "sarf"))


# One statement's part: (discussion id, order) and its count per run.
Found = dict[int, tuple[int, int, dict[int, int]]]


def index_found(runs: Sequence[ExtractionRun], figures: list[str]) -> Found:
    found: Found = {}
    rows = (
        StatementError.objects.filter(run__in=runs, figure__in=figures)
        .values("statement_id", "discussion_id", "order", "run_id")
        .annotate(n=Sum("count"))
        .order_by()
    )
    for row in rows:
        _, _, per_run = found.setdefault(
            row["statement_id"], (row["discussion_id"], row["order"], {})
        )
        per_run[row["run_id"]] = per_run.get(row["run_id"], 0) + row["n"]
    return found


def parent_found(runs: Sequence[ExtractionRun]) -> Found:
    """Wrong parent links per statement, read from every statement result that paired people
    (with the AI's extraction and the approved coding of those statements)."""
    found: Found = {}
    results = (
        MetricResult.objects.filter(
            family=EXTRACTION, scope=MetricResult.Scope.STATEMENT, run__in=runs
        )
        .exclude(Q(values__people_matches=[]) | Q(values__people_matches__isnull=True))
        .order_by("pk")
    )
    last = 0
    while chunk := list(
        results.filter(pk__gt=last).values_list(
            "pk",
            "run_id",
            "statement_id",
            "statement__discussion_id",
            "statement__order",
            "values__people_matches",
        )[:PARENT_CHUNK]
    ):
        last = chunk[-1][0]
        ids = [row[2] for row in chunk]
        ai = {
            (run_id, statement_id): payload
            for run_id, statement_id, payload in Extraction.objects.filter(
                run__in=runs, statement_id__in=ids
            ).values_list("run_id", "statement_id", "pdp_deltas")
        }
        gt = dict(
            Feedback.objects.approved()
            .filter(statement_id__in=ids)
            .values_list("statement_id", "edited_extraction")
        )
        for _, run_id, statement_id, discussion_id, order, matches in chunk:
            n = len(
                parent_link_errors(ai.get((run_id, statement_id)), gt.get(statement_id), matches)
            )
            if n:
                _, _, per_run = found.setdefault(statement_id, (discussion_id, order, {}))
                per_run[run_id] = n
    return found


# --- the patterns a run's error analysis offers --------------------------------------------------


def packet_patterns(
    totals: dict[str, Any] | None, event_kinds: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The patterns of a run's error analysis with their counts (from the run's stored totals
    and event kinds), most frequent first, then wrong parent links (counted in the packet)."""
    totals = totals or {}
    rows: list[dict[str, Any]] = [
        {"key": kind, "count": int(totals.get(kind) or 0)} for kind in ERROR_COUNT_KINDS
    ]
    for row in event_kinds:
        for key, field in (("events_fn", "missed"), ("events_fp", "spurious")):
            rows.append({"key": f"{key}:{row['kind']}", "count": int(row.get(field) or 0)})
    confusions = totals.get("sarf") or {}
    for pattern in sarf_patterns():
        rows.append(
            {
                "key": pattern.key,
                "count": pattern_cells(pattern, confusions.get(pattern.variable) or {}),
            }
        )
    shown = [{**row, "label": pattern_parse(row["key"]).label} for row in rows if row["count"] > 0]
    shown.sort(key=lambda row: -row["count"])
    parents = pattern_parse(PARENT_LINKS)
    return [*shown, {"key": parents.key, "label": parents.label, "count": None}]
