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

The batch path (``metrics.engine.recompute``: recompute jobs, large changes) stores the same rows with
the same figures; it uses the public pieces here (``extraction_results``, ``children_inputs``,
``row_is_current``, ``row_fill``, ``row_mark_fresh``,
``placeholders_create``, ``rows_mark_stale``), so there is one implementation of each step.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from django.conf import settings as django_settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from audit.models import (
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    Feedback,
    RunConfiguration,
    Speaker,
    Statement,
)
from audit.selectors.threads import approved_codings_count
from evalsite.match_settings import match_settings
from evalsite.post_commit import after_commit
from evalsite.queue import task_enqueue_named, task_enqueue_on_commit
from metrics import results
from metrics.engine.errors import statement_results_changed
from metrics.engine.totals import PART, run_totals_sum
from metrics.families.extraction import (
    add_contributions,
    calculate_cumulative_f1,
    calculate_statement_f1,
    statement_contribution,
    system_cumulative_f1_from_totals,
    system_f1_from_totals,
)
from metrics.models import MetricResult
from metrics.own_data.common import own_results_mark_stale
from metrics.registry import EXTRACTION, FAMILIES
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


def extraction_results() -> Any:
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
    return run_totals_sum(family=EXTRACTION, run_id=run_id)


# --- run and system summaries ----------------------------------------------------------------


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


# --- statement results -----------------------------------------------------------------------


@dataclass(frozen=True)
class ResultInputs:
    ai: Any
    gt: Any
    hash: str
    discussion_id: int | None = None


def _statement_inputs(statement_id: int, run_id: int) -> ResultInputs | None:
    return statements_inputs([(statement_id, run_id)]).get((statement_id, run_id))


def statements_inputs(pairs: Iterable[tuple[Any, Any]]) -> dict[tuple[int, int], ResultInputs]:
    """GT = the approved feedback; AI = the run's extraction; for (statement, run) pairs. A
    pair missing from the answer has no result to store."""
    found = children_inputs(statements=pairs)
    return {(target, run): inputs for (_, target, run), inputs in found.items()}


InputsKey = tuple[str, int, int]  # (scope, statement or discussion id, run id)


def children_inputs(
    *, statements: Iterable[tuple[Any, Any]] = (), discussions: Iterable[tuple[Any, Any]] = ()
) -> dict[InputsKey, ResultInputs]:
    """The inputs of (statement, run) and (discussion, run) pairs, by (scope, id, run), read
    in two queries: a batch holding a discussion and its statements reads (and decodes)
    each payload once. A pair missing from the answer has no result to store."""
    statements, discussions = list(statements), list(discussions)
    by_statement, by_discussion, subjects = _approved_ground_truth(
        {s for s, _ in statements}, {d for d, _ in discussions}
    )
    whole = _whole_discussion_extractions(discussions)
    subject_ids = {gt[0] for rows in by_discussion.values() for gt in rows}
    extractions = {
        (e[0], e[1]): (e[0], *e[2:])  # (statement, id, updated_at, pdp_deltas)
        for e in Extraction.objects.filter(
            run_id__in={r for _, r in statements} | {r for _, r in discussions},
            statement_id__in={s for s, _ in statements} | subject_ids,
        ).values_list("statement_id", "run_id", "id", "updated_at", "pdp_deltas")
    }
    found: dict[InputsKey, ResultInputs] = {}
    for statement_id, run_id in statements:
        gt, ai = by_statement.get(statement_id), extractions.get((statement_id, run_id))
        # Without approved GT there is nothing to score; without an extraction the run does
        # not cover the statement (it is left out rather than scored as an empty extraction).
        if gt is None or ai is None:
            continue
        inputs = [[*gt[1:4]], [*ai[1:3]]]
        found[Scope.STATEMENT, statement_id, run_id] = ResultInputs(
            ai[3], gt[4], _hash(inputs), gt[5]
        )
    for discussion_id, run_id in discussions:
        rows = by_discussion.get(discussion_id, [])
        if whole is not None and run_id in whole.runs:
            extraction = whole.extractions.get((discussion_id, run_id))
            discussion = _whole_discussion_inputs(rows, subjects.get(discussion_id, 0), extraction)
        else:
            discussion = _discussion_pair_inputs(rows, run_id, extractions)
        if discussion is not None:
            found[Scope.DISCUSSION, discussion_id, run_id] = discussion
    return found


