"""Card contexts built from stored results only (never computed on the request path)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from audit.models import LIVE_GROUND_TRUTH, ExtractionRun
from evalsite.access import is_admin
from metrics.families.extraction import SARF_VARIABLES
from metrics.models import MetricResult
from metrics.registry import EXTRACTION, FAMILIES, Family
from metrics.results import result_key, run_key

FRESH, UPDATING, FAILED, EMPTY = "fresh", "updating", "failed", "empty"
# The extraction card's statement figures, which a discussion-unit run does not have.
STATEMENT_FIGURE_LABELS = (
    "Overall F1",
    "People F1",
    "Events F1",
    "Pair bonds F1",
    "Perfect extractions",
)


def card_state(row: MetricResult | None, *, has_data: bool) -> str:
    """Every card's state: empty (no row, or nothing to show), updating (stale), failed, fresh."""
    if row is None:
        return EMPTY
    if row.status == MetricResult.Status.STALE:
        return UPDATING
    if row.status == MetricResult.Status.FAILED:
        return FAILED
    return FRESH if has_data else EMPTY


def whole_family_card(family: Family, *, run: ExtractionRun | None, user: Any) -> Any:
    """The card context of a family computed whole (per run or for the system), through the
    registry; None when there is nothing to show this user (no run, or admins only)."""
    if family.admin_only and not is_admin(user):
        return None
    if family.scope == MetricResult.Scope.SYSTEM:
        return family.card_builder()()
    return family.card_builder()(run) if run else None


def card_base(row: MetricResult | None, state: str, url: str) -> dict[str, Any]:
    """What every card shows besides its figures: state, age, error, whether to poll."""
    return {
        "state": state,
        "computed_at": row.computed_at if row else None,
        "error": row.error if row and state == FAILED else "",
        "poll": state == UPDATING,
        "url": url,
    }


def whole_family_row(family: str, run: ExtractionRun | None = None) -> MetricResult | None:
    """The stored row of a family computed whole: the run's, or (run None) the system's."""
    key = result_key(family, FAMILIES[family].scope, run_id=run.pk if run else None)
    return MetricResult.objects.filter(key=key).first()


def whole_family_card_base(
    family: str, row: MetricResult | None, state: str, run: ExtractionRun | None = None
) -> dict[str, Any]:
    """card_base of a family computed whole, polling its own URL (metrics.urls: the card of
    "<family>" is "metrics:<family>_card", with the run's id for a run's card)."""
    url = reverse(f"metrics:{family}_card", args=[run.pk] if run else [])
    return card_base(row, state, url)


def extraction_state(row: MetricResult | None, *, whole: bool = False) -> str:
    """A discussion-unit run (``whole``) has figures once a discussion is scored; a
    statement-unit run once a statement is."""
    counted = "n_discussions" if whole else "n_statements"
    return card_state(row, has_data=bool(((row and row.values) or {}).get(counted)))


def extraction_card(run: ExtractionRun) -> dict[str, Any]:
    """The run's extraction-F1 figures and their state: fresh, updating (stale), failed, empty.

    While updating, the last figures (if any) are shown with an "updating…" note. A
    discussion-unit run (``whole``) has no statement figures: the card says "not applicable".
    """
    row = MetricResult.objects.filter(key=run_key(EXTRACTION, run.pk)).first()
    values = (row.values if row else None) or {}
    whole = run.is_discussion_unit
    state = extraction_state(row, whole=whole)
    return {
        **card_base(row, state, reverse("metrics:extraction_card", args=[run.pk])),
        "run": run,
        "whole": whole,
        "statement_labels": STATEMENT_FIGURE_LABELS,
        "basis": LIVE_GROUND_TRUTH,
        "system": values.get("system"),
        "sarf": sarf_rows(values.get("system")),
        "cumulative": values.get("cumulative"),
        "n_statements": values.get("n_statements") or 0,
        "n_discussions": values.get("n_discussions") or 0,
        "n_left_out": values.get("n_left_out") or 0,
    }


def sarf_rows(system: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per SARF variable: the pooled macro-F1 (primary) and the mean of per-statement values."""
    system = system or {}
    return [
        {
            "variable": variable,
            "pooled": system.get(f"{variable}_macro_f1"),
            "mean": system.get(f"mean_statement_{variable}_macro_f1"),
        }
        for variable in SARF_VARIABLES
    ]
