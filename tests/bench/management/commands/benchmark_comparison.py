"""The prompt-improvement loop's pages on a large data set: a baseline and a candidate
configuration of R replicates each, over N discussions x M statements with approved ground
truth and every extraction result stored; the comparison of the two configurations and both
configurations' trend summaries computed by the worker's tasks; then the comparison page and
the trend page timed (median / p95 server time and SQL queries), which read those stored rows.

The result rows are real engine output reused: a pool of synthetic discussions is scored for
every run (statement F1 and cumulative F1 against its ground truth), and seeded discussion i
is pool discussion i mod the pool's size, with that discussion's ground truth, AI payloads and
figures, so the statements a comparison lists have the payloads their figures came from.
Everything is bulk-created, a hundred discussions at a time; the run rows are then summed by
the engine (``run_result_compute``). All of it runs in one transaction rolled back at the end,
unless ``--keep`` commits it for ``--seeded`` to time again.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.db.models import Count
from django.test import Client
from django.test.utils import override_settings
from django.utils import timezone

from audit.models import (
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    RunConfiguration,
    Speaker,
    Statement,
)
from audit.services.imports import IMPORTED_MODELS
from audit.synthetic import extraction_run, generate_discussion
from evalsite.access import ensure_role_groups
from evalsite.celery import app
from evalsite.match_settings import match_settings
from evalsite.perf.planner import planner_statistics_refresh
from metrics.engine.derived import comparison_key
from metrics.engine.services import (
    CODE_VERSION,
    EXTRACTION,
    discussion_key,
    run_result_compute,
    statement_key,
    system_result_compute,
)
from metrics.engine.trend import summary_key
from metrics.families.extraction import (
    calculate_cumulative_f1,
    calculate_statement_f1,
    statement_contribution,
)
from metrics.models import MetricResult
from tests.bench.management.commands.benchmark_dashboard import percentile, time_page

GOAL_MS = 200.0
MODEL = "bench-loop"
# The two configurations: prompt version and the synthetic AI's noise (the candidate is better).
SIDES = (("v1-baseline", 0.3), ("v2-candidate", 0.2))
POOL = 12  # synthetic discussions scored for every run, reused round-robin
CHUNK = 100  # discussions bulk-created at a time
BATCH = 2000
COMPARISON_TASK = "metrics.tasks.compute_run_comparison"
SUMMARY_TASK = "metrics.tasks.compute_configuration_summary"
Scope = MetricResult.Scope


@dataclass
class PoolDiscussion:
    """One synthetic discussion: its texts and ground truth, and per run (side, replicate) the
    AI payloads with the engine's figures of each statement and of the whole discussion."""

    subject: str
    summary: str
    texts: list[str]
    truth: list[dict]
    runs: dict[tuple[int, int], tuple[list[dict], list[tuple[dict, dict]], tuple[dict, dict]]]


@dataclass
class LoopData:
    admin: Any
    configurations: list[RunConfiguration]  # baseline, candidate
    runs: dict[tuple[int, int], ExtractionRun]  # (side, replicate) -> run
    discussions: int
    statements: int  # per discussion

    @property
    def sides(self) -> tuple[str, str]:
        return f"c{self.configurations[0].pk}", f"c{self.configurations[1].pk}"


def _pool(size: int, statements: int, replicates: int) -> list[PoolDiscussion]:
    settings_ = match_settings()
    pool = []
    for p in range(size):
        synthetic = generate_discussion(f"bench-loop-{p}", statements, expert_turns=False)
        subject = synthetic.subject_statements()
        truth = [s.gt_delta or {} for s in subject]
        runs = {}
        for side, (_, noise) in enumerate(SIDES):
            for replicate in range(replicates):
                ai = extraction_run(synthetic, noise=noise, ai_run=100 * side + replicate + 1)
                figures = [
                    calculate_statement_f1(a, g, settings=settings_)
                    for a, g in zip(ai, truth, strict=True)
                ]
                cumulative = calculate_cumulative_f1(ai, truth, settings=settings_)
                runs[(side, replicate)] = (
                    ai,
                    [(m.to_dict(), statement_contribution(m)) for m in figures],
                    (cumulative.to_dict(), statement_contribution(cumulative)),
                )
        pool.append(
            PoolDiscussion(
                synthetic.subject_name, synthetic.summary, [s.text for s in subject], truth, runs
            )
        )
    return pool