def _approved_ground_truth(
    statement_ids: set[int], discussion_ids: set[int]
) -> tuple[dict[int, tuple], dict[int, list[tuple]], dict[int, int]]:
    """The approved GT of the statements, and of the discussions' subject statements in
    order, as (statement, id, version, updated_at, edited_extraction, discussion) rows; and
    how many subject statements each discussion has."""
    # The subject statements first, so the GT is read by statement id alone: an OR of the
    # two conditions made PostgreSQL join every approved feedback (a full scan per batch).
    subject_rows = (
        Statement.objects.filter(
            discussion_id__in=discussion_ids, speaker__type=Speaker.Type.SUBJECT
        ).values_list("id", "discussion_id")
        if discussion_ids
        else ()
    )
    subjects: set[int] = set()
    counts: dict[int, int] = {}
    for statement_id, discussion_id in subject_rows:
        subjects.add(statement_id)
        counts[discussion_id] = counts.get(discussion_id, 0) + 1
    by_statement: dict[int, tuple] = {}
    by_discussion: dict[int, list[tuple]] = {}
    for gt in (
        Feedback.objects.approved()
        .filter(statement_id__in=statement_ids | subjects)
        .order_by("statement__discussion_id", "statement__order")
        .values_list(
            "statement_id",
            "id",
            "version",
            "updated_at",
            "edited_extraction",
            "statement__discussion_id",
        )
    ):
        by_statement[gt[0]] = gt
        if gt[0] in subjects:
            by_discussion.setdefault(gt[5], []).append(gt)
    return by_statement, by_discussion, counts


# --- discussion-unit runs: one extraction per discussion ------------------------------------------


@dataclass(frozen=True)
class _WholeExtractions:
    runs: set[int]  # the discussion-unit runs among those asked about
    extractions: dict[tuple[int, int], tuple]  # (discussion, run) -> (id, updated_at, pdp)


def _whole_discussion_extractions(pairs: list[tuple[Any, Any]]) -> _WholeExtractions | None:
    """The extractions of the discussion-unit runs among ``pairs`` (None: there are none)."""
    runs = set(
        ExtractionRun.objects.discussion_unit()
        .filter(pk__in={r for _, r in pairs})
        .values_list("pk", flat=True)
    )
    if not runs:
        return None
    rows = DiscussionExtraction.objects.filter(
        run_id__in=runs, discussion_id__in={d for d, r in pairs if r in runs}
    ).values_list("discussion_id", "run_id", "id", "updated_at", "pdp")
    return _WholeExtractions(runs, {(row[0], row[1]): row[2:] for row in rows})


def _whole_discussion_inputs(
    rows: list[tuple], subject_count: int, extraction: tuple | None
) -> ResultInputs | None:
    """A discussion-unit run's inputs for one discussion: its one PDP against the cumulative
    approved GT, only when every subject statement has approved GT (a partly approved
    discussion is left out: its PDP would be scored against half its ground truth)."""
    if extraction is None or not subject_count or len(rows) != subject_count:
        return None
    inputs = [[*gt[:4]] for gt in rows] + [[*extraction[:2]]]
    return ResultInputs([extraction[2]], [gt[4] for gt in rows], _hash(inputs))


def whole_discussion_pairs(*, run_id: int | None = None) -> set[tuple[int, int]]:
    """(discussion, run) of the discussion-unit extractions of discussions with approved GT."""
    rows = DiscussionExtraction.objects.filter(
        discussion_id__in=Feedback.objects.approved().values("statement__discussion_id")
    )
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    return set(rows.values_list("discussion_id", "run_id"))


def _left_out(run_id: int | None, scored: int) -> int:
    """Discussions a discussion-unit run extracted that have approved GT, not scored because
    some subject statement has none yet."""
    return len(whole_discussion_pairs(run_id=run_id)) - scored if run_id else 0


