"""Stored extraction-F1 results: computing them, marking them stale, recomputing them.

Pages read ``MetricResult`` rows; Celery tasks (``metrics.tasks``) call the ``*_compute``
services here. Every row records the hash of its inputs, so running a task twice, or
recomputing unchanged inputs, changes nothing.

Invariant, kept under row locks: a run row's ``contribution`` is
``{"statements": Σ statement-row contributions, "discussions": Σ discussion-row
contributions}`` over that run's rows, so one approval updates the run and system figures
in O(1) instead of recomputing every statement. ``contribution = None`` on a run row means
"unknown": it is rebuilt from the rows the next time the row is locked.

Locks are always taken in one order — statement/discussion row, then run row, then the
system row — so two workers never wait on each other in a cycle.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from audit.models import Extraction, ExtractionRun, Feedback, Speaker, Statement
from audit.services.jobs import compute_job_start
from evalsite.queue import task_enqueue_named, task_enqueue_on_commit
from metrics import results
from metrics.families.extraction import (
    ComparisonMetrics,
    add_contributions,
    calculate_cumulative_f1,
    calculate_statement_f1,
    empty_totals,
    statement_contribution,
    system_cumulative_f1_from_totals,
    system_f1_from_totals,
)
from metrics.match_settings import match_settings
from metrics.models import ComputeJob, MetricResult
from metrics.own_data.common import own_results_mark_stale, own_results_outdated
from metrics.registry import EXTRACTION, FAMILIES, RECOMPUTE_JOB
from metrics.results import (
    input_hash,
    result_key,
    row_locked,
    row_locked_or_created,
    run_key,
    system_key,
)

log = logging.getLogger(__name__)

CODE_VERSION = FAMILIES[EXTRACTION].code_version  # bump it in the registry

Scope = MetricResult.Scope
Status = MetricResult.Status
CHILD_SCOPES = (Scope.STATEMENT, Scope.DISCUSSION)
PART: dict[str, str] = {Scope.STATEMENT: "statements", Scope.DISCUSSION: "discussions"}
Progress = Callable[[int, int], None]


# --- keys, settings, hashes ----------------------------------------------------------------


def statement_key(*, run_id: int, discussion_id: int | None, statement_id: int) -> str:
    ids = {"run_id": run_id, "discussion_id": discussion_id, "statement_id": statement_id}
    return result_key(EXTRACTION, Scope.STATEMENT, **ids)


def discussion_key(*, run_id: int, discussion_id: int) -> str:
    return result_key(EXTRACTION, Scope.DISCUSSION, run_id=run_id, discussion_id=discussion_id)


SYSTEM_KEY = system_key(EXTRACTION)


def _hash(inputs: Any) -> str:
    return input_hash(inputs, code_version=CODE_VERSION, settings=match_settings().to_dict())


def _results() -> Any:
    return MetricResult.objects.filter(family=EXTRACTION)


# --- row locking ---------------------------------------------------------------------------


def _locked_or_created(key: str, *, scope: str, **ids: Any) -> MetricResult:
    """A placeholder waits for its computation: stale since now until stored."""
    return row_locked_or_created(
        key=key, family=EXTRACTION, scope=scope, stale_since=timezone.now(), **ids
    )


def _run_row_locked(run_id: int | None) -> MetricResult:
    key = run_key(EXTRACTION, run_id)
    row = row_locked(key) or _locked_or_created(key, scope=Scope.RUN, run_id=run_id)
    if row.contribution is None:
        row.contribution = _run_totals_rebuild(run_id)
    return row


def _run_totals_rebuild(run_id: int | None) -> dict[str, Any]:
    """Sum the committed child contributions; only needed for a new or invalidated run row."""
    totals = {"statements": empty_totals(), "discussions": empty_totals()}
    children = (
        _results()
        .filter(run_id=run_id, scope__in=CHILD_SCOPES, contribution__isnull=False)
        .values_list("scope", "contribution")
    )
    for scope, contribution in children.iterator():
        totals[PART[scope]] = add_contributions(totals[PART[scope]], contribution)
    return totals


# --- run and system summaries ----------------------------------------------------------------


def _run_values(totals: Any) -> dict[str, Any]:
    return {
        "system": system_f1_from_totals(totals["statements"]).to_dict(),
        "cumulative": system_cumulative_f1_from_totals(totals["discussions"]).to_dict(),
        "n_statements": int(totals["statements"].get("count", 0)),
        "n_discussions": int(totals["discussions"].get("count", 0)),
    }


def _swap_contribution(
    run_row: MetricResult, part: str, old: dict | None, new: dict | None
) -> None:
    # Equal contributions are skipped so float sums do not drift on no-op recomputes.
    if old == new:
        return
    totals: Any = run_row.contribution  # known here: _run_row_locked rebuilt it if missing
    if old:
        totals[part] = add_contributions(totals[part], old, -1)
    if new:
        totals[part] = add_contributions(totals[part], new)


def _children_status(run_id: int | None) -> tuple[str, str]:
    """A run is fresh when none of its statement/discussion rows is stale (or failed).

    ``exists()`` rather than counting: during a recompute-all most rows are stale, and this
    runs after every row.
    """
    children = _results().filter(run_id=run_id, scope__in=CHILD_SCOPES)
    if children.filter(status=Status.STALE).exists():
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
    run_row.values = _run_values(run_row.contribution)
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
    }


def system_result_compute() -> MetricResult:
    """The trend over runs, read from the run rows (cheap: one row per run)."""
    with transaction.atomic():
        row = _locked_or_created(SYSTEM_KEY, scope=Scope.SYSTEM)
        # Read after taking the lock, so the last writer has seen every committed run row.
        runs = list(
            _results().filter(scope=Scope.RUN).select_related("run").order_by("run__created_at")
        )
        statuses = {run.status for run in runs}
        row.values = {"runs": [_run_summary(run) for run in runs]}
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
            _results().filter(key=run_key(EXTRACTION, run_id)).update(contribution=None)
        row = _run_row_locked(run_id)
        follow = _run_row_settle(row)
    if follow or rebuild:
        system_result_compute()
    return row


# --- statement results -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Inputs:
    ai: Any
    gt: Any
    hash: str
    discussion_id: int | None = None


def _statement_inputs(statement_id: int, run_id: int) -> _Inputs | None:
    """GT = the approved feedback; AI = this run's extraction. None: no result to store."""
    feedback = (
        Feedback.objects.approved()
        .filter(statement_id=statement_id)
        .values("id", "version", "updated_at", "edited_extraction", "statement__discussion_id")
        .first()
    )
    extraction = (
        Extraction.objects.filter(statement_id=statement_id, run_id=run_id)
        .values("id", "updated_at", "pdp_deltas")
        .first()
    )
    # Without approved GT there is nothing to score; without an extraction the run does
    # not cover the statement (it is left out rather than scored as an empty extraction).
    if feedback is None or extraction is None:
        return None
    inputs = [
        [feedback["id"], feedback["version"], feedback["updated_at"]],
        [extraction["id"], extraction["updated_at"]],
    ]
    return _Inputs(
        extraction["pdp_deltas"],
        feedback["edited_extraction"],
        _hash(inputs),
        feedback["statement__discussion_id"],
    )


