"""Scoring a discussion-unit run, against the cumulative F1 of a statement-unit run on the same
data (the goal: within 2× of its time).

Seeds N discussions × M subject statements with approved ground truth and a statement-unit run
(one extraction per statement, ``SeededWorkload``), then a discussion-unit run whose PDP of
each discussion is the statement-unit run's deltas accumulated: both runs must then get the
same cumulative F1, item for item, which the command checks. Seeding is not timed.

Two timings, each the median of --repeat rounds (the two runs alternate, so a busy host slows
both alike):

- library: every discussion's cumulative comparison from payloads in memory
  (``calculate_cumulative_f1`` of the statement deltas, and of the one PDP);
- database: every discussion row of the run computed and stored by the service a worker runs
  for each discussion (``discussion_result_compute``: the discussion's approved ground truth
  and the run's extraction(s) read, compared, stored), then the run's totals rebuilt.

Everything seeded is deleted at the end unless --keep.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from audit.models import DiscussionExtraction, Extraction, ExtractionRun, Feedback, Statement
from audit.services.runs import ConfigurationSpec, run_register
from audit.synthetic import generate_workload
from evalsite.match_settings import match_settings
from metrics.engine.services import (
    EXTRACTION,
    discussion_result_compute,
    placeholders_create,
    run_result_compute,
)
from metrics.families.extraction import calculate_cumulative_f1, cumulative
from metrics.models import MetricResult
from tests.bench.data import SeededWorkload

GOAL_RATIO = 2.0  # the discussion-unit run's time over the statement-unit run's, at most


def _timed(function: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def _accumulated(deltas: list[Any]) -> dict[str, Any]:
    """A statement-unit run's deltas of one discussion as one PDP of the whole discussion."""
    return {**cumulative(deltas), "delete": []}


# --- the pure library -----------------------------------------------------------------------------


def library_timings(
    n_discussions: int, n_statements: int, seed: int = 0, repeat: int = 1
) -> dict[str, Any]:
    """Median seconds (wall, CPU) of the cumulative comparison of every discussion, from its
    statement deltas and from its one accumulated PDP; and whether both give the same figures."""
    workload = generate_workload(n_discussions, n_statements, seed=seed)
    settings = match_settings()
    gts = [[s.gt_delta for s in d.subject_statements()] for d in workload]
    deltas = [[s.ai_delta for s in d.subject_statements()] for d in workload]
    pdps = [[_accumulated(ai)] for ai in deltas]

    def score(ais: list[list[Any]]) -> Callable[[], list[dict]]:
        def run() -> list[dict]:
            return [
                calculate_cumulative_f1(ai, gt, settings=settings).to_dict()
                for ai, gt in zip(ais, gts, strict=True)
            ]

        return run

    rounds: dict[str, list[tuple[float, float]]] = {"statement": [], "discussion": []}
    for _ in range(repeat):
        rounds["statement"].append(_timed(score(deltas)))
        rounds["discussion"].append(_timed(score(pdps)))
    return {
        **_medians(rounds),
        "same": sum(a == b for a, b in zip(score(deltas)(), score(pdps)(), strict=True)),
        "discussions": n_discussions,
    }


