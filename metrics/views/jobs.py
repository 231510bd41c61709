"""The jobs page (admin): recompute-all jobs started here, with the large ground-truth imports
and exports started elsewhere; and the self-refreshing extraction-F1 card partial.

The page reads the ComputeJob rows, so their progress survives a reload; htmx polls the
panel every second while a job in it is active.
"""

from __future__ import annotations

from django.db.models import prefetch_related_objects
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from audit.models import ExtractionRun
from evalsite.access import admin_required, auditor_required
from evalsite.http import HtmxHttpRequest
from evalsite.params import parse_id
from metrics.cards import extraction_card
from metrics.engine.recompute import metrics_recompute_all
from metrics.models import ComputeJob

RECENT_JOBS = 10


def _jobs_context() -> dict:
    # One read: the recent jobs and the active ones (a recompute, imports and exports). Newest
    # first, the recent ones are its first rows: an active job not among them is older.
    rows = ComputeJob.objects.recent_and_active(RECENT_JOBS)
    running = [job for job in rows if job.is_active]
    # Only an active job's card names who started it: their users are read when there are some.
    prefetch_related_objects(running, "created_by")
    recompute = ComputeJob.Kind.RECOMPUTE
    return {
        "jobs": rows[:RECENT_JOBS],
        "active": next((job for job in running if job.kind == recompute), None),
        "transfers": [job for job in running if job.kind != recompute],
        "runs": ExtractionRun.objects.labelled("created_at"),
    }


@admin_required
def jobs(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the page; POST: start a recompute (or show the one already running)."""
    if request.method == "POST":
        metrics_recompute_all(
            user=request.user,
            run_id=parse_id(request.POST.get("run"), name="run"),
            stale_only=request.POST.get("stale") == "1",
        )
        if not request.htmx:
            return redirect("metrics:jobs")
        return render(request, "metrics/jobs.html#jobs-panel", _jobs_context())
    if request.htmx:  # the panel polling itself while a job runs
        return render(request, "metrics/jobs.html#jobs-panel", _jobs_context())
    return render(request, "metrics/jobs.html", _jobs_context())


@auditor_required
@require_GET
def extraction_card_partial(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    """The card alone, for the card's own htmx polling while its result is updating."""
    run = get_object_or_404(ExtractionRun, pk=run_id)
    return render(request, "metrics/cards/_extraction_f1.html", {"card": extraction_card(run)})
