"""Recompute-all throughput with 1, 2, ... real Celery workers on this database and broker.

Seeds N discussions × M statements (approved ground truth, one extraction run), then for each
worker count: starts that many ``celery worker -Q slow`` processes, starts a recompute job of
the run, and times it from the start to the job's end. Prints statements per second for each
count and the gain over one worker; then one worker's batches again in this process (one
thread), their CPU split into reading, decoding, matching and writing (``tests.bench.cpu_split``),
with statements per CPU second. Everything seeded is deleted at the end unless --keep.

Needs a broker (REDIS_URL): the workers are separate processes. No other worker should serve
the slow queue of that broker meanwhile, or it takes a share of the chunks.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from audit.models import ExtractionRun
from evalsite.celery import app
from metrics.models import ComputeJob, MetricResult
from metrics.registry import EXTRACTION
from metrics.results import run_key
from tests.bench.cpu_split import PHASES, recompute_split
from tests.bench.data import SeededWorkload
from tests.bench.jobs import recompute_job_done, recompute_job_start

GOAL_ONE_WORKER = 1000  # statements/s on PostgreSQL
GOAL_PER_CPU_SECOND = 1200  # statements per CPU second of the worker's own process


class Command(BaseCommand):
    help = "Time a full recompute of one run's extraction results with 1, 2, ... workers."

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per job")
        parser.add_argument("--keep", action="store_true", help="keep the seeded data")
        parser.add_argument(
            "--run", type=int, help="time the run of data kept by --keep (seeds nothing)"
        )
        split = parser.add_mutually_exclusive_group()
        split.add_argument("--no-split", action="store_true", help="only the real workers")
        split.add_argument(
            "--split-only", action="store_true", help="only the CPU split (no workers, no broker)"
        )

    def handle(self, *args, **options):
        workers = [] if options["split_only"] else options["workers"]
        if workers and not settings.REDIS_URL:
            raise CommandError("Set REDIS_URL: the workers are separate processes.")
        if workers and min(workers) < 1:
            raise CommandError("--workers takes counts of at least 1.")
        self.busy: dict[int, float] = {}  # cores busy per worker count
        seeded = None if options["run"] else self._seed(options)
        run = seeded.run if seeded else ExtractionRun.objects.get(pk=options["run"])
        try:
            rates = {n: self._timed(run, n, options["timeout"]) for n in workers}
            if not options["no_split"]:
                self._split(run)
        finally:
            if seeded and not options["keep"]:
                seeded.delete()
        self._report(rates)

    def _seed(self, options: dict[str, Any]) -> SeededWorkload:
        started = time.perf_counter()
        seeded = SeededWorkload.create(
            discussions=options["discussions"],
            statements=options["statements"],
            seed=options["seed"],
        )
        self.stdout.write(
            f"seeded {options['discussions']} discussions × {options['statements']} statements "
            f"in {time.perf_counter() - started:.1f} s (run {seeded.run.pk})"
        )
        return seeded

    def _timed(self, run: ExtractionRun, n_workers: int, timeout: float) -> float:
        cpu_before = _children_cpu_seconds()
        with _workers(n_workers) as workers:
            started = time.perf_counter()
            host_before = host_cpu_ticks()
            job = recompute_job_start(run.pk)
            job, phases = _wait_for_end(job, timeout, workers.log)
            recompute_job_done(job)
            seconds = time.perf_counter() - started
            busy = cores_busy(host_before, host_cpu_ticks())
        # The workers' own CPU time (start-up included): steadier than the wall clock on a
        # shared machine; the database server's share is not in it.
        cpu = _children_cpu_seconds() - cpu_before
        row = MetricResult.objects.get(key=run_key(EXTRACTION, run.pk))
        statements = row.values["n_statements"]
        rate = statements / seconds
        self.stdout.write(
            f"{n_workers} worker{'s' if n_workers > 1 else ''}: {job.total} results "
            f"({statements} statements) in {seconds:.1f} s: {rate:.0f} statements/s; the "
            f"workers used {cpu:.1f} CPU s ({statements / cpu:.0f} statements per CPU second) "
            f"(job {job.status}, {len(job.params['chunks'])} chunks)"
        )
        if len(phases) == 2:
            self.stdout.write(
                f"  planning {phases[0]:.1f} s, chunks {phases[1] - phases[0]:.1f} s "
                f"({statements / (phases[1] - phases[0]):.0f} statements/s), settling "
                f"{seconds - phases[1]:.1f} s"
            )
        if busy is not None:
            self.stdout.write(
                f"  the host: {busy:.2f} of its {os.cpu_count()} cores busy meanwhile "
                "(the workers, the database and anything else running)"
            )
            self.busy[n_workers] = busy
        return rate

    def _split(self, run: ExtractionRun) -> None:
        split = recompute_split(run.pk)
        statements = MetricResult.objects.get(key=run_key(EXTRACTION, run.pk)).values[
            "n_statements"
        ]
        rate = statements / split.cpu
        verdict = "met" if rate >= GOAL_PER_CPU_SECOND else "NOT met"
        self.stdout.write(
            f"one worker's batches in this process (one thread): {statements} statements, "
            f"{split.cpu:.1f} CPU s ({split.wall:.1f} s): {rate:.0f} statements per CPU second "
            f"(job {split.job.status}; goal ≥ {GOAL_PER_CPU_SECOND}: {verdict})"
        )
        self.stdout.write(
            "  CPU: "
            + ", ".join(
                f"{phase} {split.seconds[phase]:.1f} s ({split.seconds[phase] / split.cpu:.0%})"
                for phase in PHASES
            )
        )

    def _report(self, rates: dict[int, float]) -> None:
        if 1 in rates:
            verdict = "met" if rates[1] >= GOAL_ONE_WORKER else "NOT met"
            self.stdout.write(f"goal ≥ {GOAL_ONE_WORKER} statements/s with one worker: {verdict}")
            for n, rate in rates.items():
                if n > 1:
                    self.stdout.write(
                        f"{n} workers: ×{rate / rates[1]:.2f} the rate of one "
                        f"(linear would be ×{n}{self._ceiling(n)})"
                    )

    def _ceiling(self, n_workers: int) -> str:
        """What this host's cores allow: one worker's job kept `busy` cores busy, so n workers
        can go at most (cores / busy) times as fast, whatever the code."""
        busy, cores = self.busy.get(1), os.cpu_count() or 1
        if not busy or cores >= n_workers * busy:
            return ""
        return f"; this host's {cores} cores allow at most ×{cores / busy:.2f}"


class _workers:
    """``celery worker -Q slow`` processes on this broker and database, started and ready on
    entry, stopped on exit."""

    def __init__(self, count: int):
        self.names = [f"bench{i}-{uuid.uuid4().hex[:6]}@localhost" for i in range(count)]
        self.processes: list[subprocess.Popen] = []
        self.log = Path()

    def __enter__(self) -> _workers:
        env = {**os.environ, "CELERY_EAGER": "0"}
        self.log = Path(tempfile.mkstemp(prefix="benchmark-workers-", suffix=".log")[1])
        with self.log.open("w") as output:
            for name in self.names:
                command = [sys.executable, "-m", "celery", "-A", "evalsite", "worker"]
                command += ["-Q", "slow", "--pool=solo", "-n", name, "--loglevel=warning"]
                command += ["--without-mingle"]
                process = subprocess.Popen(command, env=env, stdout=output, stderr=output)
                self.processes.append(process)
        try:
            self._wait_until_ready()
        except BaseException:
            self.__exit__()  # no worker outlives a failed start
            raise
        return self

    def _wait_until_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            replies = app.control.ping(destination=self.names, timeout=1.0) or []
            if len(replies) == len(self.names):
                return
        raise CommandError(f"the workers did not answer within {timeout:.0f} s; see {self.log}")

    def __exit__(self, *exc: Any) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_end(job: ComputeJob, timeout: float, log: Path) -> tuple[ComputeJob, list[float]]:
    """The ended job, and the seconds at which it was planned (its chunks listed) and began
    settling (its runs' totals): the serial parts before and after the shared chunks."""
    started = time.monotonic()
    deadline, phases = started + timeout, list[float]()
    while time.monotonic() < deadline:
        job.refresh_from_db()
        reached = [job.total > 0, bool(job.params.get("settling"))][len(phases) : len(phases) + 1]
        if reached and reached[0]:
            phases.append(time.monotonic() - started)
        if not job.is_active:
            return job, phases
        time.sleep(0.2)
    raise CommandError(f"recompute job {job.pk} did not end within {timeout:.0f} s; see {log}")


def host_cpu_ticks() -> tuple[int, int] | None:
    """(busy, all) CPU ticks of the whole host since boot, from /proc/stat (Linux); None
    elsewhere. Busy is every state but idle and waiting for I/O."""
    try:
        fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = sum(fields[3:5])  # idle, iowait
    every = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is in user)
    return every - idle, every


def cores_busy(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """How many of the host's cores were busy on average between two readings."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    share = (after[0] - before[0]) / (after[1] - before[1])
    return share * (os.cpu_count() or 1)


def _children_cpu_seconds() -> float:
    """CPU time of this process's ended (and waited-for) children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
