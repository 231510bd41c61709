"""Figures derived from a run's stored statement results, stored as MetricResult rows so that
no page computes them: the run comparison (per pair of runs) and the error analysis's event
kinds and the statements behind each error figure (per run, ``metrics.engine.errors``).

A row's ``input_hash`` is a digest of its runs' results fingerprint (``results_fingerprint``,
which changes whenever any of those runs' results change). A page reads the row:
- fingerprint unchanged and fresh: the stored figures;
- outdated or missing: the last stored figures (if any) marked "updating", and one background
  computation queued (the row turns stale; a stale row is not queued again for
  ``REQUEUE_AFTER``, so a lost task is retried on a later view).
A computation stores the figures with the fingerprint it read *before* computing: if the
inputs changed meanwhile, the next view sees the mismatch and queues another. A failure is
stored as ``failed`` with the same fingerprint, so it is not retried until the inputs change.

Keys, the input hash, the row lock and the failure record are the one lifecycle of every
stored result, ``metrics.results``; this module decides only when these rows are outdated.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.models import ExtractionRun, GroundTruthSnapshot
from evalsite.queue import named_task, task_enqueue
from metrics.engine import comparison, comparison_parts, errors
from metrics.engine.services import EXTRACTION
from metrics.models import MetricResult
from metrics.results import (
    failure_recorded,
    input_hash,
    json_ready,
    placeholder_create,
    row_locked_or_created,
    run_key,
)

log = logging.getLogger(__name__)


def results_fingerprint(*runs: ExtractionRun, snapshot_id: int | None = None) -> str:
    """A digest that changes whenever any of these runs' stored results change (one query):
    the run rows' input hash (of their totals), status and computed_at, on live ground truth
    or the snapshot. Caches of figures derived from a run's rows are keyed by it, so they can
    never serve stale figures."""
    rows = {
        run_id: (input_hash, status, str(computed_at))
        for run_id, input_hash, status, computed_at in comparison.basis_rows(snapshot_id)
        .filter(scope=Scope.RUN, run_id__in=[run.pk for run in runs])
        .values_list("run_id", "input_hash", "status", "computed_at")
    }
    text = "|".join(f"{run_key(EXTRACTION, run.pk)}={rows.get(run.pk)}" for run in runs)
    if snapshot_id is not None:
        text += f"|g{snapshot_id}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


RUN_COMPARISON = "run_comparison"
ERROR_ANALYSIS = "error_analysis"
CONFIGURATION_SUMMARY = "configuration_summary"  # the trend's rows (metrics.engine.trend)
# Bump when a family's output for the same inputs changes.
CODE_VERSIONS = {
    RUN_COMPARISON: "run-comparison/2",
    ERROR_ANALYSIS: errors.CODE_VERSION,
    CONFIGURATION_SUMMARY: "configuration-summary/1",
}
REQUEUE_AFTER = timedelta(minutes=2)
# Their inputs are stored extraction results, whose fingerprint already moves with the match
# settings: the rows record no settings of their own.
NO_SETTINGS: dict[str, Any] = {}
# Their tasks (metrics.tasks runs this module's computations, so it is not imported here).
RUN_COMPARISON_TASK = "metrics.tasks.compute_run_comparison"
ERROR_ANALYSIS_TASK = "metrics.tasks.compute_error_analysis"

Scope = MetricResult.Scope
Status = MetricResult.Status
STORED_FIELDS = ("values", "input_hash", "code_version", "status", "stale_since", "error")


@dataclass(frozen=True)
class Derived:
    """What a page shows: the last stored figures (None before the first computation)."""

    values: dict[str, Any] | None
    updating: bool
    error: str = ""
    computed_at: Any = None


def comparison_key(
    baseline: str | int, candidate: str | int, snapshot_id: int | None = None
) -> str:
    """The stored comparison of two sides ("r12" a run, "c3" a configuration; a bare id is a
    run), on live ground truth or a snapshot."""
    sides = [side if isinstance(side, str) else f"r{side}" for side in (baseline, candidate)]
    key = f"{RUN_COMPARISON}:pair:{sides[0]}:{sides[1]}"
    return key if snapshot_id is None else f"{key}:g{snapshot_id}"


def error_analysis_key(run_id: int) -> str:
    return run_key(ERROR_ANALYSIS, run_id)


def _input_hash(family: str, fingerprint: str) -> str:
    return input_hash(fingerprint, code_version=CODE_VERSIONS[family], settings=NO_SETTINGS)


# --- reading (pages) ----------------------------------------------------------------------------


def _claim(*, key: str, family: str, run_id: int) -> bool:
    """Turn the row stale (creating it if missing) unless a computation was queued recently.
    True: the caller queues one."""
    now = timezone.now()
    outdated = MetricResult.objects.filter(key=key).exclude(
        status=Status.STALE, stale_since__gt=now - REQUEUE_AFTER
    )
    if outdated.update(status=Status.STALE, stale_since=now):
        return True
    if MetricResult.objects.filter(key=key).exists():
        return False  # queued recently
    placeholder_create(key=key, family=family, scope=Scope.RUN, stale_since=now, run_id=run_id)
    return True


def derived_read(
    *,
    family: str,
    key: str,
    run_id: int,
    fingerprint: str,
    queue: Callable[[], bool],
    part: Callable[[str], tuple[MetricResult | None, dict[str, Any] | None]] | None = None,
) -> Derived:
    """The stored figures; when outdated, the last ones marked updating and one computation
    queued. One or two small queries whatever the size of the runs. ``part``: reads, by the
    row's key, the row without its values and only the part of them the caller shows."""
    wanted = _input_hash(family, fingerprint)

    def stored() -> tuple[MetricResult | None, dict[str, Any] | None]:
        if part is not None:
            return part(key)
        row = MetricResult.objects.filter(key=key).first()
        return row, row.values if row else None

    row, values = stored()
    if row is not None and row.input_hash == wanted and row.status != Status.STALE:
        return _derived(row, updating=False, values=values)
    if _claim(key=key, family=family, run_id=run_id) and queue():
        row, values = stored()  # an eager worker may have run
        if row is not None and row.input_hash == wanted and row.status != Status.STALE:
            return _derived(row, updating=False, values=values)
    return Derived(
        values=values,
        updating=True,
        computed_at=row.computed_at if row else None,
    )


