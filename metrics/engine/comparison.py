"""Two extraction runs compared on the statements both cover, with bootstrap CIs.

Computed in the background and stored (``metrics.engine.derived``): it reads stored per-statement
counts only (one scan of both runs' statement rows, the counts pulled out of `contribution` by
the database) and runs a vectorised discussion-cluster bootstrap
(`metrics.families.extraction.bootstrap`); the bootstrap itself takes milliseconds, reading
2 x 50,000 stored rows about a second on PostgreSQL, which is why no page does it. The stored
row is keyed by both runs' results fingerprint: when either run's results change, the page
shows the last comparison as "updating" while a worker computes the new one. Statement results
being recomputed take part with their last figures; the page says how many there are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.db.models import Case, IntegerField, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from audit.models import ExtractionRun
from metrics.engine.services import EXTRACTION
from metrics.families.extraction.bootstrap import COLUMNS, FIGURES, paired_bootstrap_f1
from metrics.families.selective.bootstrap import BootstrapDeltaResult, BootstrapResult
from metrics.models import MetricResult

N_RESAMPLES = 2000
SEED = 42
FIGURE_LABELS = {
    "aggregate": "Overall (pooled micro-F1)",
    "people": "People",
    "events": "Events",
    "pair_bonds": "Pair bonds",
}
assert set(FIGURE_LABELS) == set(FIGURES)


@dataclass(frozen=True)
class FigureComparison:
    key: str
    label: str
    left: BootstrapResult
    right: BootstrapResult
    delta: BootstrapDeltaResult


@dataclass(frozen=True)
class RunComparison:
    left: ExtractionRun
    right: ExtractionRun
    n_statements: int  # statements both runs cover (with approved ground truth)
    n_discussions: int
    n_updating: int  # of those, statement results not fresh (their last figures are used)
    figures: list[FigureComparison]
    n_resamples: int
    seed: int

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per figure, for the table download."""
        return [_row(figure) for figure in self.figures]


def _row(figure: FigureComparison) -> dict[str, Any]:
    row: dict[str, Any] = {"figure": figure.key}
    for side, result in (("left", figure.left), ("right", figure.right), ("delta", figure.delta)):
        point = getattr(result, "delta_point_estimate" if side == "delta" else "point_estimate")
        low, high = result.ci95 or (None, None)
        row.update({side: point, f"{side}_ci_low": low, f"{side}_ci_high": high})
        row[f"{side}_drop_rate"] = result.drop_rate
    return row


FIELDS = ("run_id", "statement_id", "discussion_id", "not_fresh", *(f"n_{c}" for c in COLUMNS))


def _statement_counts(run_ids: list[int]) -> np.ndarray:
    """One row per stored statement result of these runs: FIELDS, counts from `contribution`."""
    counts = {
        f"n_{c}": Coalesce(Cast(KT(f"contribution__{c}"), IntegerField()), 0) for c in COLUMNS
    }
    rows = (
        MetricResult.objects.filter(
            family=EXTRACTION,
            scope=MetricResult.Scope.STATEMENT,
            run_id__in=run_ids,
            contribution__isnull=False,  # a placeholder not computed yet has no counts
        )
        .annotate(not_fresh=Case(When(status=MetricResult.Status.FRESH, then=0), default=1))
        .annotate(**counts)
        .values_list(*FIELDS)
    )
    return np.array(list(rows), dtype=np.int64).reshape(-1, len(FIELDS))


def _per_discussion(rows: np.ndarray) -> np.ndarray:
    """(D, 9) summed counts, one row per discussion in sorted id order."""
    discussions, index = np.unique(rows[:, 2], return_inverse=True)
    table = np.zeros((discussions.size, len(COLUMNS)))
    np.add.at(table, index, rows[:, 4:].astype(float))
    return table


def covered_tables(left_id: int, right_id: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Both runs' per-discussion counts over the statements both cover, how many statements
    that is, and how many of their rows are being recomputed.

    One scan of the two runs' statement rows, intersected here rather than by a join in SQL:
    its cost stays linear even when the planner has no statistics for freshly written rows.
    """
    rows = _statement_counts([left_id, right_id])
    left, right = rows[rows[:, 0] == left_id], rows[rows[:, 0] == right_id]
    common = np.intersect1d(left[:, 1], right[:, 1])
    left, right = left[np.isin(left[:, 1], common)], right[np.isin(right[:, 1], common)]
    updating = int(left[:, 3].sum() + right[:, 3].sum())
    return _per_discussion(left), _per_discussion(right), int(common.size), updating


def run_comparison(
    left: ExtractionRun, right: ExtractionRun, *, n_resamples: int = N_RESAMPLES, seed: int = SEED
) -> RunComparison:
    left_table, right_table, n_statements, n_updating = covered_tables(left.pk, right.pk)
    paired = paired_bootstrap_f1(left_table, right_table, n_resamples=n_resamples, seed=seed)
    figures = [
        FigureComparison(key, FIGURE_LABELS[key], result.left, result.right, result.delta)
        for key, result in paired.items()
    ]
    return RunComparison(
        left=left,
        right=right,
        n_statements=n_statements,
        n_discussions=left_table.shape[0],
        n_updating=n_updating,
        figures=figures,
        n_resamples=n_resamples,
        seed=seed,
    )


def comparison_to_json(comparison: RunComparison) -> dict[str, Any]:
    """The comparison as stored on its MetricResult row (metrics.engine.derived), runs by id."""
    return {
        "left_id": comparison.left.pk,
        "right_id": comparison.right.pk,
        "n_statements": comparison.n_statements,
        "n_discussions": comparison.n_discussions,
        "n_updating": comparison.n_updating,
        "n_resamples": comparison.n_resamples,
        "seed": comparison.seed,
        "figures": [
            {
                "key": f.key,
                "left": asdict(f.left),
                "right": asdict(f.right),
                "delta": asdict(f.delta),
            }
            for f in comparison.figures
        ],
    }


def _ci(result: dict[str, Any]) -> dict[str, Any]:
    ci95 = result.get("ci95")
    return {**result, "ci95": tuple(ci95) if ci95 else None}


def comparison_from_json(
    left: ExtractionRun, right: ExtractionRun, data: dict[str, Any]
) -> RunComparison:
    figures = [
        FigureComparison(
            f["key"],
            FIGURE_LABELS[f["key"]],
            BootstrapResult(**_ci(f["left"])),
            BootstrapResult(**_ci(f["right"])),
            BootstrapDeltaResult(**_ci(f["delta"])),
        )
        for f in data["figures"]
    ]
    return RunComparison(
        left=left,
        right=right,
        n_statements=data["n_statements"],
        n_discussions=data["n_discussions"],
        n_updating=data["n_updating"],
        figures=figures,
        n_resamples=data["n_resamples"],
        seed=data["seed"],
    )