def _is_current(row: MetricResult, input_hash: str, force: bool) -> bool:
    return (
        not force
        and row.input_hash == input_hash
        and row.computed_at is not None
        and row.status != Status.FAILED
    )


def _run_totals_swap(row: MetricResult, new: dict | None, batch: bool) -> MetricResult | None:
    """Lock the run row and swap this child's contribution in its totals; returns the run row
    to settle once the child is saved.

    In a batch (recompute job, sweep) only mark the run's totals unknown instead: the batch
    rebuilds them once, at its end, rather than after every row.
    """
    if batch:
        if row.contribution != new:
            _results().filter(
                key=run_key(EXTRACTION, row.run_id), contribution__isnull=False
            ).update(contribution=None)
        return None
    # Before saving the child: a rebuild of unknown totals must still see its old contribution.
    run_row = _run_row_locked(row.run_id)
    _swap_contribution(run_row, PART[row.scope], row.contribution, new)
    return run_row


def _row_store(
    row: MetricResult, *, values: dict, contribution: dict, input_hash: str, batch: bool
) -> bool:
    """Store a child's new figures and swap its contribution in the run totals."""
    run_row = _run_totals_swap(row, contribution, batch)
    row.values, row.contribution, row.input_hash = values, contribution, input_hash
    row.match_settings, row.code_version = match_settings().to_dict(), CODE_VERSION
    row.status, row.error, row.stale_since = Status.FRESH, "", None
    row.computed_at = timezone.now()
    row.save()
    return _run_row_settle(run_row) if run_row else False