def _admin() -> Any:
    _, admin_group = ensure_role_groups()
    admin, _ = get_user_model().objects.get_or_create(username=f"{MODEL}-admin")
    admin.groups.add(admin_group)
    return admin


def _row(scope: str, key: str, run: ExtractionRun, values: dict, contribution: dict, **ids: Any):
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
        run=run,
        **ids,
    )


def _with_ids(pair: tuple[dict, dict], discussion_id: int, statement_id: int | None) -> tuple:
    values, contribution = dict(pair[0]), dict(pair[1])
    values["discussion_id"] = discussion_id
    if statement_id is not None:
        values["statement_id"] = statement_id
    contribution["discussions"] = {str(discussion_id): 1}
    return values, contribution


def _chunk_create(
    pool: list[PoolDiscussion], first: int, count: int, runs: dict, admin: Any, tag: str
) -> None:
    """Discussions first .. first + count - 1: statements, approved ground truth, every run's
    extraction and its statement and discussion results."""
    sources = [pool[i % len(pool)] for i in range(first, first + count)]
    discussions = Discussion.objects.bulk_create(
        Discussion(summary=s.summary, external_id=f"{tag}-{first + i}")
        for i, s in enumerate(sources)
    )
    speakers = Speaker.objects.bulk_create(
        Speaker(discussion=d, name=s.subject, type=Speaker.Type.SUBJECT)
        for d, s in zip(discussions, sources, strict=True)
    )
    statements = Statement.objects.bulk_create(
        (
            Statement(discussion=d, speaker=sp, order=j, text=text)
            for d, sp, s in zip(discussions, speakers, sources, strict=True)
            for j, text in enumerate(s.texts)
        ),
        batch_size=BATCH,
    )
    placed = [
        (statement, source, j)
        for statement, (source, j) in zip(
            statements, ((s, j) for s in sources for j in range(len(s.texts))), strict=True
        )
    ]
    now = timezone.now()
    Feedback.objects.bulk_create(
        (
            Feedback(
                statement=st,
                auditor=admin,
                edited_extraction=source.truth[j],
                status=Feedback.Status.APPROVED,
                approved_by=admin,
                approved_at=now,
            )
            for st, source, j in placed
        ),
        batch_size=BATCH,
    )
    for which, run in runs.items():
        Extraction.objects.bulk_create(
            (
                Extraction(statement=st, run=run, pdp_deltas=source.runs[which][0][j])
                for st, source, j in placed
            ),
            batch_size=BATCH,
        )
        rows = []
        for st, source, j in placed:
            values, contribution = _with_ids(source.runs[which][1][j], st.discussion_id, st.pk)
            key = statement_key(run_id=run.pk, discussion_id=st.discussion_id, statement_id=st.pk)
            rows.append(
                _row(
                    Scope.STATEMENT,
                    key,
                    run,
                    values,
                    contribution,
                    discussion_id=st.discussion_id,
                    statement_id=st.pk,
                )
            )
        for discussion, source in zip(discussions, sources, strict=True):
            values, contribution = _with_ids(source.runs[which][2], discussion.pk, None)
            values["statement_count"] = len(source.texts)
            key = discussion_key(run_id=run.pk, discussion_id=discussion.pk)
            rows.append(
                _row(Scope.DISCUSSION, key, run, values, contribution, discussion_id=discussion.pk)
            )
        MetricResult.objects.bulk_create(rows, batch_size=BATCH)


