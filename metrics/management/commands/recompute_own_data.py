"""Compute the rows of the families computed whole from our data, in this process.

By default a row follows its inputs the way a worker's task does: only the per-statement
pieces whose inputs changed are computed (``metrics.own_data.pieces``). ``--full`` computes
every piece again (the full recompute, which gives the same figures).
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from audit.models import ExtractionRun
from evalsite.memory import memory_release
from metrics.models import MetricResult
from metrics.own_data.common import own_result_compute, own_result_force, runs_with_ground_truth
from metrics.registry import FAMILIES, WHOLE


class Command(BaseCommand):
    help = "Compute the own-data families' rows (review savings, calibration, inter-auditor…)."

    def add_arguments(self, parser):
        parser.add_argument("--family", nargs="+", choices=WHOLE, default=list(WHOLE))
        parser.add_argument("--run", type=int, dest="run_id", help="only this extraction run")
        parser.add_argument("--full", action="store_true", help="compute every piece again")

    def handle(self, *args, family, run_id, full, **options):
        if run_id is not None and not ExtractionRun.objects.filter(pk=run_id).exists():
            raise CommandError(f"No extraction run {run_id}.")
        run_ids = [run_id] if run_id is not None else runs_with_ground_truth()
        compute = own_result_force if full else own_result_compute
        for name in family:
            per_run = FAMILIES[name].scope == MetricResult.Scope.RUN
            for target in run_ids if per_run else [None]:
                started = time.monotonic()
                compute(family=name, run_id=target)
                memory_release()  # rows computed in process send no task_postrun
                where = f"run {target}" if per_run else "system"
                self.stdout.write(f"{name} ({where}): {time.monotonic() - started:.1f} s")