def _row_confirm(row: MetricResult, batch: bool) -> bool:
    """Unchanged inputs: the stored figures stand; only the status needs to become fresh."""
    if row.status == Status.FRESH:
        return False
    # Same hash means same settings and code; recording them again keeps equal-but-differently
    # written settings from being found outdated again (results_mark_outdated).
    row.status, row.stale_since = Status.FRESH, None
    row.match_settings, row.code_version = match_settings().to_dict(), CODE_VERSION
    row.save(update_fields=["status", "stale_since", "match_settings", "code_version"])
    return False if batch else _run_row_settle(_run_row_locked(row.run_id))


def _row_remove(row: MetricResult | None, batch: bool) -> bool:
    """The result no longer exists (GT removed, extraction deleted): take it out of the totals."""
    if row is None:
        return False
    run_row = _run_totals_swap(row, None, batch)
    row.delete()
    return _run_row_settle(run_row) if run_row else False


def statement_result_compute(
    *, statement_id: int, run_id: int, force: bool = False, batch: bool = False
) -> MetricResult | None:
    """F1 of one statement's extraction in one run against its approved GT, stored.

    Returns the row, or None when the statement has no result in this run. ``force``
    recomputes unchanged inputs; ``batch`` defers the run totals (see _run_totals_swap).
    """
    with transaction.atomic():
        # Lock before reading the inputs, so a concurrent mark-stale waits for this write.
        row = (
            _results()
            .select_for_update()
            .defer("values")
            .filter(scope=Scope.STATEMENT, run_id=run_id, statement_id=statement_id)
            .first()
        )
        inputs = _statement_inputs(statement_id, run_id)
        if inputs is None:
            follow, row = _row_remove(row, batch), None
        else:
            row = row or _locked_or_created(
                statement_key(
                    run_id=run_id, discussion_id=inputs.discussion_id, statement_id=statement_id
                ),
                scope=Scope.STATEMENT,
                run_id=run_id,
                discussion_id=inputs.discussion_id,
                statement_id=statement_id,
            )
            follow = _statement_store(row, inputs, force, batch)
    if follow:
        system_result_compute()
    return row


def _statement_store(row: MetricResult, inputs: _Inputs, force: bool, batch: bool) -> bool:
    return _metrics_store(
        row,
        inputs,
        lambda: calculate_statement_f1(
            inputs.ai,
            inputs.gt,
            settings=match_settings(),
            statement_id=row.statement_id,
            discussion_id=row.discussion_id,
        ),
        force=force,
        batch=batch,
    )


def _metrics_store(
    row: MetricResult,
    inputs: _Inputs,
    compute: Callable[[], ComparisonMetrics],
    *,
    force: bool,
    batch: bool,
) -> bool:
    """A statement's or discussion's row: confirmed when its inputs are unchanged, else the
    figures ``compute`` returns stored with their additive contribution to the run totals."""
    if _is_current(row, inputs.hash, force):
        return _row_confirm(row, batch)
    metrics = compute()
    return _row_store(
        row,
        values=metrics.to_dict(),
        contribution=statement_contribution(metrics),
        input_hash=inputs.hash,
        batch=batch,
    )


# --- discussion (cumulative) results ----------------------------------------------------------


def _discussion_inputs(discussion_id: int, run_id: int) -> _Inputs | None:
    """The subject statements with approved GT, in order; AI deltas of the same statements.

    A statement the run did not extract contributes an empty AI delta; a run that extracted
    none of them does not cover the discussion (no result).
    """
    ground_truth = list(
        Feedback.objects.approved()
        .filter(
            statement__discussion_id=discussion_id, statement__speaker__type=Speaker.Type.SUBJECT
        )
        .order_by("statement__order")
        .values_list("statement_id", "id", "version", "updated_at", "edited_extraction")
    )
    statement_ids = [gt[0] for gt in ground_truth]
    extractions = {
        e[0]: e
        for e in Extraction.objects.filter(
            run_id=run_id, statement_id__in=statement_ids
        ).values_list("statement_id", "id", "updated_at", "pdp_deltas")
    }
    if not extractions:
        return None
    ai = [extractions[s][3] if s in extractions else None for s in statement_ids]
    inputs = [[*gt[:4], *(extractions.get(gt[0], (None,) * 3)[1:3])] for gt in ground_truth]
    return _Inputs(ai, [gt[4] for gt in ground_truth], _hash(inputs))