_ROW_VALUES: Any = object()


def _derived(row: MetricResult, *, updating: bool, values: Any = _ROW_VALUES) -> Derived:
    failed = row.status == Status.FAILED
    return Derived(
        values=row.values if values is _ROW_VALUES else values,
        updating=updating,
        error=row.error if failed else "",
        computed_at=row.computed_at,
    )


# --- computing (tasks) --------------------------------------------------------------------------


def derived_compute(
    *,
    family: str,
    key: str,
    run_id: int,
    fingerprint: Callable[[], str],
    compute: Callable[[], dict[str, Any]],
) -> MetricResult:
    """Compute and store the figures, fresh for the fingerprint read before computing; any
    error but a transient database one is stored as failed on that fingerprint (the last
    figures stay). What the computation writes beside them (the error index) is committed
    with them or not at all."""
    hashed = _input_hash(family, fingerprint())
    with (
        failure_recorded(
            family=family,
            scope=Scope.RUN,
            code_version=CODE_VERSIONS[family],
            settings=NO_SETTINGS,
            run_id=run_id,
            key=key,
            input_hash=hashed,
        ),
        transaction.atomic(),
    ):
        values = json_ready(compute())
        row = row_locked_or_created(key=key, family=family, scope=Scope.RUN, run_id=run_id)
        row.values, row.input_hash, row.code_version = values, hashed, CODE_VERSIONS[family]
        row.status, row.stale_since, row.error = Status.FRESH, None, ""
        row.computed_at = timezone.now()
        row.save(update_fields=[*STORED_FIELDS, "computed_at"])
    return MetricResult.objects.get(key=key)


# --- the two families ---------------------------------------------------------------------------


def comparison_read(
    baseline: comparison.Side,
    candidate: comparison.Side,
    snapshot: GroundTruthSnapshot | None = None,
    *,
    whole: bool = True,
    listed: tuple[str, str] | None = None,
) -> Derived:
    """The stored comparison of two sides; queued when outdated (``derived_read``). Not
    ``whole``: its figures without the statements that changed most, but for the one list
    ``listed`` names (figure, direction) and its statements' details
    (``comparison_parts.comparison_part``)."""
    snapshot_id = snapshot.pk if snapshot else None
    runs = comparison.runs_of((baseline, candidate))
    return derived_read(
        family=RUN_COMPARISON,
        key=comparison_key(baseline.spec, candidate.spec, snapshot_id),
        run_id=baseline.runs[0].pk,
        fingerprint=_sides_fingerprint(baseline, candidate, runs, snapshot_id),
        queue=lambda: task_enqueue(
            named_task(RUN_COMPARISON_TASK),
            baseline=baseline.spec,
            candidate=candidate.spec,
            snapshot=snapshot_id,
        ),
        part=None
        if whole
        else lambda key: comparison_parts.comparison_part_read(key, listed=listed),
    )


