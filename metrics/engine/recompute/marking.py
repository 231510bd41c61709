"""Results marked stale in bulk and left to one stale-only recompute job: those computed with
other match settings or code than those in force, and changes too large for a task per result."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Q

from evalsite.match_settings import match_settings
from metrics.engine.recompute.jobs import metrics_recompute_all
from metrics.engine.services.rows import CODE_VERSION, Scope, Status, extraction_results
from metrics.engine.services.stale import results_mark_stale, rows_mark_stale
from metrics.own_data.common import own_results_mark_stale, own_results_outdated

log = logging.getLogger(__name__)


def results_outdated() -> Any:
    """Extraction rows (not already stale) computed with other match settings or code than
    those in force now."""
    return (
        extraction_results()
        .exclude(status=Status.STALE)
        .exclude(match_settings=match_settings().to_dict(), code_version=CODE_VERSION)
    )


def results_mark_outdated() -> int:
    """Mark every result computed with other settings or code stale, and queue one stale-only
    recompute job for them (the own-data families follow). Returns how many rows changed.

    Called at worker start and by every periodic sweep: cheap when nothing is outdated (one
    query), safe to run from several processes at once (rows are marked under their locks,
    so only the first caller finds them not yet stale and queues the job).
    """
    with transaction.atomic():
        pks = list(results_outdated().values_list("pk", flat=True))
        marked = rows_mark_stale(Q(pk__in=pks))[1] if pks else 0
        if marked:
            rows_mark_stale(Q(scope=Scope.SYSTEM))
            metrics_recompute_all(stale_only=True)
    if own_results_outdated().exists():
        own_results_mark_stale(reason="match settings or code changed")
    if marked:
        log.warning(
            "%s extraction results were computed with other match settings or code: "
            "marked stale, recompute queued",
            marked,
        )
    return marked


def results_mark_stale_many(
    *, statement_ids: Iterable[int], reason: str = "", run_ids: Iterable[int] | None = None
) -> int:
    """What ``results_mark_stale`` does, for changes too large for a task per result (an
    import of thousands of statements): the same rows are marked stale, and one stale-only
    recompute job computes them in chunks that every slow worker shares, so the broker gets
    one message instead of one per result. Returns how many rows changed."""
    with transaction.atomic():
        marked = results_mark_stale(
            statement_ids=statement_ids, reason=reason, run_ids=run_ids, queue_tasks=False
        )
        metrics_recompute_all(stale_only=True)  # placeholders are new stale rows, uncounted
    return marked