def discussion_result_compute(
    *, discussion_id: int, run_id: int, force: bool = False, batch: bool = False
) -> MetricResult | None:
    """Cumulative F1 of one discussion in one run (accumulated AI vs GT PDP), stored."""
    key = discussion_key(run_id=run_id, discussion_id=discussion_id)
    with transaction.atomic():
        row = row_locked(key)
        inputs = _discussion_inputs(discussion_id, run_id)
        if inputs is None:
            follow, row = _row_remove(row, batch), None
        else:
            row = row or _locked_or_created(
                key, scope=Scope.DISCUSSION, run_id=run_id, discussion_id=discussion_id
            )
            follow = _discussion_store(row, inputs, force, batch)
    if follow:
        system_result_compute()
    return row


def _discussion_store(row: MetricResult, inputs: _Inputs, force: bool, batch: bool) -> bool:
    return _metrics_store(
        row,
        inputs,
        lambda: calculate_cumulative_f1(
            inputs.ai, inputs.gt, settings=match_settings(), discussion_id=row.discussion_id
        ),
        force=force,
        batch=batch,
    )


# --- failures --------------------------------------------------------------------------------


def failure_recorded(
    *,
    scope: str,
    run_id: int | None = None,
    statement_id: int | None = None,
    discussion_id: int | None = None,
) -> AbstractContextManager[None]:
    """A bug in one extraction result becomes a failed row, and its run and system rows show
    it (``metrics.results.failure_recorded``); a missing row is created stale since now."""
    return results.failure_recorded(
        family=EXTRACTION,
        scope=scope,
        code_version=CODE_VERSION,
        settings=match_settings().to_dict(),
        run_id=run_id,
        discussion_id=discussion_id,
        statement_id=statement_id,
        stale_now=True,
    )


# --- invalidation ----------------------------------------------------------------------------


def _placeholders_create(approved: Any, run_ids: Iterable[int] | None) -> None:
    """Stale rows for results that must now exist: a statement that just got approved GT
    needs a row in every run that extracted it (and so do its discussion and the run).

    ``approved`` is a queryset of approved feedback (the statements concerned).
    """
    discussion_of = dict(approved.values_list("statement_id", "statement__discussion_id"))
    pairs = Extraction.objects.filter(statement_id__in=approved.values("statement_id"))
    if run_ids is not None:
        pairs = pairs.filter(run_id__in=run_ids)
    rows = {}
    for run_id, statement_id in pairs.values_list("run_id", "statement_id").iterator():
        discussion_id = discussion_of[statement_id]
        ids = {"run_id": run_id, "discussion_id": discussion_id, "statement_id": statement_id}
        rows[statement_key(**ids)] = (Scope.STATEMENT, ids)
        ids = {"run_id": run_id, "discussion_id": discussion_id}
        rows[discussion_key(**ids)] = (Scope.DISCUSSION, ids)
        rows[run_key(EXTRACTION, run_id)] = (Scope.RUN, {"run_id": run_id})
    placeholders = [_placeholder(key, scope, **ids) for key, (scope, ids) in rows.items()]
    MetricResult.objects.bulk_create(placeholders, ignore_conflicts=True, batch_size=500)


def _placeholder(key: str, scope: str, **fields: Any) -> MetricResult:
    return MetricResult(
        key=key,
        family=EXTRACTION,
        scope=scope,
        status=Status.STALE,
        stale_since=timezone.now(),
        **fields,
    )


def _mark(query: Q, run_ids: Iterable[int] | None = None) -> tuple[list[tuple], int]:
    """Lock (in pk order, so concurrent callers cannot deadlock) and mark rows stale.

    Returns (run, discussion, statement) of every matching row, and how many changed.
    """
    rows = _results().filter(query)
    if run_ids is not None:
        rows = rows.filter(run_id__in=run_ids)
    locked = list(
        rows.select_for_update()
        .order_by("pk")
        .values_list("pk", "status", "run_id", "discussion_id", "statement_id")
    )
    to_mark = [pk for pk, status, *_ in locked if status != Status.STALE]
    MetricResult.objects.filter(pk__in=to_mark).update(
        status=Status.STALE, stale_since=timezone.now()
    )
    return [tuple(row[2:]) for row in locked], len(to_mark)


