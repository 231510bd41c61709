"""A background job's progress (htmx polls it every second while the job is active) and its
cancel button, for a job of any kind (audit.models.ComputeJob). Admins only."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from audit.models import ComputeJob
from audit.services.jobs import compute_job_cancel
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest, safe_referer

PROGRESS = "audit/components/job_progress.html"


@admin_required
@require_GET
def job_progress(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(ComputeJob, pk=pk)
    return render(request, PROGRESS, {"job": job})


@admin_required
@require_POST
def job_cancel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = compute_job_cancel(job=get_object_or_404(ComputeJob, pk=pk))
    if request.htmx:
        return render(request, PROGRESS, {"job": job})
    return redirect(safe_referer(request))
