"""SARF variable agreement over matched events: macro-F1 from (ai, gt) value pairs.

scikit-learn's f1_score(average="macro") over the classes present is the
definition; it is computed here from a confusion table because sklearn's input
validation costs about a millisecond per call, which the benchmark cannot afford.
The tests check the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from .text import normalize_text

SARF_VARIABLES: tuple[str, ...] = ("symptom", "anxiety", "relationship", "functioning")
NONE_CLASS = "none"

# Confusion table: ai value -> gt value -> count.
Confusion = dict[str, dict[str, int]]


def sarf_value(event: Mapping[str, Any], variable: str) -> str:
    """The coded value, lowercased; missing reads as the class "none"."""
    return normalize_text(event.get(variable)) or NONE_CLASS


def sarf_values(event: Mapping[str, Any]) -> tuple[str, ...]:
    """sarf_value of every variable, in SARF_VARIABLES order."""
    raw = tuple(map(event.get, SARF_VARIABLES))
    try:
        return _codes(raw)
    except TypeError:  # an unhashable value (a list, say): reads as "none" uncached
        return tuple(map(_code, raw))


@lru_cache(maxsize=4096)
def _codes(raw: tuple[Any, ...]) -> tuple[str, ...]:
    # Events carry a few dozen distinct code combinations: a cache hit beats four lookups.
    return tuple(map(_code, raw))


def _code(value: Any) -> str:
    return normalize_text(value) or NONE_CLASS


def clear_sarf_cache() -> None:
    _codes.cache_clear()


def confusion_from_pairs(pairs: Iterable[tuple[str, str] | list[str]]) -> Confusion:
    table: Confusion = {}
    for ai_value, gt_value in pairs:
        row = table.setdefault(ai_value, {})
        row[gt_value] = row.get(gt_value, 0) + 1
    return table


def macro_f1_from_confusion(table: Mapping[str, Mapping[str, int]]) -> float | None:
    """Mean per-class F1 over every class seen on either side; None without data."""
    predicted: dict[str, int] = {}
    actual: dict[str, int] = {}
    correct: dict[str, int] = {}
    for ai_value, row in table.items():
        for gt_value, count in row.items():
            if count <= 0:
                continue
            predicted[ai_value] = predicted.get(ai_value, 0) + count
            actual[gt_value] = actual.get(gt_value, 0) + count
            if ai_value == gt_value:
                correct[ai_value] = correct.get(ai_value, 0) + count
    if not predicted and not actual:
        return None
    return _macro_f1(predicted, actual, correct)


def macro_f1_from_pairs(pairs: Iterable[tuple[str, str] | list[str]]) -> float | None:
    """macro_f1_from_confusion(confusion_from_pairs(pairs)), without building the table."""
    columns = list(zip(*pairs, strict=True))
    return macro_f1_from_columns(*columns) if columns else None


def macro_f1_from_columns(ai_values: Sequence[str], gt_values: Sequence[str]) -> float | None:
    """macro_f1_from_pairs(zip(ai_values, gt_values))."""
    if not ai_values:
        return None
    if ai_values == gt_values:
        return 1.0  # full agreement: every class scores 1.0, and so does their mean
    predicted: dict[str, int] = {}
    actual: dict[str, int] = {}
    correct: dict[str, int] = {}
    for ai_value, gt_value in zip(ai_values, gt_values, strict=True):
        predicted[ai_value] = predicted.get(ai_value, 0) + 1
        actual[gt_value] = actual.get(gt_value, 0) + 1
        if ai_value == gt_value:
            correct[ai_value] = correct.get(ai_value, 0) + 1
    return _macro_f1(predicted, actual, correct)


def _macro_f1(predicted: dict[str, int], actual: dict[str, int], correct: dict[str, int]) -> float:
    classes = sorted(predicted.keys() | actual.keys())  # fixed order: reproducible sums
    # Per class F1 = 2TP / (2TP + FP + FN) = 2TP / (predicted + actual).
    per_class = [2 * correct.get(c, 0) / (predicted.get(c, 0) + actual.get(c, 0)) for c in classes]
    return sum(per_class) / len(per_class)
