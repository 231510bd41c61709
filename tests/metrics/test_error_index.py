"""The error index follows a run's results statement by statement: after random changes of its
statement results (rewritten, added, removed, reordered, recorded without a change, statements
deleted), the update leaves exactly the rows and totals a full rebuild writes; it reads only
the changes recorded since the last one, rewrites only those statements' rows, and a change
committed while it runs waits for the next update instead of being lost."""

from __future__ import annotations

import copy
import random
import threading
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test import TestCase

from audit.models import Feedback, Statement, history_purge
from audit.services.inputs import inputs_delete, statement_save
from metrics.engine import errors, services
from metrics.engine.derived import error_analysis_result_compute
from metrics.engine.errors import statement_results_changed
from metrics.engine.recompute import batches
from metrics.models import MetricResult, StatementError, StatementResultChange
from tests.factories import (
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
    UserFactory,
)
from tests.metrics.dashboard_rows import discussion_with_statements, statement_row
from tests.metrics.extraction_helpers import AI, GT_VARIANTS

pytestmark = pytest.mark.django_db

EVENT_KINDS = ("married", "birth", "moved", "death")
SARF_VALUES = ("up", "down", "none")
COUNTED = ("people_fn", "people_fp", "events_fn", "events_fp", "pair_bonds_fn", "pair_bonds_fp")


def _result(rng: random.Random, run: Any, statement: Statement) -> MetricResult:
    """A statement result with random error counts, event kinds and SARF pairs (some none),
    its change recorded as its worker records it."""
    counts = {kind: rng.choice((0, 0, 1, 2)) for kind in COUNTED}
    sarf = {
        variable: [[rng.choice(SARF_VALUES), rng.choice(SARF_VALUES)] for _ in range(2)]
        for variable in ("symptom", "anxiety")
        if rng.random() < 0.4
    }
    return statement_row(
        run,
        statement,
        people_tp=1,
        sarf=sarf,
        fn_event_kinds=tuple(rng.sample(EVENT_KINDS, rng.randint(0, 2))),
        fp_event_kinds=tuple(rng.sample(EVENT_KINDS, rng.randint(0, 1))),
        **counts,
    )


def _rows(run: Any) -> list[tuple]:
    fields = ("figure", "discussion_id", "statement_id", "order", "count")
    return sorted(StatementError.objects.filter(run=run).values_list(*fields))


def _stored(run: Any, full: bool = False) -> tuple[list[tuple], dict, list, int]:
    row = error_analysis_result_compute(run_id=run.pk, full=full)
    assert row is not None and row.status == MetricResult.Status.FRESH, row and row.error
    values = row.values
    return _rows(run), values["figures"], values["event_kinds"], values["indexed"]


def _results(run: Any) -> Any:
    return MetricResult.objects.filter(run=run, scope=MetricResult.Scope.STATEMENT)


def _removed(run: Any, statement: Statement) -> None:
    """A statement's result deleted, recorded as the worker that deletes it records it."""
    rows = list(_results(run).filter(statement=statement))
    statement_results_changed(rows)
    _results(run).filter(statement=statement).delete()


def _rewritten(rng: random.Random, run: Any, statement: Statement) -> None:
    _removed(run, statement)
    _result(rng, run, statement)


def _change(rng: random.Random, run: Any, statements: list[Statement]) -> set[int]:
    """A few random changes; returns the statements whose result (or place) changed."""
    changed: set[int] = set()
    for statement in rng.sample(statements, rng.randint(0, 3)):
        _rewritten(rng, run, statement)
        changed.add(statement.pk)
    for statement in rng.sample(statements, rng.randint(0, 1)):
        _removed(run, statement)
        changed.add(statement.pk)
    if rng.random() < 0.7:
        new = StatementFactory(discussion=rng.choice(statements).discussion, order=next(ORDERS))
        _result(rng, run, new)
        statements.append(new)
        changed.add(new.pk)
    for moved in rng.sample(statements, rng.randint(0, 1)):
        moved.order = next(ORDERS)
        # Its rows' order: recorded once the edit commits (audit's statements_edited).
        with TestCase.captureOnCommitCallbacks(execute=True):
            statement_save(statement=moved)
        changed.add(moved.pk)
    # Recorded, but nothing changed (a recompute that found the same figures): not rewritten.
    statement_results_changed(_results(run).filter(statement=rng.choice(statements)))
    return changed


