"""The accumulated PDP's AI vs GT comparison (the accumulation itself, ``cumulative``, is a
payload rule of metrics.families.payload.rules, re-exported here)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from metrics.families.payload.items import cumulative as cumulative

from .results import CumulativeF1Metrics
from .settings import MatchSettings
from .statement import compare_payloads


def calculate_cumulative_f1(
    ai_deltas_list: Iterable[dict[str, Any] | None],
    gt_deltas_list: Iterable[dict[str, Any] | None],
    *,
    settings: MatchSettings | None = None,
    discussion_id: int | None = None,
) -> CumulativeF1Metrics:
    """Match the end states of the AI's and the GT's accumulated PDPs.

    Both lists are the discussion's subject statements, in order.
    """
    ai_deltas, gt_deltas = list(ai_deltas_list), list(gt_deltas_list)
    fields = compare_payloads(cumulative(ai_deltas), cumulative(gt_deltas), settings=settings)
    return CumulativeF1Metrics(
        discussion_id=discussion_id,
        statement_count=max(len(ai_deltas), len(gt_deltas)),
        **fields,
    )