def row_is_current(row: MetricResult, input_hash: str, force: bool) -> bool:
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
            extraction_results().filter(
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
    row_fill(row, values=values, contribution=contribution, input_hash=input_hash)
    row.save()
    statement_results_changed([row])
    return _run_row_settle(run_row) if run_row else False


def row_fill(row: MetricResult, *, values: dict, contribution: dict, input_hash: str) -> None:
    row.values, row.contribution, row.input_hash = values, contribution, input_hash
    row_mark_fresh(row)
    row.error, row.computed_at = "", timezone.now()


def row_mark_fresh(row: MetricResult) -> None:
    # Same hash means same settings and code; recording them again keeps equal-but-differently
    # written settings from being found outdated again (results_mark_outdated).
    row.status, row.stale_since = Status.FRESH, None
    row.match_settings, row.code_version = match_settings().to_dict(), CODE_VERSION


CONFIRMED_FIELDS = ["status", "stale_since", "match_settings", "code_version"]
STORED_FIELDS = [*CONFIRMED_FIELDS, "values", "contribution", "input_hash", "error", "computed_at"]


def _row_confirm(row: MetricResult, batch: bool) -> bool:
    """Unchanged inputs: the stored figures stand; only the status needs to become fresh."""
    if row.status == Status.FRESH:
        return False
    row_mark_fresh(row)
    row.save(update_fields=CONFIRMED_FIELDS)
    return False if batch else _run_row_settle(_run_row_locked(row.run_id))


def _row_remove(row: MetricResult | None, batch: bool) -> bool:
    """The result no longer exists (GT removed, extraction deleted): take it out of the totals."""
    if row is None:
        return False
    run_row = _run_totals_swap(row, None, batch)
    statement_results_changed([row])
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
            extraction_results()
            .select_for_update(no_key=True)
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
            follow = _child_store(row, inputs, force, batch)
    if follow:
        system_result_compute()
    return row


def _statement_figures(row: MetricResult, inputs: ResultInputs) -> tuple[dict, dict]:
    """The statement's F1 figures and its contribution to the run totals."""
    metrics = calculate_statement_f1(
        inputs.ai,
        inputs.gt,
        settings=match_settings(),
        statement_id=row.statement_id,
        discussion_id=row.discussion_id,
    )
    return metrics.to_dict(), statement_contribution(metrics)


def _child_store(row: MetricResult, inputs: ResultInputs, force: bool, batch: bool) -> bool:
    """A statement or discussion row from its inputs: confirmed when they did not change."""
    if row_is_current(row, inputs.hash, force):
        return _row_confirm(row, batch)
    values, contribution = FIGURES[row.scope](row, inputs)
    return _row_store(
        row, values=values, contribution=contribution, input_hash=inputs.hash, batch=batch
    )


# --- discussion (cumulative) results ----------------------------------------------------------


def _discussion_inputs(discussion_id: int, run_id: int) -> ResultInputs | None:
    return discussions_inputs([(discussion_id, run_id)]).get((discussion_id, run_id))


def discussions_inputs(pairs: Iterable[tuple[Any, Any]]) -> dict[tuple[int, int], ResultInputs]:
    """Per (discussion, run) pair: the subject statements with approved GT, in order, and the
    run's AI deltas of the same statements (``children_inputs``).

    A statement the run did not extract contributes an empty AI delta; a run that extracted
    none of them does not cover the discussion (no result: the pair is missing).
    """
    found = children_inputs(discussions=pairs)
    return {(target, run): inputs for (_, target, run), inputs in found.items()}


def _discussion_pair_inputs(
    rows: list[tuple], run_id: int, extractions: dict[tuple[int, int], tuple]
) -> ResultInputs | None:
    """One discussion's inputs in one run from its subject statements' GT rows (in order)
    and the extractions read; None when the run extracted none of them."""
    extracted = [extractions.get((gt[0], run_id)) for gt in rows]
    if not any(extracted):
        return None
    ai = [e[3] if e else None for e in extracted]
    inputs = [
        [*gt[:4], *(e[1:3] if e else (None, None))] for gt, e in zip(rows, extracted, strict=True)
    ]
    return ResultInputs(ai, [gt[4] for gt in rows], _hash(inputs))


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
            follow = _child_store(row, inputs, force, batch)
    if follow:
        system_result_compute()
    return row


def _discussion_figures(row: MetricResult, inputs: ResultInputs) -> tuple[dict, dict]:
    """The discussion's cumulative F1 figures and its contribution to the run totals."""
    metrics = calculate_cumulative_f1(
        inputs.ai, inputs.gt, settings=match_settings(), discussion_id=row.discussion_id
    )
    return metrics.to_dict(), statement_contribution(metrics)


FIGURES: dict[str, Callable[[MetricResult, ResultInputs], tuple[dict, dict]]] = {
    Scope.STATEMENT: _statement_figures,
    Scope.DISCUSSION: _discussion_figures,
}


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


def placeholders_create(approved: Any, run_ids: Iterable[int] | None) -> int:
    """Stale rows for results that must now exist: a statement that just got approved GT
    needs a row in every run that extracted it (and so do its discussion and the run).
    Returns how many were missing when read (on PostgreSQL: how many it inserted; a
    concurrent caller may have created some first).

    ``approved`` is a queryset of approved feedback (the statements concerned). The database
    finds the rows still missing (an anti-join per scope): after the first compute nearly all
    exist, and listing the present keys in Python was most of a full recompute's planning. On
    PostgreSQL it also writes them, one ``INSERT ... SELECT`` per scope, rather than building
    every placeholder of a new run in Python.
    """
    missing = missing_rows(approved, run_ids)
    if connection.vendor == "postgresql":
        return sum(_placeholders_inserted(rows, scope, columns) for rows, scope, columns in missing)
    return _placeholders_created(missing)


Missing = tuple[Any, str, list[str]]  # ids of the missing rows (a query), their scope, id names


def missing_rows(approved: Any, run_ids: Iterable[int] | None) -> list[Missing]:
    """Per scope, the query of the missing rows' ids (see placeholders_create)."""
    pairs = Extraction.objects.filter(statement_id__in=approved.values("statement_id"))
    if run_ids is not None:
        pairs = pairs.filter(run_id__in=run_ids)
    ids = {"run_id": "run_id", "discussion_id": "statement__discussion_id"}
    # Discussion-unit runs: a row per discussion they extracted (computed, or removed when
    # the discussion is only partly approved).
    whole = DiscussionExtraction.objects.filter(
        discussion_id__in=approved.values("statement__discussion_id")
    )
    if run_ids is not None:
        whole = whole.filter(run_id__in=run_ids)
    whole_ids = {"run_id": "run_id", "discussion_id": "discussion_id"}
    return [
        _missing(pairs, Scope.STATEMENT, {**ids, "statement_id": "statement_id"}),
        _missing(pairs, Scope.DISCUSSION, ids),
        _missing(pairs, Scope.RUN, {"run_id": "run_id"}),
        _missing(whole, Scope.DISCUSSION, whole_ids),
        _missing(whole, Scope.RUN, {"run_id": "run_id"}),
    ]


def _missing(pairs: Any, scope: str, columns: dict[str, str]) -> Missing:
    """The ids of the ``scope`` rows of ``pairs`` (extractions) that do not exist yet;
    ``columns`` maps each id of the row to its column in ``pairs``. A statement row is found
    by its run and statement (its discussion follows from the statement)."""
    matched = {name: OuterRef(column) for name, column in columns.items()}
    if scope == Scope.STATEMENT:
        del matched["discussion_id"]
    present = extraction_results().filter(scope=scope, **matched)
    rows = pairs.exclude(Exists(present)).order_by().values_list(*columns.values()).distinct()
    return rows, scope, list(columns)


def _placeholders_created(missing: list[Missing]) -> int:
    """Read the missing ids and create their rows from Python (SQLite: small sites)."""
    rows = (
        _placeholder(result_key(EXTRACTION, scope, **fields), scope, **fields)
        for query, scope, columns in missing
        for fields in (dict(zip(columns, ids, strict=True)) for ids in list(query))
    )  # each query read whole: a write while SQLite's cursor reads is unsafe
    created = 0
    while batch := list(itertools.islice(rows, 2000)):  # rows held at once: bounded
        MetricResult.objects.bulk_create(batch, ignore_conflicts=True, batch_size=500)
        created += len(batch)
    return created


def _placeholders_inserted(query: Any, scope: str, columns: list[str]) -> int:
    """The missing rows written by the database from the query of their ids: the key as
    ``MetricResult.make_key`` writes it, every other field as ``_placeholder`` leaves it."""
    meta, quote = MetricResult._meta, connection.ops.quote_name
    prototype = _placeholder("", scope)
    constant = [
        field
        for field in meta.concrete_fields
        if not field.primary_key and field.name != "key" and field.attname not in columns
    ]
    names = ["key", *columns, *(field.column for field in constant)]
    # "extraction:statement:r1:d2:s3", "extraction:run:r1:d-:s-"
    key = " || ".join(
        f"%s || COALESCE(m.{quote(name)}::text, '-')" if name in columns else "%s || '-'"
        for name in _KEY_IDS
    )
    ids = ", ".join(f"m.{quote(name)}" for name in columns)
    values = [
        field.get_db_prep_save(getattr(prototype, field.attname), connection) for field in constant
    ]
    select, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(n) for n in names)}) "
            f"SELECT {key}, {ids}{''.join(f', %s::{f.db_type(connection)}' for f in constant)} "
            f"FROM ({select}) AS m({', '.join(quote(n) for n in columns)}) "
            f"ON CONFLICT ({quote('key')}) DO NOTHING",
            [f"{EXTRACTION}:{scope}:r", ":d", ":s", *values, *params],
        )
        return cursor.rowcount


