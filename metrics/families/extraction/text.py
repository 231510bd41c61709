"""Text normalisation and fuzzy similarity."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

# Similarities are rounded to this many decimals so boundary cases compare exactly.
SCORE_DECIMALS = 10
_SCALE = 10.0**SCORE_DECIMALS
# From this many pairs on, one cpdist call beats a loop of fuzz.ratio calls.
_PAIRWISE_MIN = 24
# Far below the rounding step, far above float noise (scores are on a 0..100 scale).
_CUTOFF_MARGIN = 1e-6


def normalize_text(value: Any) -> str:
    """Lowercase and collapse whitespace; None and non-strings read as ''."""
    if not isinstance(value, str):
        return ""
    return _normalize_string(value)


@lru_cache(maxsize=1 << 16)
def _normalize_string(value: str) -> str:
    # Names, kinds and codes recur in every statement: a cache hit is cheaper.
    return " ".join(value.lower().split())


def normalized(values: Iterable[Any]) -> list[str]:
    """normalize_text of each value (one call per list: this runs for every item)."""
    return [_normalize_string(v) if v.__class__ is str else normalize_text(v) for v in values]


def person_name(person: dict[str, Any]) -> str:
    """First and last name, normalised, joined by a space (either may be missing)."""
    return _full_name(person.get("name"), person.get("last_name"))


def person_names(people: list[dict[str, Any]]) -> list[str]:
    """person_name of each person."""
    names = []
    for person in people:
        first, last = person.get("name"), person.get("last_name")
        try:
            names.append(_cached_full_name(first, last))
        except TypeError:  # an unhashable name (a list, say): no cache
            names.append(_full_name(first, last))
    return names


def _full_name(first: Any, last: Any) -> str:
    first, last = normalize_text(first), normalize_text(last)
    return f"{first} {last}" if first and last else first or last


# The same family members are named in statement after statement.
_cached_full_name = lru_cache(maxsize=1 << 14)(_full_name)


def similarity_matrix(left: Sequence[str], right: Sequence[str]) -> np.ndarray:
    """rapidfuzz ratio for every pair, scaled to 0..1 (float64, so thresholds are exact).

    Two empty strings score 1.0 (both sides say nothing), one empty string 0.0.
    """
    if not left or not right:
        return np.zeros((len(left), len(right)))
    scores = process.cdist(left, right, scorer=fuzz.ratio, dtype=np.float64, workers=1)
    return scores / 100.0


def round_score(value: float) -> float:
    """value rounded to SCORE_DECIMALS exactly as np.round does it (scale, round half
    to even, unscale), so scalar and vectorised paths give bit-identical scores."""
    return round(value * _SCALE) / _SCALE


def similarity(left: str, right: str) -> float:
    """One entry of similarity_matrix, rounded with round_score."""
    return round_score(fuzz.ratio(left, right) / 100.0)


def similar_pairs(
    left: Sequence[str], right: Sequence[str], threshold: float
) -> list[dict[int, float]]:
    """Per left string, {right index: rounded similarity} where it exceeds threshold."""
    rows: list[dict[int, float]] = [{} for _ in left]
    if not left or not right:
        return rows
    # One cdist call beats a loop of fuzz.ratio calls from about 2x2 up. Scores below the
    # cutoff come back as 0 and could never pass the threshold once rounded.
    cutoff = max(0.0, threshold * 100.0 - _CUTOFF_MARGIN)
    scores = process.cdist(
        left, right, scorer=fuzz.ratio, dtype=np.float64, workers=1, score_cutoff=cutoff
    )
    for row, row_scores in zip(rows, scores.tolist(), strict=True):
        for index, score in enumerate(row_scores):
            if score:
                rounded = round_score(score / 100.0)
                if rounded > threshold:
                    row[index] = rounded
    return rows


def pair_similarities(left: Sequence[str], right: Sequence[str]) -> list[float]:
    """similarity(left[k], right[k]) for each k."""
    if len(left) < _PAIRWISE_MIN:
        ratio = fuzz.ratio  # round_score, inline
        return [
            round(ratio(a, b) / 100.0 * _SCALE) / _SCALE for a, b in zip(left, right, strict=True)
        ]
    scores = process.cpdist(left, right, scorer=fuzz.ratio, dtype=np.float64, workers=1)
    return np.round(scores / 100.0, SCORE_DECIMALS).tolist()


def clear_text_cache() -> None:
    _normalize_string.cache_clear()
    _cached_full_name.cache_clear()
