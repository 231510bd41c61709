"""Dashboards: card contents for fresh / stale / failed / empty results, who sees what, the run
selector, the per-discussion and error pages, downloads, and query counts that do not grow."""

from __future__ import annotations

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.models import Feedback
from metrics.models import Evaluation, MetricResult
from tests.bench.management.commands.benchmark_dashboard import dashboard_data_create
from tests.factories import ExtractionRunFactory, FeedbackFactory, StatementFactory
from tests.metrics.dashboard_rows import (
    approve,
    discussion_row,
    discussion_with_statements,
    run_result,
    settle,
    statement_row,
)

DASHBOARD = reverse("metrics:dashboard")
EXPORT = "/api/v1/ground-truth/export?all=true"
SYMPTOM = {"symptom": [["up", "up"], ["none", "up"]]}  # AI value, GT value per matched event


@pytest.fixture
def results(db, auditor):
    """Two discussions (3 statements, all approved) and three runs: v1 and v2 with results,
    v3 newest but without any. v2's figures, pooled over its 3 statements:
      people 3/1/0 -> 6/7 = 0.857, events 1/0/2 -> 0.5, pair bonds none -> 1.0,
      overall 4/1/2 -> 8/11 = 0.727, 1 of 3 exact -> 33%, symptom macro-F1 1/3, others n/a."""
    v1 = ExtractionRunFactory(model_name="gpt-a", prompt_version="v1")
    v2 = ExtractionRunFactory(model_name="gpt-b", prompt_version="v2")
    a, (a1, a2) = discussion_with_statements(2, "Anna's family")
    b, (b1,) = discussion_with_statements(1, "Ben's family")
    for statement in (a1, a2, b1):
        approve(statement)
    statement_row(v2, a1, people_tp=2, events_tp=1, events_fn=1, sarf=SYMPTOM)
    statement_row(v2, a2, people_tp=1)
    statement_row(v2, b1, people_fp=1, events_fn=1, fn_event_kinds=("married",))
    discussion_row(v2, a, statement_count=2, people_tp=3, events_tp=1, events_fn=1, sarf=SYMPTOM)
    discussion_row(v2, b, statement_count=1, people_fp=1, events_fn=1)
    statement_row(v1, a1, people_fn=2)
    statement_row(v1, b1, people_tp=1)
    discussion_row(v1, a, statement_count=1, people_fn=2)
    discussion_row(v1, b, statement_count=1, people_tp=1)
    settle(v1)
    settle(v2)
    v3 = ExtractionRunFactory(model_name="gpt-c", prompt_version="v3")
    return {"v1": v1, "v2": v2, "v3": v3, "a": a, "b": b}


