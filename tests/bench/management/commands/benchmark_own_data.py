"""The own-data families (review savings, calibration, inter-auditor agreement, review
triage) at scale.

Seeds N discussions × M statements (approved ground truth, one extraction run, one submitted
coding to approve, and a second auditor's coding of a share of the statements; with
--partner-run a previous run's extraction of every statement, which review triage compares
the run with; with --approved-share only that share of the discussions coded), then prints
per family:

- the full recompute: CPU seconds and peak memory of a fresh process computing the family's
  row from scratch (``force``: every stored per-statement piece is computed again);
- the update after ONE approval: CPU seconds of a fresh process bringing the row up to date
  (only the changed statements' pieces are computed; the figures are derived from the pieces);
- a real ``celery worker -Q slow`` computing every family's row from nothing: its peak resident
  memory (``VmHWM`` of the worker process), the figure the 500 MB budget is about, and its
  peak and resident memory as each row becomes fresh (what it keeps from one row to the
  next). With --other-runs it first computes the run rows of every other run with ground
  truth (the partner run): one worker serving two runs back to back.

Each measurement runs in its own process (this command with ``--measure``), so one family's
memory does not hide in another's. Everything seeded is deleted at the end unless --keep.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from audit.derived.tallies import pairs_of, tallies_refresh
from audit.models import Extraction, Feedback
from audit.services.feedback import feedback_approve
from evalsite.queue import task_enqueue
from metrics.models import MetricResult, StatementPiece
from metrics.own_data.common import (
    own_result_compute,
    own_result_force,
    runs_with_ground_truth,
)
from metrics.registry import CALIBRATION, FAMILIES, INTERAUDITOR, REVIEW_SAVINGS, TRIAGE
from metrics.results import result_key
from tests.bench.data import SeededWorkload
from tests.bench.management.commands.benchmark_recompute import _workers

OWN_FAMILIES = (REVIEW_SAVINGS, CALIBRATION, INTERAUDITOR, TRIAGE)
MEMORY_GOAL_MB = 500


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    return _vm_hwm_kb(os.getpid()) / 1024


def _vm_hwm_kb(pid: int) -> int:
    return _proc_status_kb(pid, "VmHWM")


def _vm_rss_kb(pid: int) -> int:
    return _proc_status_kb(pid, "VmRSS")


def _proc_status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    usage = resource.getrusage(resource.RUSAGE_SELF)  # not Linux: the own maximum, in kB
    return int(usage.ru_maxrss)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _row_key(family: str, run_id: int | None) -> str:
    scope = FAMILIES[family].scope
    return result_key(family, scope, run_id=run_id if scope == MetricResult.Scope.RUN else None)


class Command(BaseCommand):
    help = "Time the own-data families at scale: full recompute, one approval, worker memory."

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument(
            "--second-coder-share",
            type=float,
            default=0.1,
            help="share of statements a second auditor also coded (inter-auditor pairs)",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--partner-run",
            action="store_true",
            help="seed a previous run's extraction of every statement (triage's partner run)",
        )
        parser.add_argument(
            "--approved-share",
            type=float,
            default=1.0,
            help="share of the discussions with approved ground truth (the rest uncoded)",
        )
        parser.add_argument("--families", nargs="+", choices=OWN_FAMILIES, default=OWN_FAMILIES)
        parser.add_argument("--no-worker", action="store_true", help="skip the worker's memory")
        parser.add_argument("--keep", action="store_true", help="keep the seeded data")
        parser.add_argument("--worker-only", action="store_true", help="only the worker's memory")
        parser.add_argument(
            "--kept-run",
            type=int,
            metavar="RUN_ID",
            help="with --worker-only: measure a run seeded earlier with --keep, seed nothing",
        )
        parser.add_argument(
            "--other-runs",
            action="store_true",
            help="the worker also computes the other runs' rows first (e.g. the partner run's)",
        )
        # One measurement in this process (used by the command itself).
        parser.add_argument("--measure", choices=OWN_FAMILIES, help=ARG_HIDDEN)
        parser.add_argument("--run-id", type=int, help=ARG_HIDDEN)
        parser.add_argument("--force", action="store_true", help=ARG_HIDDEN)

    def handle(self, *args, **options):
        if options["measure"]:
            self._measure_here(options["measure"], options["run_id"], options["force"])
            return
        if options["kept_run"] is not None:
            if not options["worker_only"]:
                raise CommandError("--kept-run measures the worker only: add --worker-only.")
            self._worker_peak(options["kept_run"], options["families"], options["other_runs"])
            return
        started = time.perf_counter()
        seeded = SeededWorkload.create(
            discussions=options["discussions"],
            statements=options["statements"],
            seed=options["seed"],
            approvals=1,
            partner_run=options["partner_run"],
            approved_share=options["approved_share"],
        )
        second = _second_coder(seeded, options["second_coder_share"])
        self.stdout.write(
            f"seeded {options['discussions']} discussions × {options['statements']} statements "
            f"({second} coded twice, {_approved(seeded)} approved"
            f"{', a partner run' if seeded.partner else ''}) "
            f"in {time.perf_counter() - started:.1f} s"
        )
        try:
            self._benchmark(seeded, options)
        finally:
            if not options["keep"]:
                seeded.delete()
                get_user_model().objects.filter(username=f"{seeded.tag}-second").delete()

    def _benchmark(self, seeded: SeededWorkload, options: dict[str, Any]) -> None:
        run_id, families = seeded.run.pk, options["families"]
        if not options["worker_only"]:
            for family in families:
                self._line("full recompute", family, self._child(family, run_id, force=True))
            with transaction.atomic():
                feedback_approve(feedback=seeded.pending[0], admin=seeded.admin)
            for family in families:
                self._line("after 1 approval", family, self._child(family, run_id, force=False))
        if not options["no_worker"]:
            self._worker_peak(run_id, families, options["other_runs"])

    def _line(self, what: str, family: str, figures: dict[str, float]) -> None:
        self.stdout.write(
            f"{family:>14} {what:<17}: {figures['cpu']:7.2f} CPU s, {figures['wall']:7.2f} s "
            f"wall, peak {figures['peak_mb']:6.0f} MB"
        )

    def _child(self, family: str, run_id: int, *, force: bool) -> dict[str, float]:
        command = [sys.executable, "manage.py", "benchmark_own_data", "--measure", family]
        command += ["--run-id", str(run_id), *(["--force"] if force else [])]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CommandError(f"measuring {family} failed:\n{done.stderr[-4000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def _measure_here(self, family: str, run_id: int, force: bool) -> None:
        cpu, wall = _cpu_seconds(), time.perf_counter()
        if force:
            own_result_force(family=family, run_id=run_id)
        else:
            own_result_compute(family=family, run_id=run_id)
        figures = {
            "cpu": _cpu_seconds() - cpu,
            "wall": time.perf_counter() - wall,
            "peak_mb": peak_rss_mb(),
        }
        row = MetricResult.objects.get(key=_row_key(family, run_id))
        if row.status != MetricResult.Status.FRESH:
            raise CommandError(f"{family}: the row is {row.status}: {row.error[-2000:]}")
        self.stdout.write(json.dumps(figures))

    def _worker_peak(self, run_id: int, families: list[str], other_runs: bool) -> None:
        """A real slow worker computes every family's row from nothing (no row, no piece)."""
        targets = _targets(run_id, families, other_runs=other_runs)
        keys = [_row_key(family, target_run) for family, target_run in targets]
        MetricResult.objects.filter(key__in=keys).delete()
        # Every family's pieces: triage reads the review-savings pieces too.
        StatementPiece.objects.filter(family__in=OWN_FAMILIES).delete()
        with _slow_worker(1) as workers:
            pid = workers.processes[0].pid
            started = time.perf_counter()
            with transaction.atomic():
                for family, target_run in targets:
                    run = {"run_id": target_run} if target_run is not None else {}
                    task_enqueue(FAMILIES[family].celery_task(), family=family, **run)
            for key, seconds in _wait_fresh(keys, workers.log):
                hwm, rss = _vm_hwm_kb(pid) / 1024, _vm_rss_kb(pid) / 1024
                self.stdout.write(
                    f"  {key:<28} fresh at {seconds:6.1f} s: peak {hwm:4.0f} MB, "
                    f"resident {rss:4.0f} MB"
                )
            seconds = time.perf_counter() - started
            peak = _vm_hwm_kb(pid) / 1024
        verdict = "met" if peak < MEMORY_GOAL_MB else "NOT met"
        self.stdout.write(
            f"slow worker, {len(keys)} rows from nothing: {seconds:.1f} s, peak {peak:.0f} MB "
            f"(goal < {MEMORY_GOAL_MB} MB: {verdict})"
        )


