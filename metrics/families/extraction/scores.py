"""Precision, recall and F1 from TP/FP/FN counts."""

from __future__ import annotations


def precision_recall_f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Nothing to find and nothing claimed scores 1.0 everywhere.

    Precision with nothing claimed is 1.0 only when nothing was missed either
    (and likewise recall), so an empty AI answer to a non-empty GT scores 0.
    """
    precision = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    recall = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    return precision, recall, f1_from_counts(tp, fp, fn)


def f1_from_counts(tp: int, fp: int, fn: int) -> float:
    """2TP / (2TP + FP + FN), the harmonic mean of precision and recall; 1.0 for 0/0/0."""
    denominator = 2 * tp + fp + fn
    return 1.0 if denominator == 0 else 2 * tp / denominator
