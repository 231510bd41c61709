"""A run's row and the system row: the run's totals (its statement and discussion rows'
contributions summed, one child's swapped in under the run row's lock), its figures and status
settled from them, and the trend over runs read from the run rows."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.models import ExtractionRun, RunConfiguration
from audit.selectors.threads import approved_codings_count
from evalsite.match_settings import match_settings
from metrics.engine.services.inputs import whole_discussion_pairs
from metrics.engine.services.rows import (
    CHILD_SCOPES,
    CODE_VERSION,
    SYSTEM_KEY,
    Scope,
    Status,
    _hash,
    _locked_or_created,
    extraction_results,
)
from metrics.engine.totals import PART, run_totals_sum
from metrics.families.extraction import (
    add_contributions,
    system_cumulative_f1_from_totals,
    system_f1_from_totals,
)
from metrics.models import MetricResult
from metrics.registry import EXTRACTION
from metrics.results import row_locked, run_key


def _run_row_locked(run_id: int | None) -> MetricResult:
    key = run_key(EXTRACTION, run_id)
    row = row_locked(key) or _locked_or_created(key, scope=Scope.RUN, run_id=run_id)
    if row.contribution is None:
        row.contribution = _run_totals_rebuild(run_id)
    return row


def _run_totals_rebuild(run_id: int | None) -> dict[str, Any]:
    """Sum the committed child contributions; only needed for a new or invalidated run row."""
    return run_totals_sum(family=EXTRACTION, run_id=run_id)


def _run_values(totals: Any, run_id: int | None = None) -> dict[str, Any]:
    """A run's figures from its totals (``run_values``), on live ground truth."""
    whole = (
        run_id is not None and ExtractionRun.objects.discussion_unit().filter(pk=run_id).exists()
    )
    scored = int(totals["discussions"].get("count", 0))
    return run_values(totals, whole=whole, left_out=_left_out(run_id, scored) if whole else None)


def run_values(totals: Any, *, whole: bool, left_out: int | None) -> dict[str, Any]:
    """A run's figures from its totals. A discussion-unit run (``whole``) has no statement
    figures (``system`` and ``n_statements`` None: not applicable, never 0) and says how many
    discussions it extracted were left out (partly approved)."""
    return {
        "system": None if whole else system_f1_from_totals(totals["statements"]).to_dict(),
        "cumulative": system_cumulative_f1_from_totals(totals["discussions"]).to_dict(),
        "n_statements": None if whole else int(totals["statements"].get("count", 0)),
        "n_discussions": int(totals["discussions"].get("count", 0)),
        "unit": RunConfiguration.Unit.DISCUSSION if whole else RunConfiguration.Unit.STATEMENT,
        "n_left_out": left_out,
    }


def _swap_contribution(
    run_row: MetricResult, part: str, old: dict | None, new: dict | None
) -> None:
    # Equal contributions change nothing (the sums are exact integers): skip the copying.
    if old == new:
        return
    totals: Any = run_row.contribution  # known here: _run_row_locked rebuilt it if missing
    if old:
        totals[part] = add_contributions(totals[part], old, -1)
    if new:
        totals[part] = add_contributions(totals[part], new)


def _children_status(run_id: int | None) -> tuple[str, str]:
    """A run is fresh when none of its statement/discussion rows is stale (or failed).

    One row rather than a count: during a recompute-all most rows are stale, and this runs
    after every row. Ordered by an index's columns, so that PostgreSQL walks an index for it:
    unordered (as ``exists()`` asks), it believed the statistics taken during another run's
    recompute-all (half the table stale, so surely one of this run's rows is) and scanned
    the whole table for a row that was not there, after every approval.
    """
    children = extraction_results().filter(run_id=run_id, scope__in=CHILD_SCOPES)
    stale = children.filter(status=Status.STALE).order_by("run_id", "scope")
    if stale.values_list("pk", flat=True).first() is not None:
        return Status.STALE, ""
    failed = children.filter(status=Status.FAILED).count()
    if failed:
        return Status.FAILED, f"{failed} statement/discussion results failed"
    return Status.FRESH, ""