_KEY_IDS = ("run_id", "discussion_id", "statement_id")  # in MetricResult.make_key's order


def _placeholder(key: str, scope: str, **fields: Any) -> MetricResult:
    return MetricResult(
        key=key,
        family=EXTRACTION,
        scope=scope,
        status=Status.STALE,
        stale_since=timezone.now(),
        **fields,
    )


def rows_mark_stale(query: Q, run_ids: Iterable[int] | None = None) -> tuple[list[tuple], int]:
    """Lock (in pk order, so concurrent callers cannot deadlock) and mark rows stale.

    Returns (run, discussion, statement) of every matching row, and how many changed.
    """
    rows = extraction_results().filter(query)
    if run_ids is not None:
        rows = rows.filter(run_id__in=run_ids)
    locked = list(
        rows.select_for_update(no_key=True)
        .order_by("pk")
        .values_list("pk", "status", "run_id", "discussion_id", "statement_id")
    )
    # Marked by the same condition (the rows are locked now), not by a list of their ids,
    # which PostgreSQL would have to parse for every row of a recompute-all.
    marked = rows.exclude(status=Status.STALE).update(
        status=Status.STALE, stale_since=timezone.now()
    )
    return [tuple(row[2:]) for row in locked], marked


def results_mark_stale(
    *,
    statement_ids: Iterable[int],
    reason: str = "",
    discussion_ids: Iterable[int] = (),
    run_ids: Iterable[int] | None = None,
    queue_tasks: bool = True,
) -> int:
    """Mark every result that depends on these statements stale and queue its recomputation.

    Statement rows of the statements, rows of their discussions, the affected runs and the
    system result (``run_ids`` narrows to some runs). Returns how many rows changed.
    ``queue_tasks=False``: the caller recomputes them otherwise (a chunked recompute job).
    """
    ids = sorted(set(statement_ids))
    discussions = set(discussion_ids)
    if not ids and not discussions:
        return 0
    run_ids = None if run_ids is None else set(run_ids)
    statements: list[tuple] = []
    discussion_rows: list[tuple] = []
    touched: set[int] = set()
    marked = 0
    with transaction.atomic():
        # A batch of statements at a time: an import of thousands holds one batch's rows.
        for batch in _batches(ids):
            discussions |= set(
                Statement.objects.filter(pk__in=batch).values_list("discussion_id", flat=True)
            )
            placeholders_create(Feedback.objects.approved().filter(statement_id__in=batch), run_ids)
            rows, n = rows_mark_stale(Q(scope=Scope.STATEMENT, statement_id__in=batch), run_ids)
            marked, touched = marked + n, touched | {row[0] for row in rows}
            statements += rows if queue_tasks else []
        for batch in _batches(sorted(discussions)):
            rows, n = rows_mark_stale(Q(scope=Scope.DISCUSSION, discussion_id__in=batch), run_ids)
            marked, touched = marked + n, touched | {row[0] for row in rows}
            discussion_rows += rows if queue_tasks else []
        runs = sorted(touched)
        marked += rows_mark_stale(Q(scope=Scope.RUN, run_id__in=runs))[1]
        marked += rows_mark_stale(Q(scope=Scope.SYSTEM))[1] if runs else 0
        if queue_tasks:
            after_commit(lambda: _queue_recompute(statements, discussion_rows, runs))
    log.info("marked %s results stale (%s) for statements %s", marked, reason, ids[:10])
    # The own-data families (review savings, calibration, inter-auditor) follow the same inputs.
    own_results_mark_stale(reason=reason)
    return marked


