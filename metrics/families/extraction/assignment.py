"""One-to-one assignment of AI items to GT items among the pairs that pass the gates."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import chain, permutations
from typing import Any, TypedDict, Unpack

import numpy as np
from scipy.optimize import linear_sum_assignment

Pair = tuple[int, int]  # (ai index, gt index)
# The sort key of one AI (or GT) index; only called for items in a conflict.
KeyFunction = Callable[[int], Any]
# Per AI item, {gt index: score} of the pairs that pass every gate, gt indices ascending.
Candidates = Sequence[Mapping[int, float]]

# Scores are compared to a millionth; finer differences count as ties.
_SCORE_RESOLUTION = 1_000_000
# Above this many rows or columns the exact integer weights would exceed float64's
# 2**53, so the id preference among ties is dropped there (counts and scores stay).
_MAX_EXACT_SIZE = 1000
# Conflicts with at most this many items on the larger side are solved by enumerating
# the assignments (at most 5! = 120) instead of calling the solver.
_ENUMERATE_MAX_SIDE = 5


class TieBreaks(TypedDict, total=False):
    """assign_candidates' optional arguments, by name: what settles ties."""

    ai_keys: KeyFunction | None
    gt_keys: KeyFunction | None
    ai_ids: Sequence[Any] | None
    gt_ids: Sequence[Any] | None


def assign(
    scores: np.ndarray, allowed: np.ndarray, strategy: str = "optimal", **ties: Unpack[TieBreaks]
) -> list[Pair]:
    """assign_candidates for dense (n_ai, n_gt) score and allowed arrays."""
    score_rows = scores.tolist()
    candidates = [
        {j: score_rows[i][j] for j in np.flatnonzero(row).tolist()} for i, row in enumerate(allowed)
    ]
    return assign_candidates(candidates, strategy, **ties)


def assign_candidates(
    candidates: Candidates,
    strategy: str = "optimal",
    ai_keys: KeyFunction | None = None,
    gt_keys: KeyFunction | None = None,
    ai_ids: Sequence[Any] | None = None,
    gt_ids: Sequence[Any] | None = None,
) -> list[Pair]:
    """Matched (ai, gt) index pairs, sorted by ai index.

    For the optimal strategy, ties are settled first in favour of pairs with the
    same id (a GT payload is usually an edited copy of the AI's), then by the
    content keys: rows and columns are solved in key order, so the result does not
    depend on the listing order.
    """
    pairs = without_rivals(candidates)
    if pairs is not None:
        return pairs  # no item has two candidates: nothing to choose (the usual case)
    pairs, contested = uncontested(candidates)
    if not contested:
        return pairs
    pairs += _solve_contested(candidates, contested, strategy, ai_keys, gt_keys, ai_ids, gt_ids)
    return sorted(pairs)


def without_rivals(candidates: Candidates) -> list[Pair] | None:
    """Every candidate pair, sorted by ai index, when no item has two candidates (then
    they are the only maximal assignment); None otherwise. Cheaper than uncontested."""
    pairs = [(i, j) for i, row in enumerate(candidates) for j in row]
    rows_used = sum(map(bool, candidates))
    if len(pairs) == rows_used == len(set(chain.from_iterable(candidates))):
        return pairs
    return None


def uncontested(candidates: Candidates) -> tuple[list[Pair], list[int]]:
    """The pairs with no rival on either side, and the rows that have rivals.

    An uncontested pair is in every maximal assignment, greedy or optimal; taking
    those first leaves a much smaller problem to solve.
    """
    column_use = Counter(chain.from_iterable(candidates))  # iterating a row gives its columns
    pairs: list[Pair] = []
    contested: list[int] = []
    for i, row in enumerate(candidates):
        if len(row) == 1:
            (j,) = row
            if column_use[j] == 1:
                pairs.append((i, j))
                continue
        if row:
            contested.append(i)
    return pairs, contested


def _solve_contested(
    candidates: Candidates,
    rows: list[int],
    strategy: str,
    ai_keys: KeyFunction | None,
    gt_keys: KeyFunction | None,
    ai_ids: Sequence[Any] | None,
    gt_ids: Sequence[Any] | None,
) -> list[Pair]:
    """Solve the rows that compete for some column, and every column they reach."""
    cols = sorted({j for i in rows for j in candidates[i]})
    if strategy == "greedy":
        solved = greedy_assignment(*_dense(candidates, rows, cols))
    else:
        enumerated = _unique_optimum(candidates, rows, cols, ai_ids, gt_ids)
        if enumerated is not None:
            return enumerated
        rows, cols = _canonical_order(rows, ai_keys), _canonical_order(cols, gt_keys)
        same = _same_ids(ai_ids, gt_ids, rows, cols)
        solved = optimal_assignment(*_dense(candidates, rows, cols), same)
    return [(rows[i], cols[j]) for i, j in solved]


