"""Reads of stored metric results, for pages, the API and audit's extension point.

Selectors only read: computing and storing stay in the services and tasks.
"""

from __future__ import annotations

from typing import Any

from audit.figures import StoredResult
from audit.models import Statement
from metrics.models import MetricResult
from metrics.own_data.agreement import statement_disagreement

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
