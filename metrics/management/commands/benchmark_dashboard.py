"""Dashboard render time on a large data set: N discussions x M statements, results computed.

The results rows are bulk-created directly (statement, discussion, run and system rows whose
values are real engine output for synthetic extractions, reused round-robin), so seeding
1,000 x 50 takes seconds rather than a full recompute. The pages are then rendered with the
test Client (the whole request: middleware, view, template) and the median / p95 server time
and the number of SQL queries are printed. Everything runs in one transaction that is rolled
back, so the database is left as it was.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, reset_queries, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from audit.models import Discussion, ExtractionRun, Feedback, Speaker, Statement
from audit.synthetic import extraction_run, generate_discussion
from evalsite.access import ensure_role_groups
from metrics.derived import error_analysis_result_compute, run_comparison_result_compute
from metrics.families.extraction import (
    add_contributions,
    calculate_cumulative_f1,
    calculate_statement_f1,
    empty_totals,
    statement_contribution,
)
from metrics.match_settings import match_settings
from metrics.models import MetricResult
from metrics.results import run_key
from metrics.services import (
    CODE_VERSION,
    EXTRACTION,
    _run_values,
    discussion_key,
    statement_key,
    system_result_compute,
)

GOAL_MS = 100.0
BATCH = 2000
Scope = MetricResult.Scope


@dataclass
class DashboardData:
    runs: list[ExtractionRun]
    discussions: int
    statements: int
    admin: Any
    auditor: Any


# --- engine output to reuse ----------------------------------------------------------------


def _variants(noise: float, ai_run: int) -> tuple[list[tuple[dict, dict]], list[tuple[dict, dict]]]:
    """(values, contribution) of real statement and cumulative results, a few discussions' worth."""
    statements, discussions = [], []
    for seed in range(3):
        synthetic = generate_discussion(f"bench-dashboard-{seed}", 12, noise=noise, ai_run=ai_run)
        ai = extraction_run(synthetic, noise=noise, ai_run=ai_run)
        gt = [s.gt_delta for s in synthetic.statements if s.speaker == "subject"]
        for ai_delta, gt_delta in zip(ai, gt, strict=True):
            metrics = calculate_statement_f1(ai_delta, gt_delta, settings=match_settings())
            statements.append((metrics.to_dict(), statement_contribution(metrics)))
        cumulative = calculate_cumulative_f1(ai, gt, settings=match_settings())
        discussions.append((cumulative.to_dict(), statement_contribution(cumulative)))
    return statements, discussions


def _with_ids(pair: tuple[dict, dict], discussion_id: int, statement_id: int | None) -> tuple:
    values, contribution = dict(pair[0]), dict(pair[1])
    values["discussion_id"] = discussion_id
    if statement_id is not None:
        values["statement_id"] = statement_id
    contribution["discussions"] = {str(discussion_id): 1}
    return values, contribution


# --- seeding -------------------------------------------------------------------------------


def _users() -> tuple[Any, Any]:
    User = get_user_model()
    auditor_group, admin_group = ensure_role_groups()
    admin, _ = User.objects.get_or_create(username="bench-dashboard-admin")
    auditor, _ = User.objects.get_or_create(username="bench-dashboard-auditor")
    admin.groups.add(admin_group)
    auditor.groups.add(auditor_group)
    return admin, auditor


def _statements_create(n_discussions: int, n_statements: int, auditor: Any) -> list[Statement]:
    stamp = timezone.now().strftime("%Y%m%d%H%M%S%f")
    discussions = Discussion.objects.bulk_create(
        [
            Discussion(summary=f"Benchmark discussion {i}", external_id=f"bench-{stamp}-{i}")
            for i in range(n_discussions)
        ],
        batch_size=BATCH,
    )
    speakers = Speaker.objects.bulk_create(
        [Speaker(discussion=d, name="Subject", type=Speaker.Type.SUBJECT) for d in discussions],
        batch_size=BATCH,
    )
    statements = Statement.objects.bulk_create(
        [
            Statement(discussion=d, speaker=s, order=j, text=f"Statement {j}")
            for d, s in zip(discussions, speakers, strict=True)
            for j in range(n_statements)
        ],
        batch_size=BATCH,
    )
    Feedback.objects.bulk_create(
        [
            Feedback(statement=s, auditor=auditor, status=Feedback.Status.APPROVED)
            for s in statements
        ],
        batch_size=BATCH,
    )
    return statements