def _unique_optimum(
    candidates: Candidates,
    rows: list[int],
    cols: list[int],
    ai_ids: Sequence[Any] | None,
    gt_ids: Sequence[Any] | None,
) -> list[Pair] | None:
    """optimal_assignment's pairs for a small sub-problem, found by enumeration.

    None when the sub-problem is too big to enumerate, or when two different sets of
    pairs tie for the best weight: which one the solver returns then depends on its
    internal order, so it has to be asked. Otherwise the best set is unique and the
    exact solver must return it too. (Most conflicts are two people or events
    competing for two counterparts, where the solver's setup costs far more.)
    """
    if len(rows) > len(cols):
        if len(rows) > _ENUMERATE_MAX_SIDE:
            return None
        assignments = (zip(order, cols, strict=True) for order in permutations(rows, len(cols)))
    else:
        if len(cols) > _ENUMERATE_MAX_SIDE:
            return None
        assignments = (zip(rows, order, strict=True) for order in permutations(cols, len(rows)))
    weights = _pair_weights(candidates, rows, min(len(rows), len(cols)), ai_ids, gt_ids)
    best, best_pairs, tied = -1, [], False
    for assignment in assignments:
        chosen = [pair for pair in assignment if pair in weights]
        total = sum(weights[pair] for pair in chosen)
        if total > best:
            best, best_pairs, tied = total, chosen, False
        elif total == best and set(chosen) != set(best_pairs):
            tied = True
    return None if tied else best_pairs


def _pair_weights(
    candidates: Candidates,
    rows: list[int],
    size: int,
    ai_ids: Sequence[Any] | None,
    gt_ids: Sequence[Any] | None,
) -> dict[Pair, int]:
    """The integer weights optimal_assignment gives each allowed pair (see there)."""
    score_unit = size + 1
    match_unit = (_SCORE_RESOLUTION * score_unit + 1) * (size + 1)
    weights: dict[Pair, int] = {}
    for i in rows:
        for j, score in candidates[i].items():
            units = round(min(max(score, 0.0), 1.0) * _SCORE_RESOLUTION)  # as np.rint: half-even
            weights[i, j] = match_unit + units * score_unit + _same_id(i, j, ai_ids, gt_ids)
    return weights


def _same_id(i: int, j: int, ai_ids: Sequence[Any] | None, gt_ids: Sequence[Any] | None) -> int:
    """1 when both items carry the same id (as _same_ids decides it), else 0."""
    if ai_ids is None or gt_ids is None or ai_ids[i] is None:
        return 0
    ai_id, gt_id = ai_ids[i], gt_ids[j]
    return int(ai_id is gt_id or ai_id == gt_id)  # dict-key equality, as equal_by_code uses


def _dense(
    candidates: Candidates, rows: list[int], cols: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The (rows, cols) sub-problem as score and allowed arrays (0.0 where not allowed)."""
    position = {col: index for index, col in enumerate(cols)}
    row_at, col_at, values = [], [], []
    for r, i in enumerate(rows):
        for j, score in candidates[i].items():
            row_at.append(r)
            col_at.append(position[j])
            values.append(score)
    scores = np.zeros((len(rows), len(cols)))
    allowed = np.zeros((len(rows), len(cols)), dtype=bool)
    scores[row_at, col_at] = values
    allowed[row_at, col_at] = True
    return scores, allowed


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
    allowed = np.asarray(allowed, dtype=bool)  # used as a mask below
    size = min(scores.shape)
    score_unit = size + 1  # all preferences together stay below one score unit
    match_unit = (_SCORE_RESOLUTION * score_unit + 1) * (size + 1)
    # match_unit + score units * score_unit + preferred, built in place (every value is
    # an integer well below 2**53, so the order of the additions cannot matter).
    weights = np.clip(scores, 0.0, 1.0)
    weights *= _SCORE_RESOLUTION
    np.rint(weights, out=weights)
    weights *= score_unit
    weights += match_unit
    if preferred is not None and size <= _MAX_EXACT_SIZE:
        weights += preferred
    weights[~allowed] = 0.0
    rows, cols = linear_sum_assignment(weights, maximize=True)
    kept = allowed[rows, cols]  # the solver pairs every row; only allowed pairs are matches
    return list(zip(rows[kept].tolist(), cols[kept].tolist(), strict=True))


def equal_by_code(left: Sequence[Hashable], right: Sequence[Hashable]) -> np.ndarray:
    """(len(left), len(right)) boolean matrix of left[i] == right[j], for hashables."""
    codes: dict[Hashable, int] = {}
    right_codes = np.array([codes.setdefault(value, len(codes)) for value in right], dtype=np.intp)
    left_codes = np.array([codes.get(value, -1) for value in left], dtype=np.intp)
    return left_codes[:, None] == right_codes[None, :]


def _same_ids(ai_ids, gt_ids, rows: list[int], cols: list[int]) -> np.ndarray | None:
    if ai_ids is None or gt_ids is None:
        return None
    # A missing id matches nothing: each gets a distinct stand-in.
    left = [ai_ids[r] if ai_ids[r] is not None else object() for r in rows]
    right = [gt_ids[c] if gt_ids[c] is not None else object() for c in cols]
    return equal_by_code(left, right)


def _canonical_order(indices: list[int], key: KeyFunction | None) -> list[int]:
    """indices (ascending) sorted by their keys; a stable sort keeps equal keys in order."""
    if key is None:
        return indices
    return sorted(indices, key=key)
