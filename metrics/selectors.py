"""Reads of stored metric results, for pages, the API (stable id order for pagination) and
audit's extension point (audit.figures).

Selectors only read: computing and storing stay in the services and tasks.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from audit.figures import StoredResult
from audit.models import Statement
from audit.services.blind import coding_sealed_statement_ids
from evalsite.access import is_admin
from metrics.models import MetricResult
from metrics.own_data.agreement import statement_disagreement
from metrics.registry import ADMIN_ONLY

EXTRACTION = "extraction"


def statement_f1_results(*, run_id: int, discussion_id: int) -> dict[int, StoredResult]:
    """A run's stored statement F1 rows in one discussion, by statement id (one query)."""
    rows = MetricResult.objects.filter(
        family=EXTRACTION,
        scope=MetricResult.Scope.STATEMENT,
        run_id=run_id,
        statement__discussion_id=discussion_id,
    ).only("statement_id", "status", "values", "computed_at", "error")
    return {
        row.statement_id: StoredResult(
            status=row.status, values=row.values, computed_at=row.computed_at, error=row.error
        )
        for row in rows
    }


def statement_disagreement_read(*, statement_id: int) -> dict[str, Any] | None:
    """Whether the statement's auditors disagree, from their codings (computed on request:
    two or three codings are compared, never stored)."""
    statement = Statement.objects.filter(pk=statement_id).first()
    return statement_disagreement(statement) if statement else None


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
        MetricResult.objects.exclude(family__in=ADMIN_ONLY)
        .exclude(statement_id__in=sealed)
        .exclude(scope=MetricResult.Scope.DISCUSSION, discussion_id__in=sealed_discussions)
    )