def _row(scope: str, key: str, values: dict, contribution: dict, **ids: Any) -> MetricResult:
    return MetricResult(
        key=key,
        family=EXTRACTION,
        scope=scope,
        values=values,
        contribution=contribution,
        match_settings=match_settings().to_dict(),
        code_version=CODE_VERSION,
        input_hash="bench",
        status=MetricResult.Status.FRESH,
        computed_at=timezone.now(),
        **ids,
    )


def _run_rows_create(run: ExtractionRun, statements: list[Statement], variants: tuple) -> None:
    statement_variants, discussion_variants = variants
    totals = {"statements": empty_totals(), "discussions": empty_totals()}
    rows: list[MetricResult] = []
    by_discussion: dict[int, list[Statement]] = {}
    for index, statement in enumerate(statements):
        by_discussion.setdefault(statement.discussion_id, []).append(statement)
        pair = statement_variants[(index * 7 + run.pk) % len(statement_variants)]
        values, contribution = _with_ids(pair, statement.discussion_id, statement.pk)
        key = statement_key(
            run_id=run.pk, discussion_id=statement.discussion_id, statement_id=statement.pk
        )
        rows.append(
            _row(
                Scope.STATEMENT,
                key,
                values,
                contribution,
                run=run,
                discussion_id=statement.discussion_id,
                statement_id=statement.pk,
            )
        )
    totals["statements"] = _sum(row.contribution or {} for row in rows)
    for index, discussion_id in enumerate(by_discussion):  # discussions in creation order
        pair = discussion_variants[(index + run.pk) % len(discussion_variants)]
        values, contribution = _with_ids(pair, discussion_id, None)
        values["statement_count"] = len(by_discussion[discussion_id])
        key = discussion_key(run_id=run.pk, discussion_id=discussion_id)
        rows.append(
            _row(Scope.DISCUSSION, key, values, contribution, run=run, discussion_id=discussion_id)
        )
    totals["discussions"] = _sum(r.contribution or {} for r in rows if r.scope == Scope.DISCUSSION)
    rows.append(_row(Scope.RUN, run_key(EXTRACTION, run.pk), _run_values(totals), totals, run=run))
    MetricResult.objects.bulk_create(rows, batch_size=BATCH)


def _sum(contributions: Iterable[dict]) -> dict[str, Any]:
    """Totals of many contributions: summed without the discussions table, added once at the end
    (add_contributions copies its input, which would be quadratic here)."""
    totals, discussions = empty_totals(), dict[Any, int]()
    for contribution in contributions:
        for key, count in contribution["discussions"].items():
            discussions[key] = discussions.get(key, 0) + count
        totals = add_contributions(totals, {**contribution, "discussions": {}})
    totals["discussions"] = discussions
    return totals


def dashboard_data_create(
    *, discussions: int, statements: int, runs: int = 2, prefix: str = "bench"
) -> DashboardData:
    """Discussions with approved ground truth and every extraction-F1 result row, fresh."""
    admin, auditor = _users()
    statement_rows = _statements_create(discussions, statements, auditor)
    created = []
    for index in range(runs):
        run = ExtractionRun.objects.create(
            model_name=f"{prefix}-model", prompt_version=f"{prefix}-v{index + 1}"
        )
        # Less noise in later runs, so the trend goes up as prompts improve.
        _run_rows_create(run, statement_rows, _variants(0.45 / (index + 1), index + 1))
        created.append(run)
    system_result_compute()
    return DashboardData(created, discussions, discussions * statements, admin, auditor)


# --- timing ----------------------------------------------------------------------------------