def loop_data_create(
    *, discussions: int, statements: int, replicates: int, progress: Any = None
) -> LoopData:
    """Two configurations of ``replicates`` runs each over ``discussions`` x ``statements``,
    every result stored and each run's row summed by the engine."""
    tag = f"{MODEL}-{timezone.now():%Y%m%d%H%M%S%f}"
    admin = _admin()
    pool = _pool(min(POOL, discussions), statements, replicates)
    configurations = [
        RunConfiguration.plain(model_name=MODEL, prompt_version=version) for version, _ in SIDES
    ]
    runs = {
        (side, replicate): ExtractionRun.objects.create(
            configuration=configuration,
            notes=f"{'baseline' if side == 0 else 'candidate'} prompt, run {replicate + 1}",
        )
        for side, configuration in enumerate(configurations)
        for replicate in range(replicates)
    }
    for first in range(0, discussions, CHUNK):
        _chunk_create(pool, first, min(CHUNK, discussions - first), runs, admin, tag)
        if progress:
            progress(min(first + CHUNK, discussions))
    # As a site that imported this much plans its queries (a tiny seed leaves them as they are).
    written = discussions * statements * (len(runs) + 1)
    planner_statistics_refresh(models=(*IMPORTED_MODELS, MetricResult), written=written)
    for run in runs.values():
        run_result_compute(run_id=run.pk, rebuild=True)
    system_result_compute()
    return LoopData(admin, configurations, runs, discussions, statements)


def kept_data_find() -> LoopData:
    """The data a ``--keep`` run committed (``--seeded``)."""
    configurations: list[RunConfiguration] = []
    for version, _ in SIDES:
        found = RunConfiguration.objects.filter(model_name=MODEL, prompt_version=version).first()
        if found is None or not found.runs.exists():
            raise CommandError(
                "No data of a --keep run here: run benchmark_comparison --keep first, on a "
                "database of its own."
            )
        configurations.append(found)
    runs = {
        (side, run.replicate - 1): run
        for side, configuration in enumerate(configurations)
        for run in configuration.runs.order_by("replicate")
    }
    admin = get_user_model().objects.get(username=f"{MODEL}-admin")
    one = next(iter(runs.values()))
    per_discussion = (
        Extraction.objects.filter(run=one)
        .values("statement__discussion_id")
        .annotate(n=Count("pk"))
        .order_by("statement__discussion_id")
    )
    counts = [row["n"] for row in per_discussion]
    if not counts:
        raise CommandError("The kept runs have no extractions.")
    return LoopData(admin, configurations, runs, len(counts), max(counts))


@dataclass(frozen=True)
class Timing:
    median: float
    p95: float
    queries: int


class _Rollback(Exception):
    pass


