import time

from django.core.management.base import BaseCommand, CommandError

from audit.management.progress import ProgressBar
from audit.models import ExtractionRun
from metrics.engine.recompute import compute_job_run, metrics_recompute_all
from metrics.models import MetricResult
from metrics.registry import RECOMPUTE_JOB


class Command(BaseCommand):
    help = (
        "Recompute stored metric results in this process (all of them, one run's, or only the "
        "stale ones), recorded as a ComputeJob."
    )

    def add_arguments(self, parser):
        parser.add_argument("--family", default="extraction", choices=RECOMPUTE_JOB)
        parser.add_argument("--run", type=int, dest="run_id", help="only this extraction run")
        parser.add_argument(
            "--stale", action="store_true", help="only results marked stale (e.g. broker was down)"
        )

    def handle(self, *args, family, run_id, stale, **options):
        if run_id is not None and not ExtractionRun.objects.filter(pk=run_id).exists():
            raise CommandError(f"No extraction run {run_id}.")
        started = time.monotonic()
        job = metrics_recompute_all(family=family, run_id=run_id, stale_only=stale, queue=False)
        if job.status == job.Status.RUNNING:
            raise CommandError(
                f"Recompute job {job.pk} is already running ({job.done}/{job.total}); "
                "cancel it on the jobs page or wait for it."
            )
        # A queued job (this one, or one started elsewhere) runs here, in this process.
        job = compute_job_run(job_id=job.pk, progress=ProgressBar(f"recompute {family}"))
        failed = MetricResult.objects.filter(family=family, status=MetricResult.Status.FAILED)
        if run_id is not None:
            failed = failed.filter(run_id=run_id)
        self.stdout.write(
            f"{job.get_status_display().lower()}: {job.done}/{job.total} {family} results "
            f"recomputed in {time.monotonic() - started:.1f} s; {failed.count()} failed "
            f"(job {job.pk})."
        )
        if job.status == job.Status.FAILED:
            raise CommandError(job.error.strip().splitlines()[-1] if job.error else "job failed")
