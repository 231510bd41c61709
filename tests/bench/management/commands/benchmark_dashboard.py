"""Dashboard render time on a large data set: N discussions x M statements, results computed.

The results rows are bulk-created directly (statement, discussion, run and system rows whose
values are real engine output for synthetic extractions, reused round-robin), so seeding
1,000 x 50 takes seconds rather than a full recompute. The pages are then rendered with the
test Client (the whole request: middleware, view, template) and the median / p95 server time
and the number of SQL queries are printed. Everything runs in one transaction that is rolled
back, so the database is left as it was.
"""

from __future__ import annotations

import html
import random
import re
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, reset_queries, transaction
from django.db.models import Count
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from audit.derived.tallies import TALLY_MODELS, tallies_rebuild
from audit.models import (
    Assignment,
    AuditLogEntry,
    BlindReview,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    Speaker,
    Statement,
    TriageSettings,
    TriageStatement,
)
from audit.services.imports import IMPORTED_MODELS
from audit.services.triage import triage_counts_store
from audit.synthetic import extraction_run, generate_discussion
from audit.views.queue import PAGE_SIZE as QUEUE_PAGE_SIZE
from evalsite.access import ensure_role_groups
from evalsite.match_settings import match_settings
from evalsite.perf.planner import planner_statistics_refresh
from metrics.engine.derived import error_analysis_result_compute, run_comparison_result_compute
from metrics.engine.errors import statement_results_changed
from metrics.engine.services import (
    CODE_VERSION,
    EXTRACTION,
    discussion_key,
    statement_key,
    system_result_compute,
)
from metrics.engine.services.runs import _run_values
from metrics.families.extraction import (
    add_contributions,
    calculate_cumulative_f1,
    calculate_statement_f1,
    empty_totals,
    statement_contribution,
)
from metrics.models import MetricResult, StatementError, StatementPiece
from metrics.own_data.common import INTERAUDITOR_KEY
from metrics.own_data.team_agreement import team_agreement_write
from metrics.registry import INTERAUDITOR
from metrics.results import run_key

GOAL_MS = 100.0
BATCH = 2000
# What the seed writes: an import's tables, the stored tallies and the pages' own; then what the
# error analysis writes. The site refreshes their statistics after each commit; the seed's
# transaction never commits, so it refreshes them itself.
SEEDED = (*IMPORTED_MODELS, *TALLY_MODELS, Assignment, BlindReview, AuditLogEntry, MetricResult)
DERIVED = (StatementError, StatementPiece)
Scope = MetricResult.Scope


@dataclass
class DashboardData:
    runs: list[ExtractionRun]
    discussions: int
    statements: int
    admin: Any
    auditor: Any
    long_discussion: Discussion | None = None
    discussion_ids: list[int] = field(default_factory=list)


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