def results_mark_stale(
    *,
    statement_ids: Iterable[int],
    reason: str = "",
    discussion_ids: Iterable[int] = (),
    run_ids: Iterable[int] | None = None,
) -> int:
    """Mark every result that depends on these statements stale and queue its recomputation.

    Statement rows of the statements, rows of their discussions, the affected runs and the
    system result (``run_ids`` narrows to some runs). Returns how many rows changed.
    """
    ids = sorted(set(statement_ids))
    discussions = set(discussion_ids)
    if not ids and not discussions:
        return 0
    run_ids = None if run_ids is None else set(run_ids)
    with transaction.atomic():
        discussions |= set(
            Statement.objects.filter(pk__in=ids).values_list("discussion_id", flat=True)
        )
        _placeholders_create(Feedback.objects.approved().filter(statement_id__in=ids), run_ids)
        statements, n1 = _mark(Q(scope=Scope.STATEMENT, statement_id__in=ids), run_ids)
        discussion_rows, n2 = _mark(
            Q(scope=Scope.DISCUSSION, discussion_id__in=discussions), run_ids
        )
        runs = sorted({row[0] for row in statements + discussion_rows})
        _, n3 = _mark(Q(scope=Scope.RUN, run_id__in=runs))
        n4 = _mark(Q(scope=Scope.SYSTEM))[1] if runs else 0
        transaction.on_commit(lambda: _queue_recompute(statements, discussion_rows, runs))
    log.info("marked %s results stale (%s) for statements %s", n1 + n2 + n3 + n4, reason, ids[:10])
    # The own-data families (review savings, calibration, inter-auditor) follow the same inputs.
    own_results_mark_stale(reason=reason)
    return n1 + n2 + n3 + n4


def results_forget_deleted(*, discussion_ids: Iterable[int], run_ids: Iterable[int]) -> None:
    """Rows went with deleted statements/discussions: rebuild those runs' totals.

    Run rows are invalidated (totals unknown) here, after the delete committed, rather than
    inside the delete: that would lock the run row before the rows it cascades to.
    """
    runs = sorted(set(run_ids))
    with transaction.atomic():
        _results().filter(scope=Scope.RUN, run_id__in=runs).update(
            contribution=None, status=Status.STALE, stale_since=timezone.now()
        )
        _mark(Q(scope=Scope.SYSTEM))
    results_mark_stale(statement_ids=[], discussion_ids=discussion_ids, reason="deleted")
    for run_id in runs:
        task_enqueue_on_commit("metrics.tasks.compute_run", run_id=run_id)


def results_run_deleted() -> None:
    """A run and all its rows are gone: only the system trend changes."""
    _enqueue_system()


# --- settings or code changed --------------------------------------------------------------------


def results_outdated() -> Any:
    """Extraction rows (not already stale) computed with other match settings or code than
    those in force now."""
    return (
        _results()
        .exclude(status=Status.STALE)
        .exclude(match_settings=match_settings().to_dict(), code_version=CODE_VERSION)
    )


def results_mark_outdated() -> int:
    """Mark every result computed with other settings or code stale, and queue one stale-only
    recompute job for them (the own-data families follow). Returns how many rows changed.

    Called at worker start and by every periodic sweep: cheap when nothing is outdated (one
    query), safe to run from several processes at once (rows are marked under their locks,
    so only the first caller finds them not yet stale and queues the job).
    """
    with transaction.atomic():
        pks = list(results_outdated().values_list("pk", flat=True))
        marked = _mark(Q(pk__in=pks))[1] if pks else 0
        if marked:
            _mark(Q(scope=Scope.SYSTEM))
            metrics_recompute_all(stale_only=True)
    if own_results_outdated().exists():
        own_results_mark_stale(reason="match settings or code changed")
    if marked:
        log.warning(
            "%s extraction results were computed with other match settings or code: "
            "marked stale, recompute queued",
            marked,
        )
    return marked


# --- queueing ----------------------------------------------------------------------------------


