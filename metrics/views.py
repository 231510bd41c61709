"""Dashboards: they read stored results only and never compute on the request path."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from audit.models import ExtractionRun
from audit.views import admin_required, auditor_required
from metrics.models import Evaluation, MetricResult


@auditor_required
def dashboard(request: HttpRequest) -> HttpResponse:
    results = MetricResult.objects.filter(scope=MetricResult.Scope.RUN).select_related("run")
    return render(request, "metrics/dashboard.html", {"results": results})


@admin_required
def runs(request: HttpRequest) -> HttpResponse:
    return render(request, "metrics/runs.html", {"runs": ExtractionRun.objects.all()})


@admin_required
def evaluations(request: HttpRequest) -> HttpResponse:
    return render(
        request, "metrics/evaluations.html", {"evaluations": Evaluation.objects.all()[:100]}
    )
