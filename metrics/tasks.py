"""Celery tasks: each takes ids, calls one service, and lets the service store the result.

Transient database errors are retried with backoff; any other error is recorded on the
result row as ``failed`` with its traceback (``failure_recorded``), so nothing vanishes.
Tasks are idempotent: the services skip work whose input hash matches the stored row.

Every task is named explicitly: routes (settings.CELERY_TASK_ROUTES), the beat schedule and
messages already queued refer to these names, so a task may move module without breaking them.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from audit.signals import announcements_redeliver
from evalsite.queue import RETRYING
from metrics.engine import derived, recompute, services, snapshots, trend
from metrics.engine.recompute import (
    compute_job_run,
    results_mark_outdated,
    results_recompute_stale,
)
from metrics.evaluations import services as evaluation_services
from metrics.models import MetricResult
from metrics.own_data import common as own_data

log = logging.getLogger(__name__)
Scope = MetricResult.Scope


@shared_task(name="metrics.tasks.compute_statement", **RETRYING)
def compute_statement(statement_id: int, run_id: int) -> None:
    with services.failure_recorded(scope=Scope.STATEMENT, run_id=run_id, statement_id=statement_id):
        services.statement_result_compute(statement_id=statement_id, run_id=run_id)


@shared_task(name="metrics.tasks.compute_discussion", **RETRYING)
def compute_discussion(discussion_id: int, run_id: int) -> None:
    with services.failure_recorded(
        scope=Scope.DISCUSSION, run_id=run_id, discussion_id=discussion_id
    ):
        services.discussion_result_compute(discussion_id=discussion_id, run_id=run_id)


@shared_task(name="metrics.tasks.compute_run", **RETRYING)
def compute_run(run_id: int) -> None:
    with services.failure_recorded(scope=Scope.RUN, run_id=run_id):
        services.run_result_compute(run_id=run_id)
    # The run's figures moved: its error analysis and comparisons follow in the background.
    derived.derived_results_refresh(run_id=run_id)


@shared_task(name="metrics.tasks.compute_run_comparison", **RETRYING)
def compute_run_comparison(
    baseline: str = "",
    candidate: str = "",
    snapshot: int | None = None,
    left_id: int | None = None,
    right_id: int | None = None,
) -> None:
    """A comparison of two runs or configurations, stored (metrics.engine.derived). Messages
    queued before sides could be configurations name two runs (left_id, right_id)."""
    derived.comparison_result_compute(
        baseline=baseline or f"r{left_id}", candidate=candidate or f"r{right_id}", snapshot=snapshot
    )


@shared_task(name="metrics.tasks.compute_error_analysis", **RETRYING)
def compute_error_analysis(run_id: int, full: bool = False) -> None:
    """A run's event-kind errors and error index, stored (metrics.engine.derived); ``full`` rebuilds
    the index whole rather than for the statements that changed."""
    derived.error_analysis_result_compute(run_id=run_id, full=full)


@shared_task(name="metrics.tasks.compute_snapshot_results", **RETRYING)
def compute_snapshot_results(run_id: int, snapshot_id: int) -> None:
    """A run's figures on a frozen ground-truth snapshot, computed once and stored."""
    snapshots.snapshot_results_record_failure(run_id=run_id, snapshot_id=snapshot_id)


@shared_task(name="metrics.tasks.compute_system", **RETRYING)
def compute_system() -> None:
    with services.failure_recorded(scope=Scope.SYSTEM):
        services.system_result_compute()


@shared_task(name="metrics.tasks.recompute_stale", **RETRYING)
def recompute_stale(after_outage: bool = False) -> dict:
    """The sweep: picks up results, evaluations and jobs whose task was lost or whose worker
    died, and results computed with other match settings or code than those in force. Beat
    sends it every STALE_SWEEP_SECONDS; each worker sends one with ``after_outage`` when it
    (re)connects to the broker, and then nothing is too recent: tasks published during the
    outage never arrived. Changes whose results were never marked stale (their announcement
    failed after the commit: ``audit.signals``) are marked first."""
    grace = timedelta(seconds=0 if after_outage else settings.STALE_SWEEP_GRACE_SECONDS)
    announced = announcements_redeliver(older_than=grace)
    outdated = results_mark_outdated()
    counts = dict(results_recompute_stale(older_than=grace))
    counts["announcements"] = announced
    counts["outdated"] = outdated
    counts["own_data"] = own_data.own_results_queue_stale(older_than=grace)
    counts["evaluations"] = evaluation_services.evaluations_requeue(
        older_than=grace, after_outage=after_outage
    )
    return counts


@worker_ready.connect
def outdated_results_on_worker_start(**_kwargs) -> None:
    """A worker starts after a deploy or a settings change: results computed with other
    settings or code become stale and are recomputed now rather than at the first sweep."""
    try:
        results_mark_outdated()
    except Exception:  # a worker must start even if the database is briefly unreachable
        log.exception("checking for outdated results at worker start failed; the sweep retries")


@shared_task(name="metrics.tasks.run_compute_job", **RETRYING)
def run_compute_job(job_id: int) -> None:
    """Plan a recompute job and queue its chunks, which every slow worker shares."""
    compute_job_run(job_id=job_id, parallel=True)


@shared_task(name="metrics.tasks.compute_job_chunk", **RETRYING)
def compute_job_chunk(job_id: int, attempt: int, index: int, items: list) -> None:
    """One chunk of a recompute job; the last chunk to finish settles the runs."""
    recompute.compute_job_chunk(job_id=job_id, attempt=attempt, index=index, items=items)


@shared_task(name="metrics.tasks.evaluation_compute", acks_late=True, **RETRYING)
def evaluation_compute(evaluation_id: int) -> None:
    """Compute an imported evaluation's metric family (metrics.evaluations.services)."""
    with evaluation_services.evaluation_failure_recorded(evaluation_id=evaluation_id):
        evaluation_services.evaluation_compute(evaluation_id=evaluation_id)


# --- own-data families (metrics.own_data): whole-run / whole-system results --------------------


@shared_task(name="metrics.tasks.compute_own_data", **RETRYING)
def compute_own_data(family: str, run_id: int | None = None) -> None:
    """One row of a family computed whole from our data (a run's, or the system's), by the
    service its registry entry names (metrics.registry: compute)."""
    own_data.own_sweep_mark_clear(family=family, run_id=run_id)
    own_data.own_result_compute(family=family, run_id=run_id)


@shared_task(name="metrics.tasks.compute_configuration_summary", **RETRYING)
def compute_configuration_summary(configuration_id: int, snapshot: int | None = None) -> None:
    """A configuration's figures over its replicates with intervals (the trend), stored."""
    trend.configuration_summary_compute(configuration_id=configuration_id, snapshot=snapshot)