ORDERS = iter(range(1000, 100_000))


def _rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The runs rebuilt whole from now on."""
    rebuilt: list[int] = []
    rebuild = errors._index_rebuild

    def counted(run: Any) -> Any:
        rebuilt.append(run.pk)
        return rebuild(run)

    monkeypatch.setattr(errors, "_index_rebuild", counted)
    return rebuilt


@pytest.mark.parametrize("seed", range(6))
def test_incremental_updates_give_the_rows_and_totals_of_a_full_rebuild(seed, monkeypatch):
    rng = random.Random(seed)
    run, other = ExtractionRunFactory(), ExtractionRunFactory()
    statements = [s for _ in range(3) for s in discussion_with_statements(10)[1]]
    for statement in statements:
        _result(rng, run, statement)
        _result(rng, other, statement)  # another run's index is left alone
    _stored(run)
    other_rows = _stored(other)[0]
    rebuilt = _rebuilds(monkeypatch)
    for _ in range(6):
        before = dict(StatementError.objects.filter(run=run).values_list("pk", "statement_id"))
        deleted = rng.random() < 0.2 and statements.pop(rng.randrange(len(statements)))
        if deleted:  # its results, rows and hashes go by cascade
            with history_purge():
                inputs_delete(rows=Statement.objects.filter(pk=deleted.pk))
        changed = _change(rng, run, statements)
        incremental = _stored(run)
        assert not StatementResultChange.objects.filter(run=run).exists()  # all consumed
        after = dict(StatementError.objects.filter(run=run).values_list("pk", "statement_id"))
        if not deleted:
            # Updated in place: only the changed statements' rows were rewritten.
            assert rebuilt == []
            assert {pk for pk, s in before.items() if s not in changed} <= after.keys()
        assert incremental == _stored(run, full=True)
        assert incremental[0] and incremental[1]
        rebuilt.clear()
    # Another run's rows are left alone (but for the deleted statements', gone by cascade).
    remaining = set(Statement.objects.values_list("pk", flat=True))
    assert _rows(other) == [row for row in other_rows if row[2] in remaining]


def test_the_update_reads_only_the_changed_statements(monkeypatch):
    rng = random.Random(5)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(20)
    for statement in statements:
        _result(rng, run, statement)
    _stored(run)
    read: list[Any] = []
    stamps = errors._stamps
    monkeypatch.setattr(
        errors, "_stamps", lambda run, ids=None: read.append(ids) or stamps(run, ids)
    )
    _rewritten(rng, run, statements[4])
    _stored(run)
    assert read == [[statements[4].pk]]
    read.clear()
    _stored(run)  # nothing changed since: nothing read
    assert read == [[]]


def test_a_change_nobody_recorded_is_not_seen():
    """The update trusts the recorded changes: a result written without its record is missed
    (every writer records its own, in its transaction), which the comparison with a full
    rebuild shows."""
    rng = random.Random(2)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(8)
    for statement in statements[1:]:
        _result(rng, run, statement)
    statement_row(run, statements[0], people_fn=2)
    _stored(run)
    _results(run).filter(statement=statements[0]).update(values={}, contribution={})
    assert _stored(run) != _stored(run, full=True)


@pytest.mark.django_db(transaction=True)
def test_a_change_committed_while_the_index_is_updated_waits_for_the_next_update(monkeypatch):
    """A worker writes a result and its change in a transaction that commits after the update
    read the changes: the update neither sees it nor deletes its record, so the next one
    rewrites the statement."""
    if connection.vendor != "postgresql":
        pytest.skip("two connections committing apart need PostgreSQL")
    rng = random.Random(11)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(8)
    for statement in statements:
        _result(rng, run, statement)
    first = _stored(run)
    written, commit = threading.Event(), threading.Event()

    def worker() -> None:
        try:
            with transaction.atomic():
                _rewritten(rng, run, statements[3])
                written.set()
                commit.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    assert written.wait(10)
    read = errors._changes_read

    def read_then_commit(run: Any) -> errors.Changes:
        changes = read(run)
        commit.set()
        thread.join(10)  # committed before this update reads any result or deletes a change
        return changes

    monkeypatch.setattr(errors, "_changes_read", read_then_commit)
    assert _stored(run) == first  # the update ran before the change (for it)
    monkeypatch.undo()
    waiting = StatementResultChange.objects.filter(run=run).values_list("statement_id", flat=True)
    assert set(waiting) == {statements[3].pk}  # its removal and its new result
    assert _stored(run) == _stored(run, full=True) != first


def test_a_deleted_statement_takes_its_part_of_the_totals_with_it(monkeypatch):
    """Deleting a statement deletes its rows and hash with it (cascade): the count of hashes
    no longer matches the totals', which are rebuilt rather than kept with its counts."""
    rng = random.Random(7)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(8)
    for statement in statements:
        _result(rng, run, statement)
    _stored(run)
    rebuilt = _rebuilds(monkeypatch)
    with history_purge():
        inputs_delete(rows=Statement.objects.filter(pk__in=[s.pk for s in statements[:2]]))
    assert _stored(run) == _stored(run, full=True)
    assert rebuilt == [run.pk, run.pk]


