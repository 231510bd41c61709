"""Card contexts built from stored results only (never computed on the request path)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from audit.models import ExtractionRun
from metrics.models import MetricResult
from metrics.services import run_key

FRESH, UPDATING, FAILED, EMPTY = "fresh", "updating", "failed", "empty"


def _state(row: MetricResult | None) -> str:
    if row is None:
        return EMPTY
    if row.status == MetricResult.Status.STALE:
        return UPDATING
    if row.status == MetricResult.Status.FAILED:
        return FAILED
    return FRESH if (row.values or {}).get("n_statements") else EMPTY


def extraction_card(run: ExtractionRun) -> dict[str, Any]:
    """The run's extraction-F1 figures and their state: fresh, updating (stale), failed, empty.

    While updating, the last figures (if any) are shown with an "updating…" note.
    """
    row = MetricResult.objects.filter(key=run_key(run_id=run.pk)).first()
    values = (row.values if row else None) or {}
    state = _state(row)
    return {
        "run": run,
        "state": state,
        "system": values.get("system"),
        "cumulative": values.get("cumulative"),
        "n_statements": values.get("n_statements", 0),
        "n_discussions": values.get("n_discussions", 0),
        "computed_at": row.computed_at if row else None,
        "error": row.error if row and state == FAILED else "",
        "poll": state == UPDATING,
        "url": reverse("metrics:extraction_card", args=[run.pk]),
    }