def _targets(run_id: int, families: list[str], *, other_runs: bool) -> list[tuple[str, int | None]]:
    """(family, run id or None) of every row the worker computes: the other runs' run rows
    first (oldest run first), then the run's own families."""
    others = runs_with_ground_truth(besides=[run_id]) if other_runs else []
    run_families = [f for f in families if FAMILIES[f].scope == MetricResult.Scope.RUN]
    own = [(f, run_id if f in run_families else None) for f in families]
    return [*((f, other) for other in others for f in run_families), *own]


ARG_HIDDEN = "(internal: one measurement in this process)"


class _slow_worker(_workers):
    """A worker starts with a sweep of whatever is stale (the seeding's results), during which
    it cannot answer a ping: wait longer for it."""

    def _wait_until_ready(self, timeout: float = 900.0) -> None:
        super()._wait_until_ready(timeout)

    def __enter__(self) -> _slow_worker:
        try:
            super().__enter__()
        except BaseException:
            for process in self.processes:  # a worker that never answered must not linger
                process.kill()
            raise
        return self


def _approved(seeded: SeededWorkload) -> int:
    return Feedback.objects.filter(auditor=seeded.auditor, status=Feedback.Status.APPROVED).count()


def _second_coder(seeded: SeededWorkload, share: float) -> int:
    """A second auditor's submitted coding (the AI's extraction, as a pre-filled coder who
    changed nothing) of every k-th statement: pairs for the inter-auditor figures."""
    if share <= 0:
        return 0
    step = max(1, round(1 / share))
    coder = get_user_model().objects.create(username=f"{seeded.tag}-second", is_active=False)
    extractions = Extraction.objects.filter(run=seeded.run).order_by("statement_id")
    rows = [
        Feedback(
            statement_id=e.statement_id,
            auditor=coder,
            edited_extraction=e.pdp_deltas,
            source_extraction_id=e.pk,
            status=Feedback.Status.SUBMITTED,
        )
        for i, e in enumerate(extractions.iterator())
        if i % step == 0
    ]
    Feedback.objects.bulk_create(rows, batch_size=1000)
    # bulk created, past the model signals
    tallies_refresh(
        pairs=pairs_of(statement_ids={r.statement_id for r in rows}, auditor_ids=[coder.pk])
    )
    return len(rows)


def _wait_fresh(keys: list[str], log: Path, timeout: float = 3600.0) -> Iterator[tuple[str, float]]:
    """Each key as its row becomes fresh, with the seconds since the start."""
    started, pending = time.monotonic(), set(keys)
    while time.monotonic() < started + timeout:
        rows = MetricResult.objects.filter(key__in=keys)
        if rows.filter(status=MetricResult.Status.FAILED).exists():
            raise CommandError(f"a row failed: {list(rows.values_list('key', 'error'))}")
        fresh = set(rows.filter(status=MetricResult.Status.FRESH).values_list("key", flat=True))
        for key in sorted(pending & fresh, key=keys.index):
            pending.discard(key)
            yield key, time.monotonic() - started
        if not pending:
            return
        time.sleep(0.5)
    raise CommandError(f"the worker did not settle {keys} within {timeout:.0f} s; see {log}")