def _queue_recompute(statements: list[tuple], discussions: list[tuple], runs: list[int]) -> None:
    for run_id, _discussion_id, statement_id in statements:
        task_enqueue_named(
            "metrics.tasks.compute_statement", statement_id=statement_id, run_id=run_id
        )
    for run_id, discussion_id, _ in discussions:
        task_enqueue_named(
            "metrics.tasks.compute_discussion", discussion_id=discussion_id, run_id=run_id
        )
    # Settles a run whose rows all turned out current (or went away) — cheap when nothing to do.
    for run_id in runs:
        task_enqueue_named("metrics.tasks.compute_run", run_id=run_id)


def _enqueue_system() -> None:
    task_enqueue_named("metrics.tasks.compute_system")


# --- recompute all / stale: compute jobs -------------------------------------------------------

Item = tuple[str, int, int]  # (scope, target id, run id); target id 0 for run/system items


def _expected_items(run_id: int | None) -> list[Item]:
    """Every result that should exist, plus existing rows that no longer should (to remove)."""
    runs = Extraction.objects.all() if run_id is None else Extraction.objects.filter(run_id=run_id)
    approved = Feedback.objects.approved().values("statement_id")
    pairs = set(
        runs.filter(statement_id__in=approved).values_list(
            "statement_id", "statement__discussion_id", "run_id"
        )
    )
    rows = _results().filter(scope__in=CHILD_SCOPES)
    rows = rows if run_id is None else rows.filter(run_id=run_id)
    statements = {(s, r) for s, _, r in pairs}
    discussions = {(d, r) for _, d, r in pairs}
    for scope, d, s, r in rows.values_list("scope", "discussion_id", "statement_id", "run_id"):
        if scope == Scope.STATEMENT:
            statements.add((s, r))
        else:
            discussions.add((d, r))
    run_ids = sorted({r for _, r in statements | discussions} | ({run_id} if run_id else set()))
    return _items(statements, discussions, run_ids)


def _items(statements: set, discussions: set, run_ids: Iterable[int]) -> list[Item]:
    return [
        *((Scope.STATEMENT, s, r) for s, r in sorted(statements)),
        *((Scope.DISCUSSION, d, r) for d, r in sorted(discussions)),
        *((Scope.RUN, 0, r) for r in run_ids),
        (Scope.SYSTEM, 0, 0),
    ]


def _stale_items(run_id: int | None, older_than: timedelta | None = None) -> list[Item]:
    """Stale rows (and runs whose totals are unknown), oldest first."""
    rows = _results().filter(Q(status=Status.STALE) | Q(scope=Scope.RUN, contribution__isnull=True))
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    if older_than is not None:
        rows = rows.filter(stale_since__lte=timezone.now() - older_than)
    found = list(rows.values_list("scope", "statement_id", "discussion_id", "run_id"))
    if not found:
        return []
    statements = {(s, r) for scope, s, _, r in found if scope == Scope.STATEMENT}
    discussions = {(d, r) for scope, _, d, r in found if scope == Scope.DISCUSSION}
    run_ids = sorted({r for *_, r in found if r is not None})
    return _items(statements, discussions, run_ids)


def _item_compute(item: Item, *, force: bool) -> None:
    scope, target, run_id = item
    with failure_recorded(
        scope=scope,
        run_id=run_id or None,
        statement_id=target if scope == Scope.STATEMENT else None,
        discussion_id=target if scope == Scope.DISCUSSION else None,
    ):
        # Batch: the items end with each run, whose totals are rebuilt once there.
        if scope == Scope.STATEMENT:
            statement_result_compute(statement_id=target, run_id=run_id, force=force, batch=True)
        elif scope == Scope.DISCUSSION:
            discussion_result_compute(discussion_id=target, run_id=run_id, force=force, batch=True)
        elif scope == Scope.RUN:
            run_result_compute(run_id=run_id, rebuild=force)
        else:
            system_result_compute()


RECOMPUTE_SCOPE = "recompute"  # one recompute job at a time, whatever its run
MAX_JOB_ATTEMPTS = 3  # a job whose worker was lost this many times is marked failed


