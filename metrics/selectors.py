"""Reads of stored metric results, for pages and the API (stable id order for pagination).

Selectors only read: computing and storing stay in the services and tasks.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from django.db.models import F, FloatField, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KT, KeyTransform
from django.db.models.functions import Cast

from audit.display import Labels
from audit.models import (
    AuditorFigures,
    Extraction,
    ExtractionRun,
    Feedback,
    GroundTruthSnapshot,
    Statement,
)
from audit.selectors.blind import coding_sealed_statement_ids
from audit.selectors.lists import filtered_by
from audit.selectors.threads import approved_codings_count
from evalsite.access import is_admin
from metrics.engine.services import EXTRACTION, SYSTEM_KEY
from metrics.engine.snapshots import SNAPSHOT_FAMILY
from metrics.error_items import StatementPayloads
from metrics.families.payload.items import ENTITY_KINDS
from metrics.models import (
    DISCUSSION_ROWS,
    DISCUSSION_SORT_FIGURES,
    MetricResult,
    StatementError,
    values_figure,
)
from metrics.registry import ADMIN_ONLY
from metrics.results import run_key


def metric_results_list(
    *, user: Any = None, filters: dict[str, Any] | None = None
) -> QuerySet[MetricResult]:
    qs = MetricResult.objects.all() if user is None else metric_results_visible(user=user)
    lookups = {"family": "family", "scope": "scope", "status": "status"}
    lookups |= {key: f"{key}_id" for key in ("run", "discussion", "statement", "snapshot")}
    return filtered_by(qs.select_related("snapshot"), filters, lookups)


def metric_results_visible(*, user) -> QuerySet[MetricResult]:
    """Stored results the user may read. Admins: all. Auditors: not the inter-auditor figures
    (they name auditors and compare their codings), and no statement or discussion result that
    covers a statement they are still coding (blind sample not yet submitted, or a draft): those
    carry the approved ground truth (matched ids, SARF code pairs)."""
    if is_admin(user):
        return MetricResult.objects.all()
    sealed = coding_sealed_statement_ids(user=user)
    sealed_discussions = Statement.objects.filter(pk__in=sealed).values("discussion_id")
    return (
        MetricResult.objects.exclude(family__in=ADMIN_ONLY)
        .exclude(statement_id__in=sealed)
        .exclude(scope=MetricResult.Scope.DISCUSSION, discussion_id__in=sealed_discussions)
    )


# --- the dashboards: the trend, a run's row, its discussions ------------------------------------

DISCUSSION_FIGURES = {
    "f1": "aggregate_micro_f1",
    "people": "people_f1",
    "events": "events_f1",
    "pair_bonds": "pair_bonds_f1",
}
DISCUSSION_COUNTS = ("statement_count", *(f"{e}_{c}" for e in ENTITY_KINDS for c in ("fp", "fn")))
SORTS = {
    "discussion": "Discussion",
    "statements": "Statements",
    "f1": "Cumulative F1",
    "people": "People F1",
    "events": "Events F1",
    "pair_bonds": "Pair bonds F1",
}


def runs_latest_first() -> list[ExtractionRun]:
    """Every run, newest first, each with its configuration (a run's label and unit are its
    configuration's: one query for the list, not one more per configuration)."""
    return list(ExtractionRun.objects.select_related("configuration").latest_first())


def system_values() -> dict[str, Any]:
    """The stored system row's figures ({} before it is computed): the trend and the approved
    count read from one query where a page shows both."""
    row = MetricResult.objects.filter(key=SYSTEM_KEY).only("values").first()
    return (row.values if row else None) or {}


def run_trend(system: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One summary per run with a result, oldest first (the system row's trend; ``system``:
    its figures when already read)."""
    return list((system if system is not None else system_values()).get("runs", []))


def approved_count(system: dict[str, Any] | None = None) -> int:
    """Approved codings of subject statements, as stored with the trend
    (``system_result_compute``): the runs page divides each run's coverage by it. Summed from
    the team figures only before the system row has it. ``system``: as for ``run_trend``."""
    stored = (system if system is not None else system_values()).get("n_approved")
    return int(stored) if stored is not None else approved_codings_count()


def run_row(run: ExtractionRun, *, totals: bool = True) -> MetricResult | None:
    """The run's stored result; without its additive totals unless asked (they hold one entry
    per discussion, which the cards do not need)."""
    rows = MetricResult.objects.filter(key=run_key(EXTRACTION, run.pk))
    return (rows if totals else rows.defer("contribution")).first()


def system_values_and_run_rows() -> tuple[dict[str, Any], dict[int, MetricResult]]:
    """The system row's figures (``system_values``) and every run's stored row on live ground
    truth (``run_rows_on(None)``), from one query: the runs page shows both."""
    live_runs = Q(scope=MetricResult.Scope.RUN, family=EXTRACTION)
    rows = MetricResult.objects.filter(Q(key=SYSTEM_KEY) | live_runs)
    system: dict[str, Any] = {}
    runs: dict[int, MetricResult] = {}
    for row in rows.only("key", "run_id", "status", "values").order_by("pk"):
        if row.key == SYSTEM_KEY:
            system = row.values or {}
        elif row.run_id is not None:
            runs[row.run_id] = row
    return system, runs


def run_row_statement_totals(
    run: ExtractionRun,
) -> tuple[MetricResult | None, dict[str, Any] | None]:
    """The run's stored result and, of its additive totals, the statements' only: the error
    analysis reads no more, and the discussions' entries are never decoded."""
    rows = MetricResult.objects.filter(key=run_key(EXTRACTION, run.pk)).defer("contribution")
    row = rows.annotate(statement_totals=KeyTransform("statements", "contribution")).first()
    return row, (row.statement_totals if row else None)


def run_rows_on(
    snapshot: GroundTruthSnapshot | None, *, run_ids: list[int] | None = None
) -> dict[int, MetricResult]:
    """The runs' stored run rows on a ground truth (live, or the snapshot), by run id, with
    their status and figures only (``dashboard.run_figures``): one query whatever the number
    of runs (``run_ids`` None: every run)."""
    rows = MetricResult.objects.filter(scope=MetricResult.Scope.RUN)
    if snapshot is None:
        rows = rows.filter(family=EXTRACTION)
    else:
        rows = rows.filter(family=SNAPSHOT_FAMILY, snapshot=snapshot)
    if run_ids is not None:
        rows = rows.filter(run_id__in=run_ids)
    shown = rows.only("run_id", "status", "values")
    return {row.run_id: row for row in shown if row.run_id is not None}


def snapshots_latest_first() -> list[GroundTruthSnapshot]:
    """The snapshots a ground-truth picker offers: their names and dates only."""
    return list(
        GroundTruthSnapshot.objects.only("name", "created_at").order_by("-created_at", "-id")
    )


def dashboard_status(run: ExtractionRun | None) -> str:
    """A digest of the state of every stored result the dashboard's cards show (one query): the
    run's own rows and the system rows, each by status, computed_at and input hash. The open
    dashboard compares it with the one it was drawn from and redraws its cards when it differs
    (results gone stale, or fresh again)."""
    shown = Q(scope=MetricResult.Scope.SYSTEM)
    if run is not None:
        shown |= Q(scope=MetricResult.Scope.RUN, run=run)
    states = (
        MetricResult.objects.filter(shown)
        .order_by("key")
        .values_list("key", "status", "computed_at", "input_hash")
    )
    text = "|".join(
        f"{key}={status}@{computed_at}#{digest}" for key, status, computed_at, digest in states
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def my_progress(user: Any) -> dict[str, int]:
    """Statements this user coded, by the status of their feedback: the stored sum of their
    tallies (``audit.derived.team_figures``: one row), not a count of every coding they ever made."""
    names = ("coded", "submitted", "in_review", "approved", "rejected")
    stored = AuditorFigures.objects.filter(pk=user.pk).values_list(*names).first()
    figures = dict(zip(names, stored or (0,) * len(names), strict=True))
    figures["sent"], figures["submitted"] = figures["submitted"], figures["in_review"]
    return {
        "draft": figures["coded"] - figures["sent"],
        "submitted": figures["submitted"],
        "approved": figures["approved"],
        "rejected": figures["rejected"],
        "coded": figures["coded"],
    }


def discussion_rows(run: ExtractionRun, sort: str) -> QuerySet:
    """The run's discussion results with their figures, sorted (``-`` prefix: descending).
    Each sort has its index (``metrics.models.DISCUSSION_SORT_FIGURES``), so a page of rows
    is read in index order, whatever the number of discussions."""
    figures = {
        name: Cast(KT(f"values__{key}"), FloatField()) for name, key in DISCUSSION_FIGURES.items()
    }
    counts = {name: Cast(KT(f"values__{name}"), IntegerField()) for name in DISCUSSION_COUNTS}
    rows = (
        MetricResult.objects.filter(DISCUSSION_ROWS, run=run)
        .annotate(**figures, **counts)
        .values(
            "discussion_id",
            "discussion__summary",
            "status",
            "contribution__sarf",
            *figures,
            *counts,
        )
    )
    field = sort.removeprefix("-")
    descending = sort.startswith("-")
    if field not in DISCUSSION_SORT_FIGURES:
        return rows.order_by(
            "-discussion_id" if descending and field == "discussion" else "discussion_id"
        )
    # The index's expression itself (not the annotation's name), so the planner matches it.
    figure = values_figure(*DISCUSSION_SORT_FIGURES[field])
    order = figure.desc(nulls_last=True) if descending else figure.asc(nulls_last=True)
    return rows.order_by(order, "discussion_id")


# --- the statements behind an error figure --------------------------------------------------


def error_statement_payloads(
    run: ExtractionRun,
    *,
    rows: list[dict],
    sides: tuple[str, ...] = ("gt", "ai"),
    keys: tuple[str, ...] | None = None,
    lists: tuple[str, ...] | None = None,
    values: dict[int, dict[str, Any]] | None = None,
) -> dict[int, Any]:
    """For a page of the error drill-down (``rows``: statement_id, discussion_id, order), each
    statement's stored F1 values, approved ground truth and the run's extraction, with the
    names of its discussion's earlier statements fed on each side (``StatementPayloads``):
    one query each for the results, the approved codings and the extractions of the page's
    discussions up to its last listed statement. ``sides``: the payloads read ("gt", "ai");
    a side not read stays None, with no names. ``keys``: the only keys of the stored values
    read (None: them all). The names fed are the people's (``Labels.feed_people``). ``lists``:
    the only lists of the payloads read besides the people (None: the whole payloads).
    ``values``: the stored values already read (``listed_values``; None: read here)."""
    if not rows:
        return {}
    last: dict[int, int] = defaultdict(int)
    for row in rows:
        last[row["discussion_id"]] = max(last[row["discussion_id"]], row["order"])
    upto = Q()
    for discussion_id, order in last.items():
        upto |= Q(statement__discussion_id=discussion_id, statement__order__lte=order)
    wanted = {row["statement_id"] for row in rows}
    read: dict[str, dict[int, tuple]] = {}
    if "gt" in sides:
        approved = Feedback.objects.filter(upto, status=Feedback.Status.APPROVED)
        read["gt"] = _payloads_read(approved, "edited_extraction", lists)
    if "ai" in sides:
        extractions = Extraction.objects.filter(upto, run=run)
        read["ai"] = _payloads_read(extractions, "pdp_deltas", lists)
    if values is None:
        values = _statement_values(run, [row["statement_id"] for row in rows], keys)
    found: dict[int, Any] = {}
    for side, payloads in read.items():
        labels: dict[int, Labels] = defaultdict(Labels)
        for statement_id, discussion_id, _, payload in sorted(
            payloads.values(), key=lambda r: (r[1], r[2])
        ):
            if statement_id in wanted:
                entry = found.setdefault(
                    statement_id,
                    StatementPayloads(values=values.get(statement_id) or {}, gt=None, ai=None),
                )
                setattr(entry, side, payload)
                setattr(entry, f"{side}_labels", labels[discussion_id].copy())
            labels[discussion_id].feed_people(payload)
    for statement_id in wanted - set(found):
        found[statement_id] = StatementPayloads(
            values=values.get(statement_id) or {}, gt=None, ai=None
        )
    return found


def _payloads_read(rows: QuerySet, field: str, lists: tuple[str, ...] | None) -> dict[int, tuple]:
    """(statement id, discussion id, order, payload) by statement id. With ``lists``, a payload
    holds its people and those lists only: each cut out by the database, so the rest is never
    decoded."""
    fields = ("statement_id", "statement__discussion_id", "statement__order")
    if lists is None:
        return {r[0]: r for r in rows.values_list(*fields, field)}
    names = ("people", *lists)
    read = rows.values_list(*fields, *(f"{field}__{name}" for name in names))
    return {r[0]: (*r[:3], dict(zip(names, r[3:], strict=True))) for r in read}


def _statement_values(
    run: ExtractionRun, ids: list[int], keys: tuple[str, ...] | None
) -> dict[int, Any]:
    """The statements' stored F1 values by id, or only ``keys`` of them (each cut out by the
    database, so the rest is never decoded)."""
    if keys is not None and not keys:
        return {}
    rows = MetricResult.objects.filter(
        family=EXTRACTION, scope=MetricResult.Scope.STATEMENT, run=run, statement_id__in=ids
    )
    if keys is None:
        return dict(rows.values_list("statement_id", "values"))
    picked = rows.values_list("statement_id", *(f"values__{key}" for key in keys))
    return {row[0]: dict(zip(keys, row[1:], strict=True)) for row in picked}


def error_statements_listed(
    run: ExtractionRun, *, figure: str, keys: tuple[str, ...] = ()
) -> QuerySet:
    """The statements behind one figure of the run's stored error analysis, each with how
    many times it counts there and what it says, in discussion and statement order: read a
    page at a time from their index (``metrics.engine.errors``). ``keys``: of each statement's
    stored F1 values, these too (as ``values``: key -> value, None where there is none), read
    in the same query."""
    stored = MetricResult.objects.filter(
        family=EXTRACTION,
        scope=MetricResult.Scope.STATEMENT,
        run=run,
        statement_id=OuterRef("statement_id"),
    )
    picked = {f"value_{key}": Subquery(stored.values(f"values__{key}")[:1]) for key in keys}
    rows = (
        StatementError.objects.filter(run=run, figure=figure)
        .order_by("discussion_id", "order", "statement_id")
        .values("statement_id", "discussion_id", "order", "count", text=F("statement__text"))
    )
    return rows.annotate(**picked) if picked else rows


def listed_values(rows: list[dict], keys: tuple[str, ...]) -> dict[int, dict[str, Any]]:
    """The stored values ``error_statements_listed`` read with each row, by statement id."""
    return {row["statement_id"]: {key: row[f"value_{key}"] for key in keys} for row in rows}
