"""One-to-one assignment of AI items to GT items among the pairs that pass the gates."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

Pair = tuple[int, int]  # (ai index, gt index)
KeyFactory = Callable[[], Sequence[Any]]  # computed only when there is a conflict

# Scores are compared to a millionth; finer differences count as ties.
_SCORE_RESOLUTION = 1_000_000
# Above this many rows or columns the exact integer weights would exceed float64's
# 2**53, so the id preference among ties is dropped there (counts and scores stay).
_MAX_EXACT_SIZE = 1000


def assign(
    scores: np.ndarray,
    allowed: np.ndarray,
    strategy: str = "optimal",
    ai_keys: KeyFactory | None = None,
    gt_keys: KeyFactory | None = None,
    ai_ids: Sequence[Any] | None = None,
    gt_ids: Sequence[Any] | None = None,
) -> list[Pair]:
    """Matched (ai, gt) index pairs, sorted by ai index.

    scores and allowed are (n_ai, n_gt) arrays. For the optimal strategy, ties are
    settled first in favour of pairs with the same id (a GT payload is usually an
    edited copy of the AI's), then by the content keys: rows and columns are
    solved in key order, so the result does not depend on the listing order.
    """
    rows, cols = allowed.nonzero()
    if rows.size == 0:
        return []
    # A pair with no rival on either side is in every maximal assignment, greedy or
    # optimal; taking those first leaves a much smaller problem to solve.
    uncontested = (np.bincount(rows)[rows] == 1) & (np.bincount(cols)[cols] == 1)
    pairs = list(zip(rows[uncontested].tolist(), cols[uncontested].tolist(), strict=True))
    if len(pairs) == rows.size:
        return pairs
    contested_rows, contested_cols = np.unique(rows[~uncontested]), np.unique(cols[~uncontested])
    if strategy == "greedy":
        sub = np.ix_(contested_rows, contested_cols)
        solved = greedy_assignment(scores[sub], allowed[sub])
    else:
        contested_rows = _canonical_order(contested_rows, ai_keys)
        contested_cols = _canonical_order(contested_cols, gt_keys)
        sub = np.ix_(contested_rows, contested_cols)
        same = _same_ids(ai_ids, gt_ids, contested_rows, contested_cols)
        solved = optimal_assignment(scores[sub], allowed[sub], same)
    pairs += [(int(contested_rows[i]), int(contested_cols[j])) for i, j in solved]
    return sorted(pairs)


def greedy_assignment(scores: np.ndarray, allowed: np.ndarray) -> list[Pair]:
    """Each AI item in list order takes the best remaining GT item, the first on ties.

    This is the reference implementation's behaviour, kept for comparison.
    """
    available = allowed.copy()
    pairs: list[Pair] = []
    for ai_index in range(scores.shape[0]):
        row = np.where(available[ai_index], scores[ai_index], -np.inf)
        gt_index = int(np.argmax(row))  # argmax returns the first maximum
        if np.isfinite(row[gt_index]):
            pairs.append((ai_index, gt_index))
            available[:, gt_index] = False
    return pairs


def optimal_assignment(
    scores: np.ndarray, allowed: np.ndarray, preferred: np.ndarray | None = None
) -> list[Pair]:
    """Most matches; among those, the highest total score; then the most preferred pairs.

    The three goals become one integer weight per pair, each goal's unit larger than
    everything below it can add up to, so one extra match always outweighs better
    scores (a plain maximum-weight assignment could trade two weak matches for one
    strong one) and a better score always outweighs preferences.
    """
    size = min(scores.shape)
    score_units = np.rint(np.clip(scores, 0.0, 1.0) * _SCORE_RESOLUTION)
    if preferred is None or size > _MAX_EXACT_SIZE:
        preferred = np.zeros(scores.shape, dtype=bool)
    score_unit = size + 1  # all preferences together stay below one score unit
    match_unit = (_SCORE_RESOLUTION * score_unit + 1) * (size + 1)
    weights = np.where(allowed, match_unit + score_units * score_unit + preferred, 0.0)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if allowed[r, c]]


def equal_by_code(left: Sequence[Hashable], right: Sequence[Hashable]) -> np.ndarray:
    """(len(left), len(right)) boolean matrix of left[i] == right[j], for hashables."""
    codes: dict[Hashable, int] = {}
    right_codes = np.array([codes.setdefault(value, len(codes)) for value in right], dtype=np.intp)
    left_codes = np.array([codes.get(value, -1) for value in left], dtype=np.intp)
    return left_codes[:, None] == right_codes[None, :]


def _same_ids(ai_ids, gt_ids, rows: np.ndarray, cols: np.ndarray) -> np.ndarray | None:
    if ai_ids is None or gt_ids is None:
        return None
    # A missing id matches nothing: each gets a distinct stand-in.
    left = [ai_ids[r] if ai_ids[r] is not None else object() for r in rows.tolist()]
    right = [gt_ids[c] if gt_ids[c] is not None else object() for c in cols.tolist()]
    return equal_by_code(left, right)


def _canonical_order(indices: np.ndarray, keys: KeyFactory | None) -> np.ndarray:
    if keys is None:
        return indices
    all_keys = keys()
    return np.array(sorted(indices.tolist(), key=all_keys.__getitem__), dtype=np.intp)