def metrics_recompute_all(
    *,
    user: Any = None,
    family: str = EXTRACTION,
    run_id: int | None = None,
    stale_only: bool = False,
    queue: bool = True,
) -> ComputeJob:
    """Create a recompute job (queued to a worker unless ``queue=False``).

    The database holds at most one active recompute job: an active one (or the one a
    simultaneous start just created) is returned instead of starting a second.
    """
    if family not in RECOMPUTE_JOB:
        raise ValueError(f"unknown metric family {family!r}; known: {', '.join(RECOMPUTE_JOB)}")
    job = compute_job_start(
        kind=ComputeJob.Kind.RECOMPUTE,
        scope=RECOMPUTE_SCOPE,
        params={"family": family, "run_id": run_id, "stale_only": stale_only},
        user=user,
    )
    if queue and job.created:
        transaction.on_commit(lambda: _enqueue_job(job.pk))
    return job


def _enqueue_job(job_id: int) -> None:
    task_enqueue_named("metrics.tasks.run_compute_job", job_id=job_id)


def compute_job_cancel(*, job: ComputeJob) -> ComputeJob:
    """Stop a job: a queued one (or one whose worker is gone) at once; a running one stops
    between two items, when its task next checks the flag."""
    now = timezone.now()
    ComputeJob.objects.filter(pk=job.pk, status=ComputeJob.Status.QUEUED).update(
        status=ComputeJob.Status.CANCELLED, cancel_requested=True, finished_at=now
    )
    ComputeJob.objects.filter(pk=job.pk, status=ComputeJob.Status.RUNNING).update(
        cancel_requested=True
    )
    _lease_expired(ComputeJob.objects.filter(pk=job.pk)).update(
        status=ComputeJob.Status.CANCELLED, finished_at=now
    )
    job.refresh_from_db()
    return job


def _lease_expired(jobs: Any) -> Any:
    """Running jobs whose task stopped writing its heartbeat (its worker died)."""
    cutoff = timezone.now() - timedelta(seconds=django_settings.JOB_LEASE_SECONDS)
    return jobs.filter(status=ComputeJob.Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )


def _job_claim(job_id: int) -> int | None:
    """Only one worker runs a job, even if its task was delivered twice: queued → running.
    Returns this run's attempt number (its lease), or None when another task has the job."""
    now = timezone.now()
    claimed = ComputeJob.objects.filter(pk=job_id, status=ComputeJob.Status.QUEUED).update(
        status=ComputeJob.Status.RUNNING,
        started_at=Coalesce("started_at", Value(now)),
        heartbeat_at=now,
        attempt=F("attempt") + 1,
    )
    if not claimed:
        return None
    return ComputeJob.objects.values_list("attempt", flat=True).get(pk=job_id)


def _job_heartbeat(job: ComputeJob, attempt: int) -> bool:
    """Save progress and renew the lease; False when the job was cancelled or taken over
    (its lease expired and the sweep handed it to another task): then stop."""
    return bool(
        ComputeJob.objects.filter(
            pk=job.pk, status=ComputeJob.Status.RUNNING, attempt=attempt, cancel_requested=False
        ).update(done=job.done, heartbeat_at=timezone.now())
    )


def _scope_mark_stale(run_id: int | None) -> None:
    """Before recomputing everything: placeholders for missing results, all rows stale.

    Pages then show "updating" honestly, and each run settles (and the system follows) once,
    at its last row rather than after every row. Rows a cancelled job does not reach stay
    stale for the sweep, which only confirms them when their inputs did not change.
    """
    runs = None if run_id is None else [run_id]
    with transaction.atomic():
        _placeholders_create(Feedback.objects.approved(), runs)
        for scope in (Scope.STATEMENT, Scope.DISCUSSION, Scope.RUN):
            _mark(Q(scope=scope), runs)
        _mark(Q(scope=Scope.SYSTEM))


def _job_items(job: ComputeJob) -> list[Item]:
    """What is left to do. A full recompute first marks its scope stale; a resumed job (or a
    stale-only one) then only has the rows still stale, so it continues from what is done."""
    params = job.params
    if not params.get("stale_only") and not params.get("marked"):
        _scope_mark_stale(params.get("run_id"))
        job.params = {**params, "marked": True}
        job.save(update_fields=["params"])
        return _expected_items(params.get("run_id"))
    return _stale_items(params.get("run_id"))


