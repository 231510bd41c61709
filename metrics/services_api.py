"""Reads the REST API needs from the metrics app (stable id order for pagination).

Recomputing is ``metrics.services.metrics_recompute_all``; the API calls it directly.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from audit.models import Statement
from audit.services.blind import coding_sealed_statement_ids
from evalsite.access import is_admin
from metrics.models import ComputeJob, MetricResult
from metrics.own_data.common import INTERAUDITOR


def metric_results_list(
    *, user=None, filters: dict[str, Any] | None = None
) -> QuerySet[MetricResult]:
    filters = filters or {}
    qs = MetricResult.objects.all() if user is None else metric_results_visible(user=user)
    for key in ("family", "scope", "status"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    for key in ("run", "discussion", "statement"):
        if key in filters:
            qs = qs.filter(**{f"{key}_id": filters[key]})
    return qs.order_by("id")


def metric_results_visible(*, user) -> QuerySet[MetricResult]:
    """Stored results the user may read. Admins: all. Auditors: not the inter-auditor figures
    (they name auditors and compare their codings), and no statement or discussion result that
    covers a statement they are still coding (blind sample not yet submitted, or a draft): those
    carry the approved ground truth (matched ids, SARF code pairs)."""
    if is_admin(user):
        return MetricResult.objects.all()
    sealed = coding_sealed_statement_ids(user=user)
    sealed_discussions = Statement.objects.filter(pk__in=sealed).values("discussion_id")
    return (
        MetricResult.objects.exclude(family=INTERAUDITOR)
        .exclude(statement_id__in=sealed)
        .exclude(scope=MetricResult.Scope.DISCUSSION, discussion_id__in=sealed_discussions)
    )


def compute_jobs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ComputeJob]:
    filters = filters or {}
    qs = ComputeJob.objects.all()
    for key in ("kind", "status"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    return qs.order_by("id")