def _sides_fingerprint(
    baseline: comparison.Side,
    candidate: comparison.Side,
    runs: list[ExtractionRun],
    snapshot_id: int | None,
) -> str:
    # Which runs make each side belongs to the inputs: a new replicate outdates the row.
    sides = f"{baseline.run_ids}|{candidate.run_ids}|"
    return sides + results_fingerprint(*runs, snapshot_id=snapshot_id)


def run_comparison_read(left: ExtractionRun, right: ExtractionRun) -> Derived:
    return comparison_read(comparison.side_of_run(left), comparison.side_of_run(right))


def comparison_result_compute(
    *, baseline: str, candidate: str, snapshot: int | None = None
) -> MetricResult | None:
    """Compute and store a comparison; None when a side or the snapshot is gone."""
    try:
        sides = comparison.side_get(baseline), comparison.side_get(candidate)
        frozen = comparison.snapshot_get(snapshot)
    except comparison.ComparisonInputError:
        return None
    runs = comparison.runs_of(sides)
    snapshot_id = frozen.pk if frozen else None
    comparison.snapshot_results_ensure(runs, snapshot_id)
    return derived_compute(
        family=RUN_COMPARISON,
        key=comparison_key(sides[0].spec, sides[1].spec, snapshot_id),
        run_id=sides[0].runs[0].pk,
        fingerprint=lambda: _sides_fingerprint(*sides, runs, snapshot_id),
        compute=lambda: comparison.comparison_compute(*sides, frozen),
    )


def run_comparison_result_compute(*, left_id: int, right_id: int) -> MetricResult | None:
    return comparison_result_compute(baseline=f"r{left_id}", candidate=f"r{right_id}")


def error_analysis_read(run: ExtractionRun) -> Derived:
    return derived_read(
        family=ERROR_ANALYSIS,
        key=error_analysis_key(run.pk),
        run_id=run.pk,
        fingerprint=results_fingerprint(run),
        queue=lambda: task_enqueue(named_task(ERROR_ANALYSIS_TASK), run_id=run.pk),
    )


def error_analysis_result_compute(*, run_id: int, full: bool = False) -> MetricResult | None:
    """The run's error analysis; its error index updated for the statements whose results
    changed since the stored one (``full``: rebuilt whole, ``metrics.engine.errors``)."""
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    key = error_analysis_key(run_id)
    # An analysis of another code version may have counted other rows: rebuilt whole.
    stored = MetricResult.objects.filter(key=key, code_version=errors.CODE_VERSION).values_list(
        "values", flat=True
    )
    return derived_compute(
        family=ERROR_ANALYSIS,
        key=key,
        run_id=run_id,
        fingerprint=lambda: results_fingerprint(run),
        compute=lambda: errors.error_analysis_compute(run, stored=stored.first, full=full),
    )


def _outdated(family: str, key: str, fingerprint: str) -> bool:
    stored = MetricResult.objects.filter(key=key).values_list("input_hash", flat=True).first()
    return stored != _input_hash(family, fingerprint)


def derived_results_refresh(*, run_id: int) -> int:
    """A run's results changed: queue the derived rows that involve it and are now outdated
    (its error analysis, every stored comparison with it), so the next view finds them
    current. Returns how many were queued."""
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        return 0
    queued = 0
    key = error_analysis_key(run_id)
    if _outdated(ERROR_ANALYSIS, key, results_fingerprint(run)) and _claim(
        key=key, family=ERROR_ANALYSIS, run_id=run_id
    ):
        queued += task_enqueue(named_task(ERROR_ANALYSIS_TASK), run_id=run_id)
    sides = rf"(r{run_id}|c{run.configuration_id})"
    pairs = MetricResult.objects.filter(family=RUN_COMPARISON).filter(
        key__regex=rf"^{RUN_COMPARISON}:pair:({sides}:[rc][0-9]+|[rc][0-9]+:{sides})(:g[0-9]+)?$"
    )
    for key in pairs.values_list("key", flat=True):
        parts = key.split(":")
        snapshot = int(parts[4][1:]) if len(parts) > 4 else None
        try:
            sides_ = comparison.side_get(parts[2]), comparison.side_get(parts[3])
        except comparison.ComparisonInputError:
            continue
        fingerprint = _sides_fingerprint(*sides_, comparison.runs_of(sides_), snapshot)
        if _outdated(RUN_COMPARISON, key, fingerprint) and _claim(
            key=key, family=RUN_COMPARISON, run_id=sides_[0].runs[0].pk
        ):
            queued += task_enqueue(
                named_task(RUN_COMPARISON_TASK),
                baseline=parts[2],
                candidate=parts[3],
                snapshot=snapshot,
            )
    return queued