def test_totals_that_disagree_with_the_index_are_rebuilt(monkeypatch):
    rng = random.Random(3)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(8)
    for statement in statements[1:]:
        _result(rng, run, statement)
    statement_row(run, statements[0], people_fn=1)
    _stored(run)
    analysis = MetricResult.objects.get(family="error_analysis", run=run)
    analysis.values = {**analysis.values, "figures": {}}
    analysis.save(update_fields=["values"])
    _removed(run, statements[0])
    statement_row(run, statements[0], people_fn=3)
    rebuilt = _rebuilds(monkeypatch)
    incremental = _stored(run)
    assert rebuilt == [run.pk] and incremental == _stored(run, full=True)


def test_an_analysis_of_another_code_version_is_rebuilt(monkeypatch):
    rng = random.Random(4)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(6)
    for statement in statements:
        _result(rng, run, statement)
    _stored(run)
    MetricResult.objects.filter(family="error_analysis", run=run).update(code_version="old")
    rebuilt = _rebuilds(monkeypatch)
    _stored(run)
    assert rebuilt == [run.pk]


def _world(run: Any, n: int) -> list[Statement]:
    """Statements with an extraction in ``run`` and approved ground truth of several kinds."""
    _, statements = discussion_with_statements(n)
    for statement in statements:
        ExtractionFactory(statement=statement, run=run, pdp_deltas=copy.deepcopy(AI))
        FeedbackFactory(
            statement=statement,
            auditor=UserFactory(),
            status=Feedback.Status.APPROVED,
            edited_extraction=copy.deepcopy(GT_VARIANTS[statement.order % len(GT_VARIANTS)]),
        )
    return statements


def _ground_truth_changed(statement: Statement, variant: int) -> None:
    Feedback.objects.filter(statement=statement).update(
        edited_extraction=copy.deepcopy(GT_VARIANTS[variant]), version=F("version") + 1
    )


def test_the_workers_that_write_results_record_their_changes():
    """Through the real writers: a statement's recompute (new figures, and its result removed
    when its ground truth is no longer approved) and a recompute batch."""
    run = ExtractionRunFactory()
    statements = _world(run, 12)
    for statement in statements:
        services.statement_result_compute(statement_id=statement.pk, run_id=run.pk)
    _stored(run)
    _ground_truth_changed(statements[0], 2)
    Feedback.objects.filter(statement=statements[1]).update(status=Feedback.Status.SUBMITTED)
    for statement in statements[:2]:
        services.statement_result_compute(statement_id=statement.pk, run_id=run.pk)
    assert _stored(run) == _stored(run, full=True)
    for statement, variant in ((statements[2], 3), (statements[3], 1)):
        _ground_truth_changed(statement, variant)
    services.results_mark_stale(statement_ids=[s.pk for s in statements[2:4]], queue_tasks=False)
    scope = MetricResult.Scope.STATEMENT
    batches._batch_compute([(scope, s.pk, run.pk) for s in statements[2:4]], force=False)
    assert StatementResultChange.objects.filter(run=run).count() == 2
    incremental = _stored(run)
    assert incremental == _stored(run, full=True)
    assert incremental[3] == 11


def test_a_rebuild_asks_for_the_planner_statistics_of_its_tables(
    planner_refreshes, django_capture_on_commit_callbacks
):
    rng = random.Random(9)
    run = ExtractionRunFactory()
    statements = discussion_with_statements(7)[1]
    for statement in statements:
        _result(rng, run, statement)
    with django_capture_on_commit_callbacks(execute=True):
        _stored(run, full=True)

    assert planner_refreshes == [(["StatementError", "StatementPiece"], len(statements))]
