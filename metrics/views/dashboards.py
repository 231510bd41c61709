"""Dashboards: they read stored results only and never compute on the request path."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.functional import cached_property

from audit.models import ExtractionRun, Feedback, GroundTruthSnapshot
from evalsite.access import admin_required, auditor_required, is_admin
from evalsite.csv_cells import csv_dict_writer
from evalsite.http import HtmxHttpRequest
from evalsite.params import parse_id
from metrics import dashboard as dash
from metrics import selectors
from metrics.engine.comparison import ComparisonInputError, snapshot_get
from metrics.engine.derived import error_analysis_read
from metrics.engine.errors import error_figure
from metrics.engine.snapshots import snapshot_results_request
from metrics.error_items import error_items, payload_lists, payload_sides, value_keys
from metrics.packets import DEFAULT_STATEMENTS, packet_patterns

DISCUSSIONS_PER_PAGE = 50


# --- downloads ---------------------------------------------------------------------------------


DOWNLOADS = ("csv", "json")


def table_download(
    request: HtmxHttpRequest, name: str, rows: list[dict[str, Any]]
) -> HttpResponse | None:
    """The numbers behind a page as ?format=csv or ?format=json; None for the HTML page."""
    fmt = request.GET.get("format")
    if fmt == "json":
        return JsonResponse({"rows": rows}, json_dumps_params={"default": str})
    if fmt != "csv":
        return None
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    columns = list(dict.fromkeys(key for row in rows for key in row))
    writer = csv_dict_writer(response, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in row.items()}
        )
    return response


def _runs_and_selection(
    request: HtmxHttpRequest, system: dict[str, Any] | None = None
) -> tuple[list, list, ExtractionRun | None]:
    runs = selectors.runs_latest_first()
    trend = selectors.run_trend(system)
    requested = parse_id(request.GET.get("run"), name="run")
    return runs, trend, dash.pick_run(runs, trend, requested)


# --- dashboard ---------------------------------------------------------------------------------


@auditor_required
def dashboard(request: HtmxHttpRequest) -> HttpResponse:
    """Admins and auditors: the selected run's F1 cards; admins also get the admin controls,
    everyone their own coding progress."""
    runs, trend, run = _runs_and_selection(request)
    # Read before the cards: a change while they are read shows up as a difference at the
    # next status poll, never as a missed one.
    status = selectors.dashboard_status(run)
    admin = is_admin(request.user)
    row = selectors.run_row(run, totals=False) if run else None
    context = {
        "status": status,
        "watched": True,  # the cards follow the page's one status poll, not their own
        "runs": runs,
        "run": run,
        "trend": trend,
        "trend_svg": dash.trend_plot(trend) if len(trend) > 1 else "",
        "has_ground_truth": Feedback.objects.approved().exists(),
        "card": dash.f1_card(run, admin=admin) if run else None,
        "cumulative": dash.cumulative_card(run, row, admin=admin) if run else None,
        "details": dash.f1_details(row, run),
        "replicates": dash.replicates_of(run, runs) if run else None,
        "progress": selectors.my_progress(request.user),
        "family_cards": dash.family_cards(),
        "settings_in_force": dash.settings_in_force() if admin else None,
    }
    if request.htmx and request.htmx.target == "dashboard-cards":
        return render(request, "metrics/dashboard.html#cards", context)
    return render(request, "metrics/dashboard.html", context)


@auditor_required
def dashboard_status(request: HtmxHttpRequest) -> HttpResponse:
    """What the open dashboard polls each second: 204 either way, with the event
    "results-changed" when the results behind its cards are no longer the ones it shows
    (?seen=, the status its cards were drawn with), so the cards redraw together."""
    run = _run_param(request, "run")
    response = HttpResponse(status=204)
    if request.GET.get("seen") != selectors.dashboard_status(run):
        response["HX-Trigger"] = "results-changed"
    return response


@auditor_required
def cumulative_card(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    """The cumulative-F1 card alone, for its own htmx polling while the result updates."""
    run = get_object_or_404(ExtractionRun, pk=run_id)
    row = selectors.run_row(run, totals=False)
    card = dash.cumulative_card(run, row, admin=is_admin(request.user))
    return render(request, "metrics/cards/_cumulative_f1.html", {"cumulative": card})


# --- runs ----------------------------------------------------------------------------------------


@admin_required
def runs(request: HtmxHttpRequest) -> HttpResponse:
    """Every run grouped by configuration, with each replicate's coverage and figures and the
    replicates' mean and spread, on live ground truth or a snapshot; the F1 trend; the way to
    a comparison."""
    error = ""
    try:
        snapshot = snapshot_get(request.GET.get("snapshot"))
    except ComparisonInputError as exc:
        snapshot, error = None, str(exc)
    # The trend and the approved count read once; on live ground truth with the runs' rows.
    if snapshot is None:
        system, rows = selectors.system_values_and_run_rows()
    else:
        system, rows = selectors.system_values(), selectors.run_rows_on(snapshot)
    runs_list, trend, _ = _runs_and_selection(request, system)
    download = table_download(request, "f1-over-runs", dash.trend_export_rows(trend))
    if download:
        return download
    if snapshot is not None:
        rows.update(_snapshot_rows_requested(runs_list, rows, snapshot))
    approved = snapshot.codings if snapshot else selectors.approved_count(system)
    groups = dash.runs_by_configuration(runs_list, rows, approved)
    context = {
        "groups": groups,
        "runs": runs_list,
        "approved": approved,
        "snapshot": snapshot,
        "snapshots": selectors.snapshots_latest_first(),
        "basis": dash.basis_label(snapshot),
        "updating": any(f["status"] == "stale" for g in groups for f in g["replicates"]),
        "error": error,
        "trend": trend,
        "trend_svg": dash.trend_plot(trend) if trend else "",
    }
    return render(request, "metrics/runs.html", context, status=400 if error else 200)


def _snapshot_rows_requested(
    runs_list: list[ExtractionRun], rows: dict[int, Any], snapshot: GroundTruthSnapshot
) -> dict[int, Any]:
    """The runs' figures on the snapshot that were never computed (or whose computation was
    lost): asked for now (a worker computes them once), as their placeholders."""
    wanted = [r for r in runs_list if r.pk not in rows or rows[r.pk].status == "stale"]
    return {r.pk: snapshot_results_request(run=r, snapshot=snapshot) for r in wanted}


def _run_param(request: HtmxHttpRequest, name: str) -> ExtractionRun | None:
    pk = parse_id(request.GET.get(name), name=name)
    runs = ExtractionRun.objects.select_related("configuration")
    return runs.filter(pk=pk).first() if pk else None


# --- per discussion, errors --------------------------------------------------------------------


@admin_required
def discussions(request: HtmxHttpRequest) -> HttpResponse:
    """Cumulative and per-type F1 of each discussion, sortable, weakest ones surfaced."""
    runs_list, _, run = _runs_and_selection(request)
    sort = request.GET.get("sort", "discussion")
    context: dict[str, Any] = {"runs": runs_list, "run": run, "sort": sort}
    if run is not None:
        rows = selectors.discussion_rows(run, sort)
        if request.GET.get("format") in DOWNLOADS:  # every row only when they are asked for
            name = f"discussions-run-{run.pk}"
            return table_download(request, name, _plain(rows)) or HttpResponse(status=400)
        page = Paginator(rows, DISCUSSIONS_PER_PAGE).get_page(request.GET.get("page"))
        row = selectors.run_row(run)
        totals = ((row.contribution or {}) if row else {}).get("discussions")
        context.update(
            page=page,
            rows=[dash.with_main_error(r) for r in page.object_list],
            weakest=dash.weakest_discussions(run),
            tentative_below=dash.TENTATIVE_BELOW,
            columns=dash.sort_links(sort),
            error_kinds=dash.error_kinds(totals),
            result=row,
            basis=dash.basis_label(None),
            replicates=dash.replicates_of(run, runs_list),
        )
    if request.htmx and request.htmx.target == "discussion-table":
        return render(request, "metrics/discussions.html#table", context)
    return render(request, "metrics/discussions.html", context)


def _plain(rows) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "contribution__sarf"} for row in rows]


ERROR_STATEMENTS_PER_PAGE = 50


class CountedPaginator(Paginator):
    """A paginator told how many rows there are (stored beside them): it never counts them."""

    def __init__(self, object_list: Any, per_page: int, *, count: int) -> None:
        super().__init__(object_list, per_page)
        self.known_count = count

    @cached_property
    def count(self) -> int:
        return self.known_count


@admin_required
def error_statements(request: HtmxHttpRequest) -> HttpResponse:
    """The statements behind one count or confusion cell of the error analysis, each linking
    to the statement (in this run) where the error can be seen; read from the stored error
    analysis, a page at a time."""
    run = _run_param(request, "run")
    if run is None:
        return render(request, "metrics/error_statements.html", {"error": True}, status=400)
    query = {
        name: request.GET.get(name, "")[:64]
        for name in ("kind", "event_kind", "variable", "gt", "ai")
    }
    missed = request.GET.get("missed") != "0"
    figure = error_figure(missed=missed, **query)
    analysis = error_analysis_read(run)
    n, total = ((analysis.values or {}).get("figures") or {}).get(figure, (0, 0))
    listed = selectors.error_statements_listed(run, figure=figure, keys=value_keys(figure))
    paginator = CountedPaginator(listed, ERROR_STATEMENTS_PER_PAGE, count=n)
    page = paginator.get_page(request.GET.get("page"))
    heading = _items_heading(figure)
    rows = _with_items(run, figure, list(page))
    context = {
        "run": run,
        "page": page,
        "rows": rows,
        "items_heading": heading,
        "what": _error_label(query, missed=missed),
        "total": total,
        "analysis": analysis,
    }
    return render(request, "metrics/error_statements.html", context)


def _with_items(run: ExtractionRun, figure: str, rows: list[dict]) -> list[dict]:
    """Each listed statement (with what it says) and the items behind the count (the missed or
    spurious ones, or the events whose codes differ), so the list reads without opening each.
    Only the payload lists and the stored values those items come from are read (the values
    with the rows)."""
    keys = value_keys(figure)
    payloads = selectors.error_statement_payloads(
        run,
        rows=rows,
        sides=payload_sides(figure),
        keys=keys,
        lists=payload_lists(figure),
        values=selectors.listed_values(rows, keys),
    )
    return [dict(row, items=error_items(figure, payloads[row["statement_id"]])) for row in rows]


def _items_heading(figure: str) -> str:
    kind = figure.partition(":")[0]
    if kind == "sarf":
        return "Events whose codes differ"
    if kind.endswith("_fp"):
        return "What the AI added (no ground-truth match)"
    return "What the AI missed"


def _error_label(query: dict[str, str], *, missed: bool) -> str:
    if query["variable"]:
        return f"{query['variable']}: ground truth {query['gt']}, AI {query['ai']}"
    if query["event_kind"]:
        return f"{query['event_kind']} events {'missed' if missed else 'spurious'}"
    labels = {k["kind"]: k["label"] for k in dash.error_kinds({})}
    return labels.get(query["kind"], "errors")


@admin_required
def errors(request: HtmxHttpRequest) -> HttpResponse:
    """Which SARF values the AI confuses and which event kinds it misses, for one run."""
    runs_list, _, run = _runs_and_selection(request)
    context: dict[str, Any] = {"runs": runs_list, "run": run}
    if run is not None:
        row, totals = selectors.run_row_statement_totals(run)
        system = ((row.values or {}) if row else {}).get("system")
        confusions = dash.sarf_confusions(totals, system)
        analysis = error_analysis_read(run)
        event_kinds = (analysis.values or {}).get("event_kinds", [])
        if request.GET.get("table") == "event-kinds":
            download = table_download(request, f"event-kinds-run-{run.pk}", event_kinds)
        else:
            rows = dash.confusion_export_rows(confusions)
            download = table_download(request, f"sarf-confusion-run-{run.pk}", rows)
        if download:
            return download
        context.update(
            result=row,
            confusions=confusions,
            event_kinds=event_kinds,
            analysis=analysis,
            error_kinds=dash.error_kinds(totals),
            patterns=[
                {**p, "quoted": quote(p["key"])} for p in packet_patterns(totals, event_kinds)
            ],
            packet_statements=DEFAULT_STATEMENTS,
            basis=dash.basis_label(None),
            replicates=dash.replicates_of(run, runs_list),
        )
    if request.htmx and request.htmx.target == "event-kinds":
        return render(request, "metrics/errors.html#event_kinds", context)
    return render(request, "metrics/errors.html", context)