def _statements_create(
    n_discussions: int, n_statements: int, auditor: Any, *, long_statements: int = 0
) -> list[Statement]:
    """Discussions of n_statements subject statements (plus one of long_statements, last),
    each with the auditor's approved coding."""
    stamp = timezone.now().strftime("%Y%m%d%H%M%S%f")
    sizes = [n_statements] * n_discussions + ([long_statements] if long_statements else [])
    discussions = Discussion.objects.bulk_create(
        [
            Discussion(summary=f"Benchmark discussion {i}", external_id=f"bench-{stamp}-{i}")
            for i in range(len(sizes))
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
            for d, s, size in zip(discussions, speakers, sizes, strict=True)
            for j in range(size)
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
    *,
    discussions: int,
    statements: int,
    runs: int = 2,
    prefix: str = "bench",
    long_statements: int = 0,
) -> DashboardData:
    """Discussions with approved ground truth and every extraction-F1 result row, fresh; with
    long_statements, one more discussion that long (last)."""
    admin, auditor = _users()
    statement_rows = _statements_create(
        discussions, statements, auditor, long_statements=long_statements
    )
    created = []
    for index in range(runs):
        run = ExtractionRun.objects.create(
            model_name=f"{prefix}-model", prompt_version=f"{prefix}-v{index + 1}"
        )
        # Less noise in later runs, so the trend goes up as prompts improve.
        _run_rows_create(run, statement_rows, _variants(0.45 / (index + 1), index + 1))
        created.append(run)
    system_result_compute()
    tallies_rebuild()  # the coding was bulk created, past the model signals
    long = Discussion.objects.get(pk=statement_rows[-1].discussion_id) if long_statements else None
    n_statements = discussions * statements + long_statements
    ids = list(dict.fromkeys(s.discussion_id for s in statement_rows))
    return DashboardData(created, discussions, n_statements, admin, auditor, long, ids)


def statement_approved(run: ExtractionRun, other: ExtractionRun) -> MetricResult:
    """What an approval's recompute leaves: one statement's result in ``run`` rewritten (here
    with the figures ``other`` has for it, which differ) and the run's totals moved."""
    rows = MetricResult.objects.filter(family=EXTRACTION, scope=Scope.STATEMENT)
    row = rows.filter(run=run).order_by("statement__discussion_id", "statement__order")[
        rows.filter(run=run).count() // 2
    ]
    source = rows.get(run=other, statement=row.statement)
    row.values, row.contribution = source.values, source.contribution
    row.input_hash, row.computed_at = "bench-approved", timezone.now()
    row.save(update_fields=["values", "contribution", "input_hash", "computed_at"])
    statement_results_changed([row])
    MetricResult.objects.filter(key=run_key(EXTRACTION, run.pk)).update(computed_at=timezone.now())
    return row


# --- what the other pages need: AI extractions, review work, assignments, skips, log -------


def _payloads(n: int) -> list[tuple[dict, dict]]:
    """(AI delta, ground truth) per statement order, from one synthetic discussion."""
    synthetic = generate_discussion("bench-pages", max(n, 1), noise=0.3, ai_run=1)
    return [(s.ai_delta or {}, s.gt_delta or {}) for s in synthetic.subject_statements()]


def pages_data_create(data: DashboardData) -> dict[str, Any]:
    """Everything else the pages show, at the same scale and in bulk: the latest run's AI
    extraction and the auditor's coding of every statement; a second auditor's submissions
    waiting for review beside the auditor's own (one statement in ten), open assignments for both auditors, skips, blind
    samples and one audit log entry per discussion. In the long discussion the auditor's coding
    of its statement at five sixths is sent back ("Needs changes"), far below the first window.
    Returns the objects the page URLs name."""
    User = get_user_model()
    auditor_group, _ = ensure_role_groups()
    second, _ = User.objects.get_or_create(username="bench-dashboard-auditor2")
    second.groups.add(auditor_group)
    run = data.runs[-1]
    statements = list(
        Statement.objects.filter(discussion_id__in=data.discussion_ids).only("pk", "order")
    )
    payloads = _payloads(max(s.order for s in statements) + 1)
    Extraction.objects.bulk_create(
        [Extraction(statement=s, run=run, pdp_deltas=payloads[s.order][0]) for s in statements],
        batch_size=BATCH,
    )
    mine = Feedback.objects.filter(auditor=data.auditor)
    by_order: dict[int, list[int]] = {}
    for s in statements:
        by_order.setdefault(s.order, []).append(s.pk)
    for order, ids in by_order.items():  # by statement id: the index, never a join
        mine.filter(statement_id__in=ids).update(edited_extraction=payloads[order][1])
    # One statement in ten waits for review: coded by both auditors, neither approved yet.
    waiting = [pk for order, ids in by_order.items() if order % 10 == 3 for pk in ids]
    mine.filter(statement_id__in=waiting).update(status=Feedback.Status.SUBMITTED)
    rejected = None
    if data.long_discussion is not None:
        far = data.long_discussion.statements.order_by("order")
        rejected = mine.get(statement=far[far.count() * 5 // 6])
        Feedback.objects.filter(pk=rejected.pk).update(
            status=Feedback.Status.REJECTED, rejection_reason="Check the dates."
        )
        rejected.refresh_from_db()
    Feedback.objects.bulk_create(
        [
            Feedback(
                statement=s,
                auditor=second,
                status=Feedback.Status.SUBMITTED,
                edited_extraction=payloads[s.order][1],
            )
            for s in statements
            if s.order % 10 == 3
        ],
        batch_size=BATCH,
    )
    _agreement_create(data, second, [s for s in statements if s.order % 10 == 3])
    A = Assignment.Status
    plan = [
        (data.auditor, 5, A.OPEN, ""),
        (second, 7, A.OPEN, ""),
        (second, 9, A.SKIPPED, Assignment.SkipReason.UNCLEAR),
    ]
    Assignment.objects.bulk_create(
        [
            Assignment(
                statement=s,
                discussion_id=s.discussion_id,
                auditor=who,
                assigned_by=data.admin,
                status=status,
                skip_reason=why,
            )
            for s in statements
            for who, remainder, status, why in plan
            if s.order % 10 == remainder
        ],
        batch_size=BATCH,
    )
    BlindReview.objects.bulk_create(
        [BlindReview(statement=s, marked_by=data.admin) for s in statements if s.order == 11],
        batch_size=BATCH,
    )
    AuditLogEntry.objects.bulk_create(
        [
            AuditLogEntry(
                actor=data.admin,
                actor_name=data.admin.get_username(),
                action=AuditLogEntry.Action.APPROVE,
                object_type="discussion",
                object_id=str(pk),
                message=f"Approved the coding of discussion {pk}.",
            )
            for pk in data.discussion_ids
        ],
        batch_size=BATCH,
    )
    tallies_rebuild()  # bulk created and updated, past the model signals
    submitted = Feedback.objects.filter(auditor=second).order_by("pk").first()
    return {"second": second, "rejected": rejected, "submitted": submitted}


def _agreement_create(data: DashboardData, second: Any, shared: list[Statement]) -> None:
    """The inter-auditor family's stored pieces of the statements both auditors coded (one in
    ten) and its system result, as the worker leaves them, and the team page's agreement the
    worker writes from them (``team_agreement_write``)."""
    coders = {
        (statement_id, auditor_id): pk
        for statement_id, auditor_id, pk in Feedback.objects.filter(
            statement_id__in=[s.pk for s in shared]
        ).values_list("statement_id", "auditor_id", "pk")
    }
    pieces = []
    for s in shared:
        mine, theirs = coders[(s.pk, data.auditor.pk)], coders[(s.pk, second.pk)]
        f1 = (s.discussion_id % 10) / 10  # differs between discussions, for the sort
        piece = {"pairs": [[mine, theirs, f1, f1, [], 1, 1]], "truth": [[mine, f1, 1, 0]]}
        key = StatementPiece.make_key(INTERAUDITOR, run_id=None, statement_id=s.pk)
        pieces.append(
            StatementPiece(
                key=key, family=INTERAUDITOR, statement=s, input_hash="bench", piece=piece
            )
        )
    StatementPiece.objects.bulk_create(pieces, batch_size=BATCH)
    pair = {"auditor_a": data.auditor.get_username(), "auditor_b": second.get_username()}
    values = {
        "pairs": [{**pair, "symmetric_f1": {"point": 0.45}, "n_comparisons": len(shared)}],
        "auditors": [{"auditor": pair["auditor_a"], "mean_f1": {"point": 0.45}}],
    }
    MetricResult.objects.update_or_create(
        key=INTERAUDITOR_KEY,
        defaults={
            "family": INTERAUDITOR,
            "scope": MetricResult.Scope.SYSTEM,
            "values": values,
            "code_version": CODE_VERSION,
            "input_hash": "bench",
            "status": MetricResult.Status.FRESH,
            "computed_at": timezone.now(),
        },
    )
    team_agreement_write()


def triage_data_create(data: DashboardData) -> None:
    """Review triage of the latest run, weakest AI first: a score on every subject statement
    (three decimals, so scores tie), three in ten AI accepted, the setting on. The tallies are
    then recounted: accepted statements leave what is still to code."""
    run, draw = data.runs[-1], random.Random(18)
    subjects = Statement.objects.filter(discussion_id__in=data.discussion_ids).subjects()
    TriageStatement.objects.bulk_create(
        (
            TriageStatement(
                run=run,
                statement_id=pk,
                confidence=round(draw.random(), 3),
                provisional=draw.random() < 0.3,
            )
            for pk in subjects.order_by("pk").values_list("pk", flat=True).iterator()
        ),
        batch_size=BATCH,
    )
    TriageSettings.objects.update_or_create(
        run=run, defaults={"enabled": True, "lowest_first": True, "enabled_at": timezone.now()}
    )
    triage_counts_store(run_id=run.pk)  # bulk created, past the service that counts
    tallies_rebuild()


def kept_data_find() -> tuple[DashboardData, dict[str, Any], int]:
    """The data a ``--keep`` run committed, the objects its page URLs name, and its statements
    per discussion, found again (``--seeded``): its users, its runs, its discussions (the long
    one last, when longer)."""
    User = get_user_model()
    names = ("bench-dashboard-admin", "bench-dashboard-auditor", "bench-dashboard-auditor2")
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    runs = list(ExtractionRun.objects.filter(model_name="bench-model").order_by("pk"))
    ids = list(
        Discussion.objects.filter(external_id__startswith="bench-")
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if len(users) < len(names) or not runs or not ids:
        raise CommandError(
            "No data of a --keep run here: run benchmark_dashboard --keep first, on a database "
            "of its own."
        )
    sizes = dict(
        Statement.objects.filter(discussion_id__in=(ids[0], ids[-1]))
        .values_list("discussion_id")
        .annotate(n=Count("pk"))
    )
    long = Discussion.objects.get(pk=ids[-1]) if sizes[ids[-1]] > sizes[ids[0]] else None
    n_discussions = len(ids) - (long is not None)
    n_statements = n_discussions * sizes[ids[0]] + (sizes[ids[-1]] if long else 0)
    admin, auditor, second = (users[name] for name in names)
    data = DashboardData(runs, n_discussions, n_statements, admin, auditor, long, ids)
    mine = Feedback.objects.filter(auditor=auditor, status=Feedback.Status.REJECTED)
    extras = {
        "second": second,
        "rejected": mine.filter(statement__discussion=long).first() if long else None,
        "submitted": Feedback.objects.filter(auditor=second).order_by("pk").first(),
    }
    return data, extras, sizes[ids[0]]


# --- the pages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    name: str
    url: str
    admin: bool  # timed as the admin, else as the auditor


def bench_pages(data: DashboardData, extras: dict[str, Any], statements: int) -> list[Page]:
    """Every page a user meets (see the urls.py files), with real objects behind the ids."""
    left, right = data.runs[0].pk, data.runs[-1].pk
    first = Discussion.objects.filter(summary="Benchmark discussion 0").order_by("pk").last()
    if first is None:
        raise CommandError("the seeded benchmark discussions are missing")
    statement = first.statements.order_by("order")[statements // 2]
    rejected, submitted = extras["rejected"], extras["submitted"]
    pages = [
        Page("auditor dashboard", "/metrics/", False),
        Page("auditor home (queue)", "/", False),
        Page("my queue", "/audit/queue/", False),
        Page("my queue: done", "/audit/queue/?status=done", False),
        Page("my queue: in progress", "/audit/queue/?status=in_progress", False),
        Page(f"audit page ({statements})", f"/audit/discussions/{first.pk}/", False),
        Page("statement page", f"/audit/statements/{statement.pk}/", False),
        Page("admin dashboard", "/metrics/", True),
        Page("review home", "/", True),
        Page("runs", "/metrics/runs/", True),
        Page("run compare picker", "/metrics/runs/compare/", True),
        Page("run comparison", f"/metrics/runs/compare/?left={left}&right={right}", True),
        Page("discussions", f"/metrics/discussions/?run={right}&sort=f1", True),
        Page("discussions p.10", f"/metrics/discussions/?run={right}&sort=-people&page=10", True),
        Page("errors", f"/metrics/errors/?run={right}", True),
        Page("error statements", f"/metrics/errors/statements/?run={right}&kind=events_fn", True),
        Page("review queue", "/audit/review/", True),
        Page("statement review", f"/audit/statements/{submitted.statement_id}/review/", True),
        Page("admin my queue", "/audit/queue/", True),
        Page("team", "/audit/team/", True),
        Page("assignments", "/audit/assignments/", True),
        Page("skipped", "/audit/skipped/", True),
        Page("blind reviews", "/audit/blind/", True),
        Page("audit log", "/audit/log/", True),
        Page("jobs", "/metrics/jobs/", True),
        Page("evaluations", "/metrics/evaluations/", True),
        Page("triage settings", f"/metrics/runs/{right}/triage/", True),
        Page("api tokens", "/api/tokens/", True),
    ]
    if data.long_discussion is not None:
        n_long = data.long_discussion.statements.count()
        url = f"/audit/discussions/{data.long_discussion.pk}/"
        pages.insert(4, Page(f"audit page ({n_long})", url, False))
        pages.insert(5, Page(f"audit page ({n_long}) admin", url, True))
    if rejected is not None:
        pages.insert(
            6, Page("editor (far statement)", f"/audit/feedback/{rejected.pk}/edit/", False)
        )
    return pages


def triage_pages(data: DashboardData) -> list[Page]:
    """The queue in review triage's weakest-first order (timed after ``triage_data_create``):
    the auditor's, and the admin's (who coded nothing: every scored discussion is in the walk)
    first, middle and last page; then the admin dashboard, whose triage card says what triage
    did to the queue."""
    n_pages = -(-(data.discussions + (data.long_discussion is not None)) // QUEUE_PAGE_SIZE)
    return [
        Page("weakest first: my queue", "/audit/queue/", False),
        Page("weakest first: in progress", "/audit/queue/?status=in_progress", False),
        Page("weakest first: admin p.1", "/audit/queue/", True),
        Page("weakest first: admin mid", f"/audit/queue/?page={max(n_pages // 2, 1)}", True),
        Page("weakest first: admin last", f"/audit/queue/?page={n_pages}", True),
        # the dashboard's triage card, with every subject statement scored and some accepted
        Page("triage on: admin dashboard", "/metrics/", True),
    ]


# --- timing ----------------------------------------------------------------------------------


def time_page(
    client: Client, url: str, renders: int, budget_s: float = 20.0, cpu: list[float] | None = None
) -> tuple[list[float], int]:
    """Milliseconds per render (after a warm-up render) and the queries of one render; the
    process's CPU milliseconds per render are appended to ``cpu`` when given. A page slower
    than the budget allows is rendered fewer times (at least once)."""
    started = time.perf_counter()
    _check(client.get(url), url)
    warm_up = time.perf_counter() - started
    if warm_up * (renders + 2) < budget_s:
        _check(client.get(url), url)
    renders = max(1, min(renders, int(budget_s / max(warm_up, 1e-3))))
    reset_queries()  # under DEBUG the log is a bounded deque, full after seeding
    with CaptureQueriesContext(connection) as queries:
        _check(client.get(url), url)
    n_queries = len(queries)  # read now: later requests reset the connection's query log
    times = []
    for _ in range(renders):
        started, cpu_started = time.perf_counter(), time.process_time()
        _check(client.get(url), url)
        times.append((time.perf_counter() - started) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - cpu_started) * 1000)
    return times, n_queries


# What a page loads as it is scrolled: its next window, and its placeholders (in batches, or
# one per card before batching).
SCROLL_LOADS = re.compile(
    r'<(?:div|article|p)\b[^>]*\b(?:class="lazy-batch|class="stmt subject lazy|id="load-more)"'
    r'[^>]*?\bhx-get="([^"]+)"'
)


def scroll_through(client: Client, url: str) -> tuple[int, float]:
    """(requests, milliseconds in all) to load a discussion page and, as a reader scrolling to
    its foot would, every window and every card below."""
    pending: list[tuple[str, dict[str, str]]] = [(url, {})]
    requests, elapsed = 0, 0.0
    while pending:
        next_url, headers = pending.pop(0)
        started = time.perf_counter()
        response = client.get(next_url, headers=headers)
        elapsed += time.perf_counter() - started
        requests += 1
        _check(response, next_url)
        for match in SCROLL_LOADS.finditer(response.content.decode()):
            target = "load-more" if 'id="load-more"' in match.group(0) else ""
            loads = {"HX-Request": "true", "HX-Target": target}
            pending.append((urljoin(next_url, html.unescape(match.group(1))), loads))
    return requests, elapsed * 1000


def _check(response: Any, url: str) -> None:
    if response.status_code != 200:
        raise CommandError(f"{url} answered {response.status_code}")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Timing:
    median: float
    p95: float
    queries: int


def _chosen(name: str, wanted: list[str] | None, skipped: list[str] | None) -> bool:
    if wanted and not any(text in name for text in wanted):
        return False
    return not (skipped and any(text in name for text in skipped))


class _Rollback(Exception):
    pass


class Command(BaseCommand):
    help = (
        "Time every page on N discussions x M statements (one more discussion of --long "
        "statements); with --scales, at each number of discussions, and flag a page whose query "
        "count grows with the data."
    )

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument(
            "--scales",
            type=int,
            nargs="+",
            metavar="N",
            help="numbers of discussions to time in turn (e.g. 1000 5000); overrides --discussions",
        )
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument(
            "--long", type=int, default=300, help="statements of the one long discussion (0: none)"
        )
        parser.add_argument("--runs", type=int, default=2, help="extraction runs with results")
        parser.add_argument("--renders", type=int, default=30, help="timed renders per page")
        parser.add_argument(
            "--pages",
            nargs="+",
            metavar="TEXT",
            help="time only the pages whose name contains one of these (e.g. queue 'audit page')",
        )
        parser.add_argument(
            "--skip",
            nargs="+",
            metavar="TEXT",
            help="leave out the pages whose name contains one of these",
        )
        parser.add_argument(
            "--approval",
            action="store_true",
            help="after the first error analysis, change one statement's result (as an approval's "
            "recompute does) and time the error analysis again, then its full rebuild",
        )
        parser.add_argument(
            "--keep",
            action="store_true",
            help="commit the seeded data instead of rolling it back (to profile a page on it "
            "afterwards; use a database of its own)",
        )
        parser.add_argument(
            "--seeded",
            action="store_true",
            help="time the pages on the data a --keep run left, without seeding (the same data "
            "before and after a change, in minutes instead of a seed's quarter of an hour); "
            "nothing is written",
        )
        parser.add_argument(
            "--compare",
            action="store_true",
            help="kept for old scripts: every page is timed anyway",
        )

    def handle(self, *args, **options):
        if options["discussions"] < 1 or options["statements"] < 1 or options["runs"] < 1:
            raise CommandError("Need at least one discussion, statement and run.")
        if options["long"] < 0 or any(n < 1 for n in options["scales"] or []):
            raise CommandError("--long must be 0 or more and every scale at least 1.")
        if options["seeded"]:
            if options["scales"] or options["keep"] or options["approval"]:
                raise CommandError("--seeded times kept data: no --scales, --keep or --approval.")
            try:
                with transaction.atomic():  # the triage setting is switched while timing
                    self._seeded(options)
                    raise _Rollback
            except _Rollback:
                return
        scales = options["scales"] or [options["discussions"]]
        results: dict[int, dict[str, Timing]] = {}
        for scale in scales:
            try:
                with transaction.atomic():
                    results[scale] = self._benchmark({**options, "discussions": scale})
                    if not options["keep"]:
                        raise _Rollback
            except _Rollback:
                self.stdout.write("seeded rows rolled back\n")
        if len(scales) > 1:
            self._scales_report(results, options["statements"])

    def _benchmark(self, options: dict) -> dict[str, Timing]:
        started = time.perf_counter()
        data = dashboard_data_create(
            discussions=options["discussions"],
            statements=options["statements"],
            runs=options["runs"],
            long_statements=options["long"],
        )
        extras = pages_data_create(data)
        # As a site that grew to this size plans its queries (our own transaction's rows count).
        planner_statistics_refresh(models=SEEDED)
        n_rows = MetricResult.objects.filter(run__in=data.runs).count()
        self.stdout.write(
            f"{connection.vendor}: seeded {data.discussions} discussions x "
            f"{options['statements']} statements"
            + (f" + one of {options['long']}" if options["long"] else "")
            + f", {len(data.runs)} runs, {n_rows} result rows "
            f"in {time.perf_counter() - started:.1f} s"
        )
        self._derived_compute(data)
        planner_statistics_refresh(models=DERIVED)
        if options.get("approval"):
            self._approval_error_analysis(data)
        return self._pages_time(data, extras, options["statements"], options)

    def _seeded(self, options: dict) -> dict[str, Timing]:
        """The pages on the data a --keep run left: the plain ones with "weakest AI first" off,
        as that run timed them, then the weakest-first ones with it on again."""
        data, extras, per_discussion = kept_data_find()
        self.stdout.write(
            f"{connection.vendor}: the kept {data.discussions} discussions x {per_discussion} "
            "statements" + (" + a long one" if data.long_discussion else "") + ", not seeded"
        )
        triaged = list(
            TriageSettings.objects.filter(lowest_first=True).values_list("pk", flat=True)
        )
        TriageSettings.objects.filter(pk__in=triaged).update(lowest_first=False)

        def triage_on() -> None:
            TriageSettings.objects.filter(pk__in=triaged).update(lowest_first=True)
            if not triaged:  # kept before its weakest-first pages were timed
                self._triage_write(data)

        return self._pages_time(data, extras, per_discussion, options, triage_on=triage_on)

    def _pages_time(
        self,
        data: DashboardData,
        extras: dict[str, Any],
        per_discussion: int,
        options: dict,
        triage_on: Callable[[], None] | None = None,
    ) -> dict[str, Timing]:
        """Every page timed (the weakest-first ones after ``triage_on``: review triage's scores
        written, by default), and the count of those under the goal."""
        if settings.DEBUG:  # the served site runs without it: figures here are the slower ones
            self.stdout.write("DEBUG is on: templates keep debug data and every query is logged")
        clients = {True: Client(), False: Client()}
        clients[True].force_login(data.admin)
        clients[False].force_login(data.auditor)
        timings: dict[str, Timing] = {}
        hosts = [*settings.ALLOWED_HOSTS, "testserver"]
        with override_settings(ALLOWED_HOSTS=hosts):
            for page in bench_pages(data, extras, per_discussion):
                self._time(page, clients, options, timings)
            triaged = [
                p
                for p in triage_pages(data)
                if _chosen(p.name, options.get("pages"), options.get("skip"))
            ]
            if triaged:
                if triage_on is None:
                    self._triage_write(data)
                else:
                    triage_on()
            for page in triaged:
                self._time(page, clients, options, timings)
            if data.long_discussion is not None and _chosen(
                "scrolled through", options.get("pages"), options.get("skip")
            ):
                self._scroll_report(clients[False], data.long_discussion)
        slow = [name for name, t in timings.items() if t.median >= GOAL_MS]
        self.stdout.write(
            f"{len(timings) - len(slow)} of {len(timings)} pages under {GOAL_MS:.0f} ms"
            + (f"; SLOWER: {', '.join(slow)}" if slow else "")
        )
        return timings

    def _scroll_report(self, client: Client, discussion: Discussion) -> None:
        """The long discussion read to its foot, every card loaded (a load, not a page: not
        counted among the pages under the goal)."""
        url = f"/audit/discussions/{discussion.pk}/"
        runs = [scroll_through(client, url) for _ in range(3)]
        requests, elapsed = runs[0][0], statistics.median(ms for _, ms in runs)
        n_statements = discussion.statements.count()
        self.stdout.write(
            f"audit page ({n_statements}) scrolled through: {requests} requests, "
            f"{elapsed:.0f} ms in all (median of 3)"
        )

    def _triage_write(self, data: DashboardData) -> None:
        started = time.perf_counter()
        triage_data_create(data)
        planner_statistics_refresh(models=(TriageStatement, *TALLY_MODELS))
        elapsed = time.perf_counter() - started
        self.stdout.write(f"review triage scored every subject statement in {elapsed:.1f} s")

    def _time(
        self, page: Page, clients: dict[bool, Client], options: dict, timings: dict[str, Timing]
    ) -> None:
        if _chosen(page.name, options.get("pages"), options.get("skip")):
            cpu: list[float] = []
            times, queries = time_page(clients[page.admin], page.url, options["renders"], cpu=cpu)
            timings[page.name] = self._report(page.name, times, queries, cpu)

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

    def _approval_error_analysis(self, data: DashboardData) -> None:
        """The worker's error analysis after one statement's result changed (its error index
        updated for that statement), then rebuilt whole."""
        run = data.runs[-1]
        statement_approved(run, data.runs[0])
        for what, full in (("after one approval", False), ("rebuilt whole", True)):
            started = time.perf_counter()
            error_analysis_result_compute(run_id=run.pk, full=full)
            elapsed = (time.perf_counter() - started) * 1000
            self.stdout.write(f"error analysis {what} in {elapsed:.0f} ms")

    def _report(self, name: str, times: list[float], queries: int, cpu: list[float]) -> Timing:
        median, p95 = statistics.median(times), percentile(times, 0.95)
        verdict = "OK" if median < GOAL_MS else f"SLOWER than the {GOAL_MS:.0f} ms goal"
        cpu_text = f"  CPU {statistics.median(cpu):7.1f} ms" if cpu else ""
        self.stdout.write(
            f"{name:<26} median {median:7.1f} ms  p95 {p95:7.1f} ms{cpu_text}  "
            f"{queries:3d} queries  ({len(times)} renders)  {verdict}"
        )
        return Timing(median, p95, queries)

    def _scales_report(self, results: dict[int, dict[str, Timing]], statements: int) -> None:
        """Per page, the median and query count at each scale; "grows" when the count differs."""
        scales = list(results)
        self.stdout.write(
            "page".ljust(26) + "".join(f"{f'{n} x {statements}':>24}" for n in scales) + "  queries"
        )
        grows = []
        for name in results[scales[0]]:
            cells = [results[n].get(name) for n in scales]
            counts = {t.queries for t in cells if t is not None}
            verdict = "constant" if len(counts) == 1 else "GROWS"
            if len(counts) > 1:
                grows.append(name)
            self.stdout.write(
                name.ljust(26)
                + "".join(
                    f"{t.median:>9.1f} ms {t.queries:>4d} q{'' if t.median < GOAL_MS else '!':1}".rjust(
                        24
                    )
                    if t
                    else "–".rjust(24)
                    for t in cells
                )
                + f"  {verdict}"
            )
        slow = sorted({n for r in results.values() for n, t in r.items() if t.median >= GOAL_MS})
        self.stdout.write(
            f"query count grows with the data: {', '.join(grows) or 'no page'}; "
            f"median over {GOAL_MS:.0f} ms (!): {', '.join(slow) or 'no page'}"
        )
