"""Reads the REST API needs from the metrics app (stable id order for pagination).

Recomputing is ``metrics.services.metrics_recompute_all``; the API calls it directly.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from metrics.models import ComputeJob, MetricResult


def metric_results_list(*, filters: dict[str, Any] | None = None) -> QuerySet[MetricResult]:
    filters = filters or {}
    qs = MetricResult.objects.all()
    for key in ("family", "scope", "status"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    for key in ("run", "discussion", "statement"):
        if key in filters:
            qs = qs.filter(**{f"{key}_id": filters[key]})
    return qs.order_by("id")


def compute_jobs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ComputeJob]:
    filters = filters or {}
    qs = ComputeJob.objects.all()
    for key in ("kind", "status"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    return qs.order_by("id")
