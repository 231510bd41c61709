"""Metric workflows: marking stored results stale and queueing their recomputation."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.utils import timezone

from audit.models import Extraction, Statement
from metrics.models import MetricResult

log = logging.getLogger(__name__)

EXTRACTION = "extraction"


def results_mark_stale(*, statement_ids: Iterable[int], reason: str = "") -> int:
    """Mark every result that depends on these statements stale; returns how many rows changed."""
    ids = sorted(set(statement_ids))
    if not ids:
        return 0
    statements = Statement.objects.filter(pk__in=ids)
    discussion_ids = set(statements.values_list("discussion_id", flat=True))
    run_ids = set(Extraction.objects.filter(statement_id__in=ids).values_list("run_id", flat=True))
    affected = (
        MetricResult.objects.filter(family=EXTRACTION)
        .filter(models_q(statement_ids=ids, discussion_ids=discussion_ids, run_ids=run_ids))
        .exclude(status=MetricResult.Status.STALE)
    )
    changed = affected.update(status=MetricResult.Status.STALE, stale_since=timezone.now())
    log.info("marked %s results stale (%s) for statements %s", changed, reason, ids[:10])
    return changed


def models_q(*, statement_ids, discussion_ids, run_ids):
    from django.db.models import Q

    return (
        Q(scope=MetricResult.Scope.STATEMENT, statement_id__in=statement_ids)
        | Q(scope=MetricResult.Scope.DISCUSSION, discussion_id__in=discussion_ids)
        | Q(scope=MetricResult.Scope.RUN, run_id__in=run_ids)
        | Q(scope=MetricResult.Scope.SYSTEM)
    )