def compute_job_run(*, job_id: int, progress: Progress | None = None) -> ComputeJob:
    """Process a recompute job item by item, saving progress and honouring cancellation."""
    attempt = _job_claim(job_id)
    if attempt is None:
        return ComputeJob.objects.get(pk=job_id)
    job = ComputeJob.objects.get(pk=job_id)
    try:
        items = _job_items(job)
        # Resumed: what is no longer stale is done (by the lost run, or the sweep meanwhile).
        job.done = max(job.total - len(items), 0) if attempt > 1 else 0
        job.total = job.done + len(items)
        job.save(update_fields=["total", "done"])
        stopped = _job_process(
            job, items, attempt, force=not job.params.get("stale_only"), progress=progress
        )
        status = ComputeJob.Status.CANCELLED if stopped else ComputeJob.Status.DONE
        error = ""
    except Exception:
        log.exception("compute job %s failed", job_id)
        status, error = ComputeJob.Status.FAILED, traceback.format_exc()[-8000:]
    # Only this attempt finishes the job (not one that lost its lease to a resumed run).
    ComputeJob.objects.filter(pk=job_id, status=ComputeJob.Status.RUNNING, attempt=attempt).update(
        status=status, error=error, finished_at=timezone.now(), done=job.done
    )
    job.refresh_from_db()
    return job


def _job_process(
    job: ComputeJob, items: list[Item], attempt: int, *, force: bool, progress: Progress | None
) -> bool:
    """Returns True when stopped: cancelled (checked before each item) or the lease lost to
    a resumed run. Progress and the heartbeat are written at most twice a second."""
    saved_at = time.monotonic()
    start = job.done
    for done, item in enumerate(items, start=start + 1):
        if ComputeJob.objects.filter(pk=job.pk, cancel_requested=True).exists():
            return True
        _item_compute(item, force=force)
        job.done = done
        if progress:
            progress(done - start, len(items))
        if time.monotonic() - saved_at > 0.5 or done == start + len(items):
            if not _job_heartbeat(job, attempt):
                return True
            saved_at = time.monotonic()
    return False


def results_recompute_stale(*, older_than: timedelta | None = None) -> Counter:
    """Compute stale rows in place (the periodic sweep); re-queue recompute jobs the broker
    lost, resume (or fail) jobs whose worker died. ``older_than`` leaves alone rows whose
    task was queued moments ago."""
    counts: Counter = Counter()
    for item in _stale_items(None, older_than):
        _item_compute(item, force=False)
        counts[item[0]] += 1
    counts.update(compute_jobs_recover(older_than=older_than))
    return counts


def compute_jobs_recover(*, older_than: timedelta | None = None) -> Counter:
    """Jobs nobody is running: queued ones the broker lost are queued again; running ones
    whose lease expired are resumed (recompute) or marked failed (the others, or after
    MAX_JOB_ATTEMPTS lost workers); cancelled ones are closed."""
    counts: Counter = Counter()
    cutoff = timezone.now() - (older_than or timedelta(0))
    for job_id in ComputeJob.objects.filter(
        kind=ComputeJob.Kind.RECOMPUTE, status=ComputeJob.Status.QUEUED, created_at__lte=cutoff
    ).values_list("pk", flat=True):
        _enqueue_job(job_id)
        counts["job"] += 1
    for job in _lease_expired(ComputeJob.objects.all()):
        counts[_job_recover(job)] += 1
    return counts


def _job_recover(job: ComputeJob) -> str:
    """One job whose worker died: resume it, or say why it stopped."""
    expired = _lease_expired(ComputeJob.objects.filter(pk=job.pk, attempt=job.attempt))
    now = timezone.now()
    if job.cancel_requested:
        expired.update(status=ComputeJob.Status.CANCELLED, finished_at=now)
        return "job_cancelled"
    if job.kind == ComputeJob.Kind.RECOMPUTE and job.attempt < MAX_JOB_ATTEMPTS:
        if expired.update(status=ComputeJob.Status.QUEUED):
            log.warning("compute job %s: worker lost (attempt %s); resuming", job.pk, job.attempt)
            _enqueue_job(job.pk)
        return "job_resumed"
    error = (
        f"The worker running this job stopped (no heartbeat for "
        f"{django_settings.JOB_LEASE_SECONDS:.0f} s, attempt {job.attempt}). "
        "Nothing more will happen to it; start it again."
    )
    expired.update(status=ComputeJob.Status.FAILED, error=error, finished_at=now)
    log.warning("job %s (%s): worker lost; marked failed", job.pk, job.kind)
    return "job_failed"