def _run_row_settle(run_row: MetricResult) -> bool:
    """Rebuild the run's figures from its totals and its status from its children.

    Returns whether the system result should follow (the run changed and is not stale).
    """
    before = (run_row.status, run_row.input_hash)  # the figures are a function of the totals
    run_row.status, run_row.error = _children_status(run_row.run_id)
    run_row.values = _run_values(run_row.contribution, run_row.run_id)
    run_row.input_hash = _hash(run_row.contribution)
    run_row.match_settings = match_settings().to_dict()
    run_row.code_version = CODE_VERSION
    if run_row.status != Status.STALE:
        run_row.stale_since = None
        run_row.computed_at = timezone.now()
    run_row.save()
    return run_row.status != Status.STALE and before != (run_row.status, run_row.input_hash)


def _run_summary(row: MetricResult) -> dict[str, Any]:
    values = row.values or {}
    system, cumulative = values.get("system") or {}, values.get("cumulative") or {}
    run: Any = row.run  # a run row always has its run
    return {
        "run_id": row.run_id,
        "label": run.label,
        "created_at": run.created_at.isoformat(),
        "status": row.status,
        "aggregate_micro_f1": system.get("aggregate_micro_f1"),
        "people_f1": system.get("people_f1"),
        "events_f1": system.get("events_f1"),
        "pair_bonds_f1": system.get("pair_bonds_f1"),
        "exact_match_rate": system.get("exact_match_rate"),
        "cumulative_f1": cumulative.get("aggregate_micro_f1"),
        "n_statements": values.get("n_statements", 0),
        "n_discussions": values.get("n_discussions", 0),
        "unit": values.get("unit", run.unit),
        "configuration_id": run.configuration_id,
        "replicate": run.replicate,
    }


def system_result_compute() -> MetricResult:
    """The trend over runs, read from the run rows (cheap: one row per run)."""
    with transaction.atomic():
        row = _locked_or_created(SYSTEM_KEY, scope=Scope.SYSTEM)
        # Read after taking the lock, so the last writer has seen every committed run row.
        runs = list(
            extraction_results()
            .filter(scope=Scope.RUN)
            .select_related("run__configuration")
            .order_by("run__created_at")
        )
        statuses = {run.status for run in runs}
        # The runs page's coverage divides by it: stored here, beside the figures it is
        # compared with, rather than counted on each view.
        approved = approved_codings_count()
        row.values = {"runs": [_run_summary(run) for run in runs], "n_approved": approved}
        row.status = next((s for s in (Status.STALE, Status.FAILED) if s in statuses), Status.FRESH)
        row.input_hash = _hash([[r.run_id, r.input_hash, r.status] for r in runs])
        row.code_version, row.error = CODE_VERSION, ""
        row.match_settings = match_settings().to_dict()
        stale = row.status == Status.STALE
        row.stale_since = (row.stale_since or timezone.now()) if stale else None
        row.computed_at = timezone.now()
        row.save()
    return row


def run_result_compute(*, run_id: int, rebuild: bool = False) -> MetricResult | None:
    """Settle a run row: totals (rebuilt if unknown or asked), figures, status from its rows."""
    if not ExtractionRun.objects.filter(pk=run_id).exists():
        return None
    with transaction.atomic():
        if rebuild:
            extraction_results().filter(key=run_key(EXTRACTION, run_id)).update(contribution=None)
        row = _run_row_locked(run_id)
        follow = _run_row_settle(row)
    if follow or rebuild:
        system_result_compute()
    return row


def _left_out(run_id: int | None, scored: int) -> int:
    """Discussions a discussion-unit run extracted that have approved GT, not scored because
    some subject statement has none yet."""
    return len(whole_discussion_pairs(run_id=run_id)) - scored if run_id else 0


def _run_totals_swap(row: MetricResult, new: dict | None, batch: bool) -> MetricResult | None:
    """Lock the run row and swap this child's contribution in its totals; returns the run row
    to settle once the child is saved.

    In a batch (recompute job, sweep) only mark the run's totals unknown instead: the batch
    rebuilds them once, at its end, rather than after every row.
    """
    if batch:
        if row.contribution != new:
            extraction_results().filter(
                key=run_key(EXTRACTION, row.run_id), contribution__isnull=False
            ).update(contribution=None)
        return None
    # Before saving the child: a rebuild of unknown totals must still see its old contribution.
    run_row = _run_row_locked(row.run_id)
    _swap_contribution(run_row, PART[row.scope], row.contribution, new)
    return run_row
