"""Inter-auditor agreement helpers on plain data (pure: the Django side feeds the values).

Cohen's kappa for categorical labels, Lin's CCC for numeric ratings, a symmetric mean for
directional measures, and a cluster bootstrap for "agreement with the AI, pre-filled vs blind".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metrics.families.agreement import weighted_ccc
from metrics.families.agreement.numbers import finite_or_none
from metrics.families.resampling import CI_PERCENTILES, cluster_draws, percentile_ci


def _complete_label_pairs(
    labels_a: Sequence[Hashable | None], labels_b: Sequence[Hashable | None]
) -> list[tuple[Hashable, Hashable]]:
    if len(labels_a) != len(labels_b):
        raise ValueError(f"label lists differ in length: {len(labels_a)} vs {len(labels_b)}")
    return [
        (a, b) for a, b in zip(labels_a, labels_b, strict=True) if a is not None and b is not None
    ]


def cohens_kappa(
    labels_a: Sequence[Hashable | None], labels_b: Sequence[Hashable | None]
) -> float | None:
    """Cohen's kappa (p_o - p_e) / (1 - p_e) of two auditors' labels on the same items.

    Items where either label is None are left out. None when undefined: no complete item, or
    chance agreement p_e = 1 (both auditors used one and the same label for everything).
    """
    pairs = _complete_label_pairs(labels_a, labels_b)
    if not pairs:
        return None
    n_items = len(pairs)
    observed = sum(a == b for a, b in pairs) / n_items
    counts_a = Counter(a for a, _ in pairs)
    counts_b = Counter(b for _, b in pairs)
    expected = sum(counts_a[label] * counts_b[label] for label in counts_a) / (n_items * n_items)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1.0 - expected)


def lins_ccc(x: Sequence[float | None], y: Sequence[float | None]) -> float | None:
    """Unweighted Lin's CCC of two auditors' numeric ratings (population moments).

    Pairs with a missing or non-finite value are left out; None with fewer than two pairs.
    """
    if len(x) != len(y):
        raise ValueError(f"rating lists differ in length: {len(x)} vs {len(y)}")
    return weighted_ccc(x, y, [1.0] * len(x))


def symmetric_mean(f_ab: float | None, f_ba: float | None) -> float | None:
    """Mean of a directional measure taken both ways (a against b, b against a).

    None unless both directions are finite numbers: one direction alone is not symmetric.
    """
    forward, backward = finite_or_none(f_ab), finite_or_none(f_ba)
    if forward is None or backward is None:
        return None
    return (forward + backward) / 2.0


def _cluster_sums(
    pairs_by_cluster: Mapping[Any, Sequence[tuple[Any, Any]]],
) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster: sum of (a - b) and number of pairs with both values finite. Clusters are
    ordered by repr so the resampling does not depend on the dict's insertion order."""
    differences, counts = [], []
    for cluster in sorted(pairs_by_cluster, key=repr):
        valid = [
            (a, b)
            for a, b in (
                (finite_or_none(pair[0]), finite_or_none(pair[1]))
                for pair in pairs_by_cluster[cluster]
            )
            if a is not None and b is not None
        ]
        differences.append(math.fsum(a - b for a, b in valid))
        counts.append(len(valid))
    return np.array(differences, dtype=float), np.array(counts, dtype=float)


def cluster_bootstrap_mean_diff(
    pairs_by_cluster: Mapping[Any, Sequence[tuple[Any, Any]]],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Mean of a minus mean of b over all complete pairs, with a 95% cluster-bootstrap CI.

    E.g. a = agreement with the AI when pre-filled, b = when blind, clustered by item. Each
    replicate draws as many clusters as there are, with replacement (numpy RandomState(seed)),
    and recomputes the difference over the drawn clusters' pairs; a replicate with no pair is
    invalid. CI = 2.5 / 97.5 percentiles of the valid replicates. No interval (ci95 None, with
    ``no_ci`` saying why) when fewer than two clusters hold a complete pair (every replicate
    would redraw the same data: a "CI" of [point, point] would claim a certainty there is no
    evidence for) or fewer than two replicates are valid. No complete pair at all -> point and
    ci95 None. Returns {"point", "ci95", "no_ci", "n_clusters", "n_pairs", "n_valid_resamples"}.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    differences, counts = _cluster_sums(pairs_by_cluster)
    n_pairs = int(counts.sum())
    summary: dict[str, Any] = {"n_clusters": len(counts), "n_pairs": n_pairs}
    if n_pairs == 0:
        return {"point": None, "ci95": None, "no_ci": "", **summary, "n_valid_resamples": 0}
    # Pairs are complete, so mean(a) - mean(b) equals the mean of the paired differences.
    point = float(differences.sum() / n_pairs)
    draws = cluster_draws(len(counts), n_resamples=n_resamples, seed=seed)
    drawn_pairs = counts[draws].sum(axis=1)
    valid = drawn_pairs > 0
    replicates = differences[draws].sum(axis=1)[valid] / drawn_pairs[valid]
    ci95, no_ci = None, ""
    if int((counts > 0).sum()) < 2:
        no_ci = "too few clusters for an interval"
    elif replicates.size < 2:
        no_ci = "too few valid resamples for an interval"
    else:
        ci95 = list(percentile_ci(replicates))
    return {
        "point": point,
        "ci95": ci95,
        "no_ci": no_ci,
        **summary,
        "n_valid_resamples": int(replicates.size),
    }


# What ``metrics.families.interauditor`` exports.
def items_agreement(counts: Iterable[tuple[int, int]]) -> dict[str, Any]:
    """Item-level agreement before adjudication, from (unanimous, adjudicated) item counts per
    adjudicated statement: the share of aligned items every coder had with the same content."""
    rows = list(counts)
    unanimous = sum(u for u, _ in rows)
    aligned = unanimous + sum(a for _, a in rows)
    return {
        "n_statements": len(rows),
        "n_items": aligned,
        "n_unanimous": unanimous,
        "share_unanimous": unanimous / aligned if aligned else None,
    }


__all__ = [
    "CI_PERCENTILES",
    "cluster_bootstrap_mean_diff",
    "cohens_kappa",
    "finite_or_none",
    "items_agreement",
    "lins_ccc",
    "symmetric_mean",
    "weighted_ccc",
]