def time_page(client: Client, url: str, renders: int) -> tuple[list[float], int]:
    """Milliseconds per render (after two warm-up renders) and the queries of one render."""
    for _ in range(2):
        _check(client.get(url), url)
    reset_queries()  # under DEBUG the log is a bounded deque, full after seeding
    with CaptureQueriesContext(connection) as queries:
        _check(client.get(url), url)
    n_queries = len(queries)  # read now: later requests reset the connection's query log
    times = []
    for _ in range(renders):
        started = time.perf_counter()
        _check(client.get(url), url)
        times.append((time.perf_counter() - started) * 1000)
    return times, n_queries


def _check(response: Any, url: str) -> None:
    if response.status_code != 200:
        raise CommandError(f"{url} answered {response.status_code}")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class _Rollback(Exception):
    pass


class Command(BaseCommand):
    help = "Time the admin dashboard (and the run pages) on N discussions x M statements."

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument("--runs", type=int, default=2, help="extraction runs with results")
        parser.add_argument("--renders", type=int, default=30, help="timed renders per page")
        parser.add_argument(
            "--compare", action="store_true", help="also time the run comparison and other pages"
        )

    def handle(self, *args, **options):
        if options["discussions"] < 1 or options["statements"] < 1 or options["runs"] < 1:
            raise CommandError("Need at least one discussion, statement and run.")
        try:
            with transaction.atomic():
                self._benchmark(options)
                raise _Rollback
        except _Rollback:
            self.stdout.write("seeded rows rolled back")

    def _benchmark(self, options: dict) -> None:
        started = time.perf_counter()
        data = dashboard_data_create(
            discussions=options["discussions"],
            statements=options["statements"],
            runs=options["runs"],
        )
        n_rows = MetricResult.objects.filter(run__in=data.runs).count()
        self.stdout.write(
            f"{connection.vendor}: seeded {data.discussions} discussions x "
            f"{options['statements']} statements, {len(data.runs)} runs, {n_rows} result rows "
            f"in {time.perf_counter() - started:.1f} s"
        )
        client = Client()
        client.force_login(data.admin)
        pages = {"admin dashboard": "/metrics/"}
        if options["compare"]:
            left, right = data.runs[0].pk, data.runs[-1].pk
            discussion = Discussion.objects.filter(summary="Benchmark discussion 0").last()
            if discussion is None:
                raise CommandError("the seeded benchmark discussions are missing")
            pages.update(
                {
                    "runs": "/metrics/runs/",
                    "run comparison": f"/metrics/runs/compare/?left={left}&right={right}",
                    "discussions": f"/metrics/discussions/?run={right}&sort=f1",
                    "errors": f"/metrics/errors/?run={right}",
                    "review queue": "/audit/review/",
                    f"audit page ({options['statements']})": f"/audit/discussions/{discussion.pk}/",
                }
            )
            self._derived_compute(data)
        hosts = [*settings.ALLOWED_HOSTS, "testserver"]
        with override_settings(ALLOWED_HOSTS=hosts):
            auditor = Client()
            auditor.force_login(data.auditor)
            self._report("auditor dashboard", *time_page(auditor, "/metrics/", options["renders"]))
            for name, url in pages.items():
                self._report(name, *time_page(client, url, options["renders"]))

    def _derived_compute(self, data: DashboardData) -> None:
        """What the slow worker does when the runs' results change; the pages then read it."""
        left, right = data.runs[0], data.runs[-1]
        started = time.perf_counter()
        run_comparison_result_compute(left_id=left.pk, right_id=right.pk)
        elapsed = (time.perf_counter() - started) * 1000
        self.stdout.write(f"run comparison computed in the background in {elapsed:.0f} ms")
        started = time.perf_counter()
        error_analysis_result_compute(run_id=right.pk)
        elapsed = (time.perf_counter() - started) * 1000
        self.stdout.write(f"error analysis computed in the background in {elapsed:.0f} ms")

    def _report(self, name: str, times: list[float], queries: int) -> None:
        median, p95 = statistics.median(times), percentile(times, 0.95)
        verdict = ""
        if name == "admin dashboard":
            verdict = "  OK" if median < GOAL_MS else f"  SLOWER than the {GOAL_MS:.0f} ms goal"
        self.stdout.write(
            f"{name:<18} median {median:7.1f} ms  p95 {p95:7.1f} ms  {queries:3d} queries  "
            f"({len(times)} renders){verdict}"
        )