def page(client, url=DASHBOARD, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


# --- who may see what -------------------------------------------------------------------------

PAGES = ["metrics:dashboard", "metrics:runs", "metrics:discussions", "metrics:errors"]
ADMIN_PAGES = ["metrics:runs", "metrics:run_compare", "metrics:discussions", "metrics:errors"]


@pytest.mark.parametrize("name", [*PAGES, "metrics:run_compare"])
def test_anonymous_is_sent_to_login(client, db, name) -> None:
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", [*PAGES, "metrics:run_compare"])
def test_outsider_is_refused(client, outsider, name) -> None:
    client.force_login(outsider)
    assert client.get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", ADMIN_PAGES)
def test_auditor_cannot_open_admin_pages(auditor_client, results, name) -> None:
    assert auditor_client.get(reverse(name)).status_code == 403


def test_auditor_sees_cards_without_admin_controls(auditor_client, results) -> None:
    html = page(auditor_client)
    assert "Extraction F1" in html and "Cumulative F1" in html
    assert "Export all ground truth" not in html
    assert "/api/v1/ground-truth/export" not in html
    assert 'data-testid="admin-controls"' not in html
    assert reverse("metrics:discussions") not in html


def test_auditor_cannot_export(auditor_client, results) -> None:
    assert auditor_client.get(EXPORT).status_code == 403


def test_admin_gets_export_and_controls(admin_client, results) -> None:
    html = page(admin_client)
    assert f'href="{EXPORT}"' in html.replace("&amp;", "&")
    assert 'data-testid="admin-controls"' in html
    assert reverse("metrics:jobs") in html
    assert f"{reverse('metrics:discussions')}?run={results['v2'].pk}" in html


# --- the F1 card: fresh, stale, failed, empty ------------------------------------------------


def test_fresh_card_shows_the_pooled_figures(admin_client, results) -> None:
    html = page(admin_client)
    assert 'data-state="fresh"' in html
    assert "gpt-b · v2" in html  # default: the latest run with results, not v3
    for figure in ("0.727", "0.857", "0.500", "1.000", "33%"):
        assert figure in html, figure
    assert '<th scope="row">symptom</th><td class="num">0.33</td>' in html  # pooled
    assert '<th scope="row">anxiety</th><td class="num">n/a</td>' in html
    assert '<th scope="row">functioning</th><td class="num">n/a</td>' in html
    assert "Comparing AI extractions to <strong>3</strong> approved statements" in html
    assert "across <strong>2</strong> discussions" in html


def test_how_it_is_calculated_reads_the_stored_settings(admin_client, results) -> None:
    row = run_result(results["v2"])
    row.match_settings = {**row.match_settings, "name_similarity_threshold": 0.85}
    row.match_settings["date_tolerance_days"] = 11
    row.save()
    html = page(admin_client)
    assert "How is this calculated?" in html
    assert "above 0.85" in html
    assert "within 11 days" in html


def test_stale_card_keeps_the_last_figures_and_the_page_polls_one_status(
    admin_client, results
) -> None:
    MetricResult.objects.filter(pk=run_result(results["v2"]).pk).update(status="stale")
    html = page(admin_client)
    assert "updating…" in html
    assert "0.727" in html
    # On the dashboard the cards do not poll themselves: one status poll redraws them all.
    status_url = reverse("metrics:dashboard_status")
    assert f'hx-get="{status_url}?run={results["v2"].pk}&amp;seen=' in html
    assert reverse("metrics:extraction_card", args=[results["v2"].pk]) not in html
    assert reverse("metrics:cumulative_card", args=[results["v2"].pk]) not in html


def _seen(html: str) -> str:
    return html.split('data-status="', 1)[1].split('"', 1)[0]


def test_status_answers_whether_the_cards_are_still_current(admin_client, results) -> None:
    run, other = results["v2"], results["v1"]
    seen, seen_other = (
        _seen(page(admin_client, run=run.pk)),
        _seen(page(admin_client, run=other.pk)),
    )
    url = reverse("metrics:dashboard_status")
    unchanged = admin_client.get(url, {"run": run.pk, "seen": seen})
    assert unchanged.status_code == 204 and "HX-Trigger" not in unchanged
    MetricResult.objects.filter(pk=run_result(run).pk).update(status="stale")
    changed = admin_client.get(url, {"run": run.pk, "seen": seen})
    assert changed.status_code == 204 and changed["HX-Trigger"] == "results-changed"
    # Another run's dashboard shows none of this run's rows: still current.
    assert "HX-Trigger" not in admin_client.get(url, {"run": other.pk, "seen": seen_other})


def test_status_needs_a_signed_in_auditor_and_a_run_id(client, outsider, auditor, results) -> None:
    url = reverse("metrics:dashboard_status")
    assert client.get(url).status_code == 302
    client.force_login(outsider)
    assert client.get(url).status_code == 403
    client.force_login(auditor)
    assert client.get(url, {"run": "x"}).status_code == 400


def test_failed_card_shows_the_error_to_admins_only(client, admin_user, auditor, results) -> None:
    MetricResult.objects.filter(pk=run_result(results["v2"]).pk).update(
        status="failed", error="Traceback: ValueError: boom in matching"
    )
    client.force_login(admin_user)
    assert "ValueError: boom" in page(client)
    client.force_login(auditor)
    html = page(client)
    assert "Computing these figures failed" in html
    assert "ValueError: boom" not in html


def test_run_without_results_is_empty(admin_client, results) -> None:
    html = page(admin_client, run=results["v3"].pk)
    assert "gpt-c · v3" in html
    assert 'data-state="empty"' in html
    assert "No approved ground truth for this run yet" in html


def test_nothing_approved_gives_a_clear_empty_state(admin_client, db) -> None:
    statement = StatementFactory()
    FeedbackFactory(statement=statement, status=Feedback.Status.SUBMITTED)
    ExtractionRunFactory()
    html = page(admin_client)
    assert "No approved ground truth yet" in html
    assert reverse("audit:review_queue") in html
    assert "Extraction F1" not in html


# --- the cumulative card ----------------------------------------------------------------------


def cumulative(client, run) -> str:
    return page(client, reverse("metrics:cumulative_card", args=[run.pk]))


def test_cumulative_card_states(client, admin_user, auditor, results) -> None:
    v2 = results["v2"]
    client.force_login(auditor)
    html = cumulative(client, v2)
    # pooled over the two discussions: people 3/1/0, events 1/0/2 -> 8/11;
    # per discussion A 4/0/1 -> 8/9 and B 0/1/1 -> 0, mean 4/9
    assert 'data-state="fresh"' in html
    assert "0.727" in html and "0.444" in html
    assert "hx-trigger" not in html
    MetricResult.objects.filter(pk=run_result(v2).pk).update(status="stale")
    html = cumulative(client, v2)
    assert "updating…" in html and "hx-trigger" in html and "0.727" in html
    MetricResult.objects.filter(pk=run_result(v2).pk).update(status="failed", error="KeyError: x")
    assert "KeyError" not in cumulative(client, v2)
    client.force_login(admin_user)
    assert "KeyError: x" in cumulative(client, v2)
    assert "No discussion with approved ground truth" in cumulative(client, results["v3"])


# --- run selector, htmx, progress -------------------------------------------------------------


def test_run_selector_picks_a_run(admin_client, results) -> None:
    html = page(admin_client, run=results["v1"].pk)
    assert "gpt-a · v1" in html.split("Extraction F1")[1][:200]
    assert f'<option value="{results["v1"].pk}" selected>' in html


def test_htmx_run_change_returns_the_cards_only(admin_client, results) -> None:
    response = admin_client.get(
        DASHBOARD,
        {"run": results["v1"].pk},
        headers={"HX-Request": "true", "HX-Target": "dashboard-cards"},
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="dashboard-cards"')
    assert "<html" not in html and "gpt-a · v1" in html


def test_auditor_sees_own_progress(auditor_client, auditor, results) -> None:
    for status in ("draft", "submitted", "submitted", "approved", "rejected"):
        FeedbackFactory(auditor=auditor, status=status)
    html = page(auditor_client)
    assert 'data-testid="my-progress"' in html
    progress = auditor_client.get(DASHBOARD).context["progress"]
    assert progress == {"coded": 5, "draft": 1, "submitted": 2, "approved": 1, "rejected": 1}


def test_trend_over_runs_is_plotted_with_its_numbers(admin_client, results) -> None:
    html = page(admin_client)
    assert "F1 over extraction runs" in html and "<svg" in html
    assert "extraction run (prompt version), oldest first" in html
    rows = admin_client.get(reverse("metrics:runs"), {"format": "json"}).json()["rows"]
    assert [r["label"] for r in rows] == ["gpt-a · v1", "gpt-b · v2"]
    assert rows[1]["aggregate_micro_f1"] == pytest.approx(8 / 11)


def test_a_broken_family_card_does_not_hide_the_dashboard(admin_client, results) -> None:
    Evaluation.objects.create(family="agreement", name="broken", status="done", artifact={"x": 1})
    html = page(admin_client)
    assert "Extraction F1" in html
    assert "This card could not be shown" in html


# --- runs, per discussion, errors ---------------------------------------------------------------


def test_runs_table_shows_coverage(admin_client, results) -> None:
    html = page(admin_client, reverse("metrics:runs"))
    assert "3 / 3" in html and "(100%)" in html  # v2 covers every approved statement
    assert "2 / 3" in html and "(67%)" in html  # v1 extracted two of them
    assert "0 / 3" in html  # v3: none
    # The comparison of a baseline and a candidate (runs or configurations) is a page of its own.
    assert (
        f'<a href="{reverse("metrics:run_compare")}">Compare a baseline and a candidate</a>' in html
    )


def test_runs_trend_csv(admin_client, results) -> None:
    response = admin_client.get(reverse("metrics:runs"), {"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["label"] for r in rows] == ["gpt-a · v1", "gpt-b · v2"]
    assert "attachment" in response["Content-Disposition"]


def test_discussions_sorted_and_linked(admin_client, results) -> None:
    v2, a, b = results["v2"], results["a"], results["b"]
    url = reverse("metrics:discussions")
    ascending = page(admin_client, url, run=v2.pk, sort="f1")
    table = ascending.split('id="discussion-table"')[1]
    assert table.index("Ben&#x27;s family") < table.index("Anna&#x27;s family")
    descending = page(admin_client, url, run=v2.pk, sort="-f1").split('id="discussion-table"')[1]
    assert descending.index("Anna&#x27;s family") < descending.index("Ben&#x27;s family")
    assert reverse("audit:discussion", args=[a.pk]) in ascending
    assert reverse("audit:discussion", args=[b.pk]) in ascending


def test_discussions_surface_weakest_and_error_kinds(admin_client, results) -> None:
    html = page(admin_client, reverse("metrics:discussions"), run=results["v2"].pk)
    weakest = html.split('data-testid="weakest"')[1].split("</section>")[0]
    assert weakest.index("Ben") < weakest.index("Anna")  # 0.0 before 8/9
    kinds = html.split('data-testid="error-kinds"')[1].split("</section>")[0]
    # cumulative totals: events missed 2, wrong SARF codes 1, spurious people 1
    assert kinds.index("missed events") < kinds.index("spurious people")
    assert "wrong SARF codes" in kinds


def test_discussions_htmx_sort_returns_the_table(admin_client, results) -> None:
    response = admin_client.get(
        reverse("metrics:discussions"),
        {"run": results["v2"].pk, "sort": "-people"},
        headers={"HX-Request": "true", "HX-Target": "discussion-table"},
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="discussion-table"')
    assert 'aria-sort="descending"' in html


def test_discussions_csv(admin_client, results) -> None:
    response = admin_client.get(
        reverse("metrics:discussions"), {"run": results["v2"].pk, "format": "csv"}
    )
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 2
    assert sorted(float(r["f1"]) for r in rows) == [0.0, pytest.approx(8 / 9)]


def test_errors_page_confusion_and_event_kinds(admin_client, results) -> None:
    url = reverse("metrics:errors")
    html = page(admin_client, url, run=results["v2"].pk)
    assert "2 matched events" in html and "agreement 50%" in html
    assert 'data-variable="symptom"' in html
    event_kinds = html.split('data-testid="event-kinds"')[1].split("</section>")[0]
    assert "married" in event_kinds
    cells = admin_client.get(url, {"run": results["v2"].pk, "format": "json"}).json()["rows"]
    assert {(c["ground_truth"], c["ai"], c["count"]) for c in cells} == {
        ("up", "up", 1),
        ("up", "none", 1),
    }
    kinds = admin_client.get(
        url, {"run": results["v2"].pk, "table": "event-kinds", "format": "json"}
    ).json()["rows"]
    assert kinds == [{"kind": "married", "missed": 1, "spurious": 0}]


# --- queries do not grow with the data ------------------------------------------------------------


def dashboard_queries(client, admin_user) -> int:
    client.force_login(admin_user)
    client.get(DASHBOARD)  # warm caches (content types, sessions)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(DASHBOARD).status_code == 200
    return len(queries)


MAX_QUERIES = 20


@pytest.mark.parametrize("size", [(2, 3), (12, 5)])
def test_dashboard_query_count_is_bounded(client, db, django_assert_max_num_queries, size) -> None:
    data = dashboard_data_create(discussions=size[0], statements=size[1], runs=2)
    client.force_login(data.admin)
    client.get(DASHBOARD)
    with django_assert_max_num_queries(MAX_QUERIES):
        assert client.get(DASHBOARD).status_code == 200


def test_dashboard_query_count_does_not_grow_with_the_data(client, db) -> None:
    small = dashboard_data_create(discussions=2, statements=3, runs=2, prefix="small")
    counts = [dashboard_queries(client, small.admin)]
    dashboard_data_create(discussions=15, statements=6, runs=3, prefix="large")
    counts.append(dashboard_queries(client, small.admin))
    assert counts[0] == counts[1], counts


def test_weakest_discussions_show_approved_counts_and_mark_tentative_figures(
    admin_client, results
) -> None:
    """Both discussions rest on fewer than 5 approved statements: counts shown, tentative."""
    html = page(admin_client, reverse("metrics:discussions"), run=results["v2"].pk)
    weakest = html.split('data-testid="weakest"')[1].split("</section>")[0]
    assert ">Approved</th>" in weakest
    rows = weakest.split("<tr")[2:]
    assert [r.split('<td class="num">')[1].split("<")[0] for r in rows] == ["1", "2"]
    assert all("data-tentative" in r and "tentative</span>" in r for r in rows)
    assert "fewer than 5 approved statements" in weakest
    for row in MetricResult.objects.filter(scope="discussion", run=results["v2"]):
        row.values = {**row.values, "statement_count": 7}
        row.save(update_fields=["values"])
    html = page(admin_client, reverse("metrics:discussions"), run=results["v2"].pk)
    weakest = html.split('data-testid="weakest"')[1].split("</section>")[0]
    assert "data-tentative" not in weakest and "tentative</span>" not in weakest


def test_error_counts_and_confusion_cells_link_to_their_statements(admin_client, results) -> None:
    v2, a, b = results["v2"], results["a"], results["b"]
    (a1,) = [s for s in a.statements.order_by("order")][:1]
    (b1,) = b.statements.all()
    html = page(admin_client, reverse("metrics:errors"), run=v2.pk)
    behind = reverse("metrics:error_statements")
    for query in (
        "kind=people_fp",
        "kind=events_fn",
        "event_kind=married&amp;missed=1",
        "variable=symptom&amp;gt=up&amp;ai=none",
    ):
        assert f"{behind}?run={v2.pk}&amp;{query}" in html, query

    def statements(**query) -> list[str]:
        listed = page(admin_client, behind, run=v2.pk, **query)
        table = listed.split('data-testid="error-statements"')[1].split("</table>")[0]
        return [s.split('"')[0] for s in table.split('href="')[1:] if "/statements/" in s]

    def link(statement) -> str:
        return f"{reverse('audit:statement', args=[statement.pk])}?run={v2.pk}"

    assert statements(kind="people_fp") == [link(b1)]
    assert statements(kind="events_fn") == [link(a1), link(b1)]
    assert statements(event_kind="married", missed="1") == [link(b1)]
    assert statements(event_kind="married", missed="0") == []
    assert statements(variable="symptom", gt="up", ai="none") == [link(a1)]
    assert statements(kind="sarf") == [link(a1)]
    assert admin_client.get(behind).status_code == 400  # no run


def test_error_statements_are_for_admins(auditor_client, results) -> None:
    url = reverse("metrics:error_statements")
    assert auditor_client.get(url, {"run": results["v2"].pk}).status_code == 403


def test_the_statements_behind_a_figure_are_stored_with_the_error_analysis(
    admin_client, results
) -> None:
    """The analysis stores per figure how many statements count in it and how many times; the
    page lists them from the stored index and says so, and a confusion cell where ground
    truth and AI agree is no error: it links to nothing."""
    from metrics.engine.derived import error_analysis_result_compute
    from metrics.models import StatementError

    v2 = results["v2"]
    figures = error_analysis_result_compute(run_id=v2.pk).values["figures"]
    for figure, (n, total) in figures.items():
        stored = StatementError.objects.filter(run=v2, figure=figure)
        assert (stored.count(), sum(stored.values_list("count", flat=True))) == (n, total)
    n, total = figures["events_fn"]
    listed = page(admin_client, reverse("metrics:error_statements"), run=v2.pk, kind="events_fn")
    assert f"{total} in {n} statement" in listed
    assert not [f for f in figures if f.startswith("sarf:") and f.split(":")[2] == f.split(":")[3]]
    html = page(admin_client, reverse("metrics:errors"), run=v2.pk)
    assert "gt=up&amp;ai=up" not in html and "gt=up&amp;ai=none" in html


def test_the_two_error_counts_say_how_they_count(admin_client, results) -> None:
    """The discussions page counts a discussion's end state, the error analysis each
    statement: each heading says which, in plain words, and points at the other."""
    v2 = results["v2"]
    discussions = page(admin_client, reverse("metrics:discussions"), run=v2.pk)
    errors = page(admin_client, reverse("metrics:errors"), run=v2.pk)
    heading = discussions.split('data-testid="error-kinds"')[1].split("</p>")[0]
    assert 'Most common errors <span class="heading-note">· at each discussion\'s end' in heading
    assert "statement by statement instead" in heading
    assert f'href="{reverse("metrics:errors")}?run={v2.pk}"' in heading
    heading = errors.split('data-testid="error-kinds"')[1].split("</p>")[0]
    assert 'Most common errors <span class="heading-note">· statement by statement' in heading
    assert "counts each discussion once, at its end" in heading
    assert f'href="{reverse("metrics:discussions")}?run={v2.pk}"' in heading


def test_a_confusion_cell_links_its_error_only_with_the_codes_url_quoted() -> None:
    """Each error cell carries its drill-down query (quoted as the template's urlencode
    quotes); agreement and empty cells carry none."""
    from django.template import Context, Template

    from metrics import dashboard as dash

    totals = {"sarf": {"relationship": {"a b": {"défini/x": 2, "a b": 3}, "none": {"a b": 0}}}}
    relationship = next(
        c for c in dash.sarf_confusions(totals, {}) if c["variable"] == "relationship"
    )
    cells = {
        (row["label"], ai): (n, q) for row in relationship["rows"] for ai, n, q in row["cells"]
    }
    assert cells[("a b", "a b")] == (3, "")
    assert cells[("a b", "none")] == (0, "")
    written = Template(
        "variable={{ v|urlencode }}&amp;gt={{ gt|urlencode }}&amp;ai={{ ai|urlencode }}"
    ).render(Context({"v": "relationship", "gt": "défini/x", "ai": "a b"}))
    n, query = cells[("défini/x", "a b")]
    assert n == 2 and Template("{{ q }}").render(Context({"q": query})) == written


def test_the_runs_page_reads_the_system_row_and_the_run_rows_in_one_query(results) -> None:
    from metrics import selectors

    with CaptureQueriesContext(connection) as queries:
        system, rows = selectors.system_values_and_run_rows()
    assert len(queries) == 1
    assert system and system == selectors.system_values()
    apart = selectors.run_rows_on(None)
    assert rows and {k: (r.status, r.values) for k, r in rows.items()} == {
        k: (r.status, r.values) for k, r in apart.items()
    }