def _batches(ids: list[int]) -> Iterable[list[int]]:
    size = django_settings.RECOMPUTE_CHUNK_ITEMS
    return (ids[start : start + size] for start in range(0, len(ids), size))


def results_forget_deleted(*, discussion_ids: Iterable[int], run_ids: Iterable[int]) -> None:
    """Rows went with deleted statements/discussions: rebuild those runs' totals.

    Run rows are invalidated (totals unknown) here, after the delete committed, rather than
    inside the delete: that would lock the run row before the rows it cascades to. A statement
    without ground truth may have been all that kept its discussion partly approved: the
    discussion-unit runs that extracted it get the row they now score.
    """
    runs = sorted(set(run_ids))
    discussion_ids = sorted(set(discussion_ids))
    with transaction.atomic():
        extraction_results().filter(scope=Scope.RUN, run_id__in=runs).update(
            contribution=None, status=Status.STALE, stale_since=timezone.now()
        )
        rows_mark_stale(Q(scope=Scope.SYSTEM))
        placeholders_create(
            Feedback.objects.approved().filter(statement__discussion_id__in=discussion_ids), None
        )
    results_mark_stale(statement_ids=[], discussion_ids=discussion_ids, reason="deleted")
    for run_id in runs:
        task_enqueue_on_commit("metrics.tasks.compute_run", run_id=run_id)


def results_run_deleted() -> None:
    """A run and all its rows are gone: only the system trend changes."""
    _enqueue_system()


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