def _medians(rounds: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    return {
        unit: {
            "seconds": statistics.median(wall for wall, _ in timings),
            "cpu_seconds": statistics.median(cpu for _, cpu in timings),
        }
        for unit, timings in rounds.items()
    }


# --- the stored results -------------------------------------------------------------------------


def whole_run_seed(seeded: SeededWorkload) -> ExtractionRun:
    """The discussion-unit run of the seeded discussions: each one's PDP is the seeded run's
    deltas accumulated (untimed; no signal: the timing computes its results)."""
    spec = ConfigurationSpec(
        model_name="benchmark-whole", prompt_version=seeded.tag, unit="discussion"
    )
    whole, _ = run_register(spec=spec)
    by_discussion: dict[int, list[Any]] = {}
    for discussion_id, payload in (
        Extraction.objects.filter(run=seeded.run)
        .order_by("statement__discussion_id", "statement__order")
        .values_list("statement__discussion_id", "pdp_deltas")
    ):
        by_discussion.setdefault(discussion_id, []).append(payload)
    DiscussionExtraction.objects.bulk_create(
        (
            DiscussionExtraction(discussion_id=d, run=whole, pdp=_accumulated(deltas))
            for d, deltas in by_discussion.items()
        ),
        batch_size=500,
    )
    placeholders_create(Feedback.objects.approved(), [seeded.run.pk, whole.pk])
    return whole


def _score(run: ExtractionRun, discussion_ids: list[int]) -> Callable[[], None]:
    def run_scoring() -> None:
        for discussion_id in discussion_ids:
            discussion_result_compute(
                discussion_id=discussion_id, run_id=run.pk, force=True, batch=True
            )
        run_result_compute(run_id=run.pk, rebuild=True)

    return run_scoring


def database_timings(
    seeded: SeededWorkload, whole: ExtractionRun, repeat: int = 1
) -> dict[str, Any]:
    """Median seconds (wall, CPU of this process) of scoring every discussion of each run
    through the stored results; and how many discussions got the same figures both ways."""
    discussion_ids = sorted(
        set(
            Statement.objects.filter(extractions__run=seeded.run).values_list(
                "discussion_id", flat=True
            )
        )
    )
    rounds: dict[str, list[tuple[float, float]]] = {"statement": [], "discussion": []}
    for _ in range(repeat):
        rounds["statement"].append(_timed(_score(seeded.run, discussion_ids)))
        rounds["discussion"].append(_timed(_score(whole, discussion_ids)))
    rows = {
        run: dict(
            MetricResult.objects.filter(family=EXTRACTION, scope="discussion", run=run).values_list(
                "discussion_id", "values"
            )
        )
        for run in (seeded.run, whole)
    }
    same = sum(rows[seeded.run][d] == rows[whole].get(d) for d in rows[seeded.run])
    return {**_medians(rounds), "same": same, "discussions": len(discussion_ids)}


def _line(name: str, figures: dict[str, Any]) -> str:
    statement, whole = figures["statement"], figures["discussion"]
    ratio = whole["seconds"] / statement["seconds"] if statement["seconds"] else float("nan")
    cpu = whole["cpu_seconds"] / statement["cpu_seconds"] if statement["cpu_seconds"] else 0.0
    figures["ratio"] = ratio
    return (
        f"{name}: {figures['discussions']} discussions: statement-unit run's cumulative F1 "
        f"{statement['seconds']:.3f} s (CPU {statement['cpu_seconds']:.3f} s), discussion-unit "
        f"run {whole['seconds']:.3f} s (CPU {whole['cpu_seconds']:.3f} s): {ratio:.2f}× "
        f"(CPU {cpu:.2f}×); same figures in {figures['same']} of {figures['discussions']}"
    )


class Command(BaseCommand):
    help = (
        "Time scoring a discussion-unit run against the cumulative F1 of a statement-unit run "
        "on the same data (library and stored results)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=20, help="per discussion")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are printed")
        parser.add_argument("--skip-library", action="store_true")
        parser.add_argument("--skip-db", action="store_true")
        parser.add_argument("--keep", action="store_true", help="keep the seeded data")

    def handle(self, *args, **options):
        if options["discussions"] < 1 or options["statements"] < 1:
            raise CommandError("Need at least 1 discussion of at least 1 statement.")
        if options["repeat"] < 1:
            raise CommandError("--repeat must be at least 1.")
        ratios = []
        if not options["skip_library"]:
            figures = library_timings(
                options["discussions"], options["statements"], options["seed"], options["repeat"]
            )
            self.stdout.write(_line(f"library (median of {options['repeat']})", figures))
            ratios.append(figures["ratio"])
        if not options["skip_db"]:
            ratios.append(self._database(options))
        worst = max(ratios, default=0.0)
        verdict = "met" if worst <= GOAL_RATIO else "NOT met"
        self.stdout.write(
            f"goal: a discussion-unit run scored within {GOAL_RATIO:g}× of the statement-unit "
            f"run's cumulative F1: {verdict} ({worst:.2f}×)"
        )

    def _database(self, options) -> float:
        started = time.perf_counter()
        # Seeded in bulk: nothing is marked stale (the timing computes the results itself).
        seeded = SeededWorkload.create(
            discussions=options["discussions"],
            statements=options["statements"],
            seed=options["seed"],
        )
        with transaction.atomic():
            whole = whole_run_seed(seeded)
        self.stdout.write(
            f"database: seeded {options['discussions']} discussions × {options['statements']} "
            f"statements and both runs in {time.perf_counter() - started:.1f} s"
        )
        try:
            figures = database_timings(seeded, whole, options["repeat"])
            label = f"database (median of {options['repeat']})"
            self.stdout.write(_line(label, figures))
            return figures["ratio"]
        finally:
            if not options["keep"]:
                configuration = whole.configuration
                whole.delete()  # its extractions and results with it
                configuration.delete()
                seeded.delete()
