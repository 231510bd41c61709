"""Runs as experiments: the figures of a run, or of a configuration over its replicates, on a
chosen ground truth (live, or a frozen snapshot), and the comparison of any two runs on what
they share whatever their unit (cumulative F1 per discussion, and pooled).

Reads stored rows only. Figures on a snapshot that were never computed are asked for
(``snapshot_results_request`` queues their computation) and answer "computing" meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from audit.models import LIVE_GROUND_TRUTH, ExtractionRun, GroundTruthSnapshot, RunConfiguration
from metrics.engine import comparison as cmp
from metrics.engine.derived import comparison_read
from metrics.engine.services import EXTRACTION
from metrics.engine.snapshots import SNAPSHOT_FAMILY, snapshot_results_request
from metrics.families.extraction import system_cumulative_f1_from_totals, total_contributions
from metrics.families.extraction.experiments import DEFAULT_LEVEL
from metrics.families.replicates import spreads
from metrics.models import MetricResult
from metrics.results import run_key

Scope = MetricResult.Scope
Status = MetricResult.Status
# The figures a run shows at both levels (statement pooled, and cumulative per discussion).
FIGURES = (
    "aggregate_micro_f1",
    "people_f1",
    "events_f1",
    "pair_bonds_f1",
    "symptom_macro_f1",
    "anxiety_macro_f1",
    "relationship_macro_f1",
    "functioning_macro_f1",
    "exact_match_rate",
)
NO_RESULT = "none"  # nothing to score yet (no approved ground truth it covers)


@dataclass(frozen=True)
class Basis:
    """The ground truth figures are computed on: live (``snapshot`` None) or a snapshot."""

    snapshot: GroundTruthSnapshot | None = None

    @property
    def label(self) -> str:
        return self.snapshot.basis_label if self.snapshot else LIVE_GROUND_TRUTH

    def to_dict(self) -> dict[str, Any]:
        snapshot = self.snapshot
        return {
            "kind": "snapshot" if snapshot else "live",
            "snapshot": snapshot.pk if snapshot else None,
            "name": snapshot.name if snapshot else None,
            "label": self.label,
        }


def _run_row(run: ExtractionRun, basis: Basis, *, request: bool) -> MetricResult | None:
    if basis.snapshot is None:
        return MetricResult.objects.filter(key=run_key(EXTRACTION, run.pk)).first()
    if request:
        return snapshot_results_request(run=run, snapshot=basis.snapshot)
    return (
        MetricResult.objects.filter(family=SNAPSHOT_FAMILY, scope=Scope.RUN, run=run)
        .filter(snapshot=basis.snapshot)
        .first()
    )


def _figures(values: Any) -> dict[str, Any] | None:
    return {name: values.get(name) for name in FIGURES} if isinstance(values, dict) else None


def run_figures(run: ExtractionRun, basis: Basis, *, request: bool = True) -> dict[str, Any]:
    """A run's figures on the basis, with the basis named beside them. A discussion-unit
    run's statement figures are None: not applicable (never 0)."""
    row = _run_row(run, basis, request=request)
    values = (row.values if row else None) or {}
    whole = run.is_discussion_unit
    return {
        "run": run.pk,
        "label": run.label,
        "configuration": run.configuration_id,
        "replicate": run.replicate,
        "notes": run.notes,
        "unit": run.unit,
        "ground_truth": basis.to_dict(),
        "status": row.status if row else NO_RESULT,
        "computed_at": row.computed_at if row else None,
        "statement_figures_applicable": not whole,
        "statement": None if whole else _figures(values.get("system")),
        "cumulative": _figures(values.get("cumulative")),
        "n_statements": None if whole else values.get("n_statements"),
        "n_discussions": values.get("n_discussions"),
        "n_left_out": values.get("n_left_out"),
    }


def configuration_figures(
    configuration: RunConfiguration, basis: Basis, *, request: bool = True
) -> dict[str, Any]:
    """Each replicate's figures and, per figure, their mean, SD and min-max over the
    replicates that have it (``complete``: every replicate's figures are current)."""
    runs = list(configuration.runs.select_related("configuration").order_by("replicate"))
    replicates = [run_figures(run, basis, request=request) for run in runs]
    whole = configuration.is_discussion_unit
    return {
        "configuration": configuration.pk,
        "label": configuration.label,
        "unit": configuration.unit,
        "ground_truth": basis.to_dict(),
        "complete": all(r["status"] == Status.FRESH for r in replicates),
        "replicates": replicates,
        "statement": None if whole else _spread(replicates, "statement"),
        "cumulative": _spread(replicates, "cumulative"),
    }


