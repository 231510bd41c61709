"""The own-data cards alone, for their own htmx polling while their result is updating."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from audit.models import ExtractionRun
from evalsite.access import admin_required, auditor_required
from metrics.own_data import cards


@auditor_required
@require_GET
def review_savings_card(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(ExtractionRun, pk=run_id)
    context = {"card": cards.review_savings_card(run)}
    return render(request, "metrics/cards/_review_savings.html", context)


@auditor_required
@require_GET
def calibration_card(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(ExtractionRun, pk=run_id)
    return render(request, "metrics/cards/_calibration.html", {"card": cards.calibration_card(run)})


@admin_required
@require_GET
def interauditor_card(request: HttpRequest) -> HttpResponse:
    return render(request, "metrics/cards/_interauditor.html", {"card": cards.interauditor_card()})
