"""A run's statement F1: the library's extraction F1 of the run's extraction of a statement
against its approved coding, with the deployment's match settings, computed on request.

The same inputs and the same library call as the result metrics stores for the statement
(``metrics.engine.services.children``), so the figures are the stored ones whenever those are
current; where a stored result is being recomputed, these are already what it will hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from audit.models import Extraction, Feedback
from evalsite.match_settings import match_settings
from evalsite.perf.collector import collector_paused
from metrics.families.extraction import StatementInput, calculate_statements_f1


@dataclass(frozen=True)
class StatementF1:
    ai: dict[str, Any]  # the run's extraction of the statement (its PDP delta)
    values: dict[str, Any]  # the library's figures, as metrics stores them


def run_statement_f1(
    *,
    run_id: int,
    statement_ids: Iterable[int],
    approved: dict[int, dict[str, Any] | None] | None = None,
    extractions: dict[int, tuple[int, dict[str, Any] | None]] | None = None,
) -> dict[int, StatementF1]:
    """Per statement with an approved coding that the run extracted, its F1; a statement
    without either has none. What the caller has read already is not read again: ``approved``
    (statement id → approved coding), ``extractions`` (statement id → its discussion and the
    run's extraction, for every statement the run extracted among them)."""
    ids = list(statement_ids)
    if approved is None:
        approved = dict(
            Feedback.objects.approved()
            .filter(statement_id__in=ids)
            .values_list("statement_id", "edited_extraction")
        )
    wanted = [pk for pk in ids if pk in approved]
    if extractions is None:
        rows = list(
            Extraction.objects.filter(run_id=run_id, statement_id__in=wanted).values_list(
                "statement_id", "statement__discussion_id", "pdp_deltas"
            )
        )
    else:
        rows = [(pk, *extractions[pk]) for pk in wanted if pk in extractions]
    with collector_paused():  # an export scores every approved statement of a run
        scored = calculate_statements_f1(
            (StatementInput(ai, approved[pk], pk, discussion) for pk, discussion, ai in rows),
            settings=match_settings(),
        )
    return {
        pk: StatementF1(ai or {}, metrics.to_dict())
        for (pk, _, ai), metrics in zip(rows, scored, strict=True)
    }
