"""What a recompute job computes, as items (scope, target id, run id): every result that should
exist, or the stale ones; and one item computed by the per-result services."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from audit.models import Extraction, Feedback
from metrics.engine.services.children import discussion_result_compute, statement_result_compute
from metrics.engine.services.inputs import whole_discussion_pairs
from metrics.engine.services.rows import (
    CHILD_SCOPES,
    Scope,
    Status,
    extraction_results,
    failure_recorded,
)
from metrics.engine.services.runs import run_result_compute, system_result_compute

Item = tuple[str, int, int]  # (scope, target id, run id); target id 0 for run/system items


def _expected_items(run_id: int | None) -> list[Item]:
    """Every result that should exist, plus existing rows that no longer should (to remove)."""
    runs = Extraction.objects.all() if run_id is None else Extraction.objects.filter(run_id=run_id)
    approved = Feedback.objects.approved().values("statement_id")
    statements = set(
        runs.filter(statement_id__in=approved).values_list(
            "statement_id", "statement__discussion_id", "run_id"
        )
    )
    discussions = {(d, r) for _, d, r in statements} | whole_discussion_pairs(run_id=run_id)
    rows = extraction_results().filter(scope__in=CHILD_SCOPES)
    rows = rows if run_id is None else rows.filter(run_id=run_id)
    for scope, d, s, r in rows.values_list("scope", "discussion_id", "statement_id", "run_id"):
        if scope == Scope.STATEMENT:
            statements.add((s, d, r))
        else:
            discussions.add((d, r))
    run_ids = sorted({r for *_, r in statements | discussions} | ({run_id} if run_id else set()))
    return _items(statements, discussions, run_ids)


def _items(statements: set, discussions: set, run_ids: Iterable[int]) -> list[Item]:
    """Statement (statement, discussion, run) and discussion (discussion, run) items, each
    discussion right after its statements: a batch then reads a statement's inputs once
    for both, and every chunk holds its share of the discussions."""
    children: dict[tuple[str, int, int], tuple] = {}
    for s, d, r in statements:
        children.setdefault((Scope.STATEMENT, s, r), (r, d or 0, 0, s))
    for d, r in discussions:
        children[Scope.DISCUSSION, d, r] = (r, d, 1, d)
    return [
        *sorted(children, key=children.__getitem__),
        *((Scope.RUN, 0, r) for r in run_ids),
        (Scope.SYSTEM, 0, 0),
    ]


def _stale_items(
    run_id: int | None, older_than: timedelta | None = None, *, since: datetime | None = None
) -> list[Item]:
    """Stale rows (stale for longer than ``older_than``) and runs whose totals are unknown,
    oldest first; with ``since`` (a full recompute resumed), also the statement rows not
    computed since then."""
    stale = Q(status=Status.STALE)
    if older_than is not None:
        stale &= Q(stale_since__lte=timezone.now() - older_than)
    rows = extraction_results().filter(
        stale | Q(scope=Scope.RUN, contribution__isnull=True) | _undone(since)
    )
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    found = list(rows.values_list("scope", "statement_id", "discussion_id", "run_id"))
    if not found:
        return []
    statements = {(s, d, r) for scope, s, d, r in found if scope == Scope.STATEMENT}
    discussions = {(d, r) for scope, _, d, r in found if scope == Scope.DISCUSSION}
    run_ids = sorted({r for *_, r in found if r is not None})
    return _items(statements, discussions, run_ids)


def _undone(since: datetime | None) -> Q:
    """The rows a full recompute that began at ``since`` has not computed yet, beside the stale
    ones (its statement rows are not marked stale: see the package's docstring)."""
    if since is None:
        return Q(pk__in=[])
    return Q(scope=Scope.STATEMENT) & (Q(computed_at__lt=since) | Q(computed_at__isnull=True))


def _item_compute(item: Item, *, force: bool) -> None:
    scope, target, run_id = item
    with failure_recorded(
        scope=scope,
        run_id=run_id or None,
        statement_id=target if scope == Scope.STATEMENT else None,
        discussion_id=target if scope == Scope.DISCUSSION else None,
    ):
        # Batch: the items end with each run, whose totals are rebuilt once there.
        if scope == Scope.STATEMENT:
            statement_result_compute(statement_id=target, run_id=run_id, force=force, batch=True)
        elif scope == Scope.DISCUSSION:
            discussion_result_compute(discussion_id=target, run_id=run_id, force=force, batch=True)
        elif scope == Scope.RUN:
            run_result_compute(run_id=run_id, rebuild=force)
        else:
            system_result_compute()
