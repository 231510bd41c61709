"""Many statements (or discussions) at once: the same results as one call per item, with
the settings resolved once. Nothing built here forms a reference cycle (the results are
plain trees), so a caller scoring many may pause Python's cyclic collector around the call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .cumulative import calculate_cumulative_f1
from .results import CumulativeF1Metrics, StatementF1Metrics
from .settings import MatchSettings, resolve_settings
from .statement import calculate_statement_f1

Payload = dict[str, Any] | None


class StatementInput(NamedTuple):
    """One statement to score; plain (ai, gt) or 4-tuples are accepted too."""

    ai: Payload
    gt: Payload
    statement_id: int | None = None
    discussion_id: int | None = None


class DiscussionInput(NamedTuple):
    """One discussion's subject-statement deltas, in order; (ai, gt) pairs accepted too."""

    ai_deltas: Sequence[Payload]
    gt_deltas: Sequence[Payload]
    discussion_id: int | None = None


def calculate_statements_f1(
    statements: Iterable[StatementInput | tuple],
    *,
    settings: MatchSettings | None = None,
) -> list[StatementF1Metrics]:
    """calculate_statement_f1 of each (ai, gt[, statement_id, discussion_id]) item."""
    settings = resolve_settings(settings)
    return [
        calculate_statement_f1(
            item.ai,
            item.gt,
            settings=settings,
            statement_id=item.statement_id,
            discussion_id=item.discussion_id,
        )
        for item in map(_as_statement, statements)
    ]


def calculate_discussions_cumulative_f1(
    discussions: Iterable[DiscussionInput | tuple],
    *,
    settings: MatchSettings | None = None,
) -> list[CumulativeF1Metrics]:
    """calculate_cumulative_f1 of each (ai_deltas, gt_deltas[, discussion_id]) item."""
    settings = resolve_settings(settings)
    return [
        calculate_cumulative_f1(
            item.ai_deltas, item.gt_deltas, settings=settings, discussion_id=item.discussion_id
        )
        for item in map(_as_discussion, discussions)
    ]


def _as_statement(item: StatementInput | tuple) -> StatementInput:
    return item if isinstance(item, StatementInput) else StatementInput(*item)


def _as_discussion(item: DiscussionInput | tuple) -> DiscussionInput:
    return item if isinstance(item, DiscussionInput) else DiscussionInput(*item)