class Command(BaseCommand):
    help = (
        "Time the comparison page and the trend page on two configurations of R replicates "
        "over N discussions x M statements, their stored rows computed by the worker's tasks."
    )

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument("--replicates", type=int, default=3, help="runs per configuration")
        parser.add_argument("--renders", type=int, default=30, help="timed renders per page")
        parser.add_argument(
            "--keep",
            action="store_true",
            help="commit the seeded data instead of rolling it back (use a database of its own)",
        )
        parser.add_argument(
            "--seeded",
            action="store_true",
            help="reuse the data a --keep run left: compute and time again without seeding "
            "(what is written is rolled back)",
        )

    def handle(self, *args, **options):
        if min(options["discussions"], options["statements"], options["renders"]) < 1:
            raise CommandError("Need at least one discussion, statement and render.")
        if options["replicates"] < 1:
            raise CommandError("Need at least one replicate a side.")
        if options["seeded"] and options["keep"]:
            raise CommandError("--seeded times kept data: no --keep.")
        try:
            with transaction.atomic():
                self._benchmark(options)
                if options["seeded"] or not options["keep"]:
                    raise _Rollback
        except _Rollback:
            self.stdout.write("what the benchmark wrote is rolled back")

    def _benchmark(self, options: dict) -> None:
        started = time.perf_counter()
        if options["seeded"]:
            data = kept_data_find()
            what = "the kept"
        else:
            data = loop_data_create(
                discussions=options["discussions"],
                statements=options["statements"],
                replicates=options["replicates"],
                progress=self._progress(options["discussions"]),
            )
            what = "seeded"
        n_replicates = len(data.runs) // 2
        self.stdout.write(
            f"{connection.vendor}: {what} {data.discussions} discussions x {data.statements} "
            f"statements, 2 configurations x {n_replicates} replicates"
            + (f" in {time.perf_counter() - started:.1f} s" if what == "seeded" else "")
        )
        self._worker_compute(data)
        timings = self._pages_time(data, options["renders"])
        self._check_read_only(data)
        slow = [name for name, t in timings.items() if t.median >= GOAL_MS]
        self.stdout.write(
            f"{len(timings) - len(slow)} of {len(timings)} pages under {GOAL_MS:.0f} ms"
            + (f"; SLOWER: {', '.join(slow)}" if slow else "")
        )

    def _progress(self, total: int):
        started = time.perf_counter()
        step = max(total // 10, CHUNK)

        def report(done: int) -> None:
            if done % step == 0 or done == total:
                elapsed = time.perf_counter() - started
                self.stdout.write(f"  seeded {done} of {total} discussions ({elapsed:.0f} s)")
                self.stdout.flush()

        return report

    def _worker_compute(self, data: LoopData) -> None:
        """What the slow worker does: the comparison and each configuration's trend summary,
        by their tasks, timed."""
        baseline, candidate = data.sides
        started = time.perf_counter()
        app.tasks[COMPARISON_TASK].apply(
            kwargs={"baseline": baseline, "candidate": candidate}, throw=True
        )
        elapsed = time.perf_counter() - started
        stored = MetricResult.objects.get(key=comparison_key(baseline, candidate))
        size = len(json.dumps(stored.values)) / 1024
        self.stdout.write(
            f"comparison computed by the worker in {elapsed:.1f} s (stored: {size:.0f} KB)"
        )
        for configuration in data.configurations:
            started = time.perf_counter()
            app.tasks[SUMMARY_TASK].apply(kwargs={"configuration_id": configuration.pk}, throw=True)
            elapsed = time.perf_counter() - started
            self.stdout.write(
                f"trend summary of {configuration.prompt_version} computed by the worker in "
                f"{elapsed:.1f} s"
            )

    def _pages_time(self, data: LoopData, renders: int) -> dict[str, Timing]:
        if settings.DEBUG:
            self.stdout.write("DEBUG is on: templates keep debug data and every query is logged")
        client = Client()
        client.force_login(data.admin)
        baseline, candidate = data.sides
        pages = {
            "comparison page": f"/metrics/runs/compare/?baseline={baseline}&candidate={candidate}",
            "comparison: pair bonds better": (
                f"/metrics/runs/compare/?baseline={baseline}&candidate={candidate}"
                "&figure=pair_bonds&direction=better"
            ),
            "trend page": "/metrics/runs/trend/",
        }
        timings = {}
        with override_settings(ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"]):
            for name, url in pages.items():
                times, queries = time_page(client, url, renders)
                median, p95 = statistics.median(times), percentile(times, 0.95)
                verdict = "OK" if median < GOAL_MS else f"SLOWER than the {GOAL_MS:.0f} ms goal"
                self.stdout.write(
                    f"{name:<30} median {median:7.1f} ms  p95 {p95:7.1f} ms  {queries:3d} queries"
                    f"  ({len(times)} renders)  {verdict}"
                )
                timings[name] = Timing(median, p95, queries)
        return timings

    def _check_read_only(self, data: LoopData) -> None:
        """The pages read the stored rows: none was found outdated (a page that finds its row
        outdated marks it stale and queues a computation)."""
        keys = [comparison_key(*data.sides)] + [
            summary_key(c.pk, None) for c in data.configurations
        ]
        rows = dict(MetricResult.objects.filter(key__in=keys).values_list("key", "status"))
        outdated = [key for key in keys if rows.get(key) != MetricResult.Status.FRESH]
        if outdated:
            raise CommandError(f"the pages found stored rows outdated: {', '.join(outdated)}")
        self.stdout.write(
            "the pages read stored rows only: the comparison and both trend summaries stayed "
            "fresh, nothing was queued"
        )