def _spread(replicates: list[dict[str, Any]], level: str) -> dict[str, dict[str, Any]]:
    rows = [r[level] for r in replicates if r[level] is not None]
    return {name: spread.to_dict() for name, spread in spreads(rows, FIGURES).items()}


# --- any two runs, on what they share ----------------------------------------------------------


def _discussion_rows(run: ExtractionRun, basis: Basis) -> dict[int, MetricResult]:
    rows = MetricResult.objects.filter(scope=Scope.DISCUSSION, run=run)
    if basis.snapshot is None:
        rows = rows.filter(family=EXTRACTION)
    else:
        rows = rows.filter(family=SNAPSHOT_FAMILY, snapshot=basis.snapshot)
    rows = rows.only("discussion_id", "values", "contribution")
    return {row.discussion_id: row for row in rows if row.discussion_id is not None}


def cumulative_comparison(
    left: ExtractionRun, right: ExtractionRun, basis: Basis
) -> dict[str, Any]:
    """Two runs of any unit on the figure they share: cumulative F1 per discussion, over the
    discussions both were scored on, and pooled over those discussions."""
    left_rows, right_rows = _discussion_rows(left, basis), _discussion_rows(right, basis)
    shared = sorted(set(left_rows) & set(right_rows))

    def pooled(rows: dict[int, MetricResult]) -> dict[str, Any] | None:
        contributions = [c for d in shared if (c := rows[d].contribution)]
        if not contributions:
            return None
        return _figures(
            system_cumulative_f1_from_totals(total_contributions(contributions)).to_dict()
        )

    return {
        "left": left.pk,
        "right": right.pk,
        "ground_truth": basis.to_dict(),
        "n_shared": len(shared),
        "n_left_only": len(set(left_rows) - set(right_rows)),
        "n_right_only": len(set(right_rows) - set(left_rows)),
        "left_pooled": pooled(left_rows),
        "right_pooled": pooled(right_rows),
        "discussions": [
            {
                "discussion": d,
                "left": (left_rows[d].values or {}).get("aggregate_micro_f1"),
                "right": (right_rows[d].values or {}).get("aggregate_micro_f1"),
            }
            for d in shared
        ],
    }


# --- the comparison of two sides, as the gate reads it ----------------------------------------


def comparison_verdict(
    baseline: str,
    candidate: str,
    *,
    snapshot: object = None,
    level: float = DEFAULT_LEVEL,
    figures: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The stored comparison of two sides ("r12", "c3") at ``level``, with the gate's answer
    once it is current; asks a worker for it when missing or outdated (status "updating").
    Raises ``ComparisonInputError`` (400, or 404 for a side or snapshot that names nothing)."""
    sides = cmp.side_get(baseline, name="baseline"), cmp.side_get(candidate, name="candidate")
    frozen = cmp.snapshot_get(snapshot)
    stored = comparison_read(*sides, frozen, whole=False)  # its figures, not its lists
    values = stored.values
    status = "failed" if stored.error else "updating" if stored.updating else "fresh"
    return {
        "status": status,
        "error": stored.error,
        "baseline": _side(sides[0]),
        "candidate": _side(sides[1]),
        "ground_truth": cmp.basis_label(frozen),
        "snapshot": frozen.pk if frozen else None,
        "level": level,
        "method": values["method"] if values else None,
        "n_statements": values["n_statements"] if values else None,
        "n_discussions": values["n_discussions"] if values else None,
        "computed_at": stored.computed_at,
        "figures": cmp.figure_summaries(values, level) if values else [],
        "gate": (
            cmp.comparison_gate(values, level=level, figures=figures)
            if values and status == "fresh"
            else None
        ),
    }


def _side(side: cmp.Side) -> dict[str, Any]:
    return {"spec": side.spec, "label": side.label, "unit": side.unit, "runs": side.run_ids}
