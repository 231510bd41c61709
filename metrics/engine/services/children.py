"""Statement and discussion results, the children of a run: computed from their inputs,
confirmed when those did not change, removed when the result no longer exists; each change
swapped into the run's totals (``runs``), then the system result follows."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from evalsite.match_settings import match_settings
from metrics.engine.errors import statement_results_changed
from metrics.engine.services.inputs import ResultInputs, _discussion_inputs, _statement_inputs
from metrics.engine.services.rows import (
    CONFIRMED_FIELDS,
    Scope,
    Status,
    _locked_or_created,
    discussion_key,
    extraction_results,
    row_fill,
    row_is_current,
    row_mark_fresh,
    statement_key,
)
from metrics.engine.services.runs import (
    _run_row_locked,
    _run_row_settle,
    _run_totals_swap,
    system_result_compute,
)
from metrics.families.extraction import (
    calculate_cumulative_f1,
    calculate_statement_f1,
    statement_contribution,
)
from metrics.models import MetricResult
from metrics.results import row_locked


def _row_store(
    row: MetricResult, *, values: dict, contribution: dict, input_hash: str, batch: bool
) -> bool:
    """Store a child's new figures and swap its contribution in the run totals."""
    run_row = _run_totals_swap(row, contribution, batch)
    row_fill(row, values=values, contribution=contribution, input_hash=input_hash)
    row.save()
    statement_results_changed([row])
    return _run_row_settle(run_row) if run_row else False


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
    recomputes unchanged inputs; ``batch`` defers the run totals (see runs._run_totals_swap).
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
