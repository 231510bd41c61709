"""Text normalisation and vectorised fuzzy similarity."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process


def normalize_text(value: Any) -> str:
    """Lowercase and collapse whitespace; None and non-strings read as ''."""
    if not isinstance(value, str):
        return ""
    return _normalize_string(value)


@lru_cache(maxsize=1 << 16)
def _normalize_string(value: str) -> str:
    # Names, kinds and codes recur in every statement: a cache hit is ~10x cheaper.
    return " ".join(value.lower().split())


def person_name(person: dict[str, Any]) -> str:
    parts = (normalize_text(person.get("name")), normalize_text(person.get("last_name")))
    return " ".join(part for part in parts if part)


def similarity_matrix(left: Sequence[str], right: Sequence[str]) -> np.ndarray:
    """rapidfuzz ratio for every pair, scaled to 0..1 (float64, so thresholds are exact).

    Two empty strings score 1.0 (both sides say nothing), one empty string 0.0.
    """
    if not left or not right:
        return np.zeros((len(left), len(right)))
    scores = process.cdist(left, right, scorer=fuzz.ratio, dtype=np.float64, workers=1)
    return scores / 100.0


def clear_text_cache() -> None:
    _normalize_string.cache_clear()
