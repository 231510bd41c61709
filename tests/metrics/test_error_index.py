"""The error index follows a run's results statement by statement: after random changes of its
statement results (rewritten, added, removed, reordered, statements deleted), the incremental
update leaves exactly the rows and totals a full rebuild writes, and it rewrites only the
changed statements' rows."""

from __future__ import annotations

import random
from typing import Any

import pytest

from audit.models import Statement
from metrics import errors
from metrics.derived import error_analysis_result_compute
from metrics.models import MetricResult, StatementError
from tests.factories import ExtractionRunFactory, StatementFactory
from tests.metrics.dashboard_rows import discussion_with_statements, statement_row

pytestmark = pytest.mark.django_db

EVENT_KINDS = ("married", "birth", "moved", "death")
SARF_VALUES = ("up", "down", "none")
COUNTED = ("people_fn", "people_fp", "events_fn", "events_fp", "pair_bonds_fn", "pair_bonds_fp")


def _result(rng: random.Random, run: Any, statement: Statement) -> MetricResult:
    """A statement result with random error counts, event kinds and SARF pairs (some none)."""
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


def _stored(run: Any, full: bool = False) -> tuple[list[tuple], dict, list]:
    row = error_analysis_result_compute(run_id=run.pk, full=full)
    assert row is not None and row.status == MetricResult.Status.FRESH, row and row.error
    return _rows(run), row.values["figures"], row.values["event_kinds"]


def _results(run: Any) -> Any:
    return MetricResult.objects.filter(run=run, scope=MetricResult.Scope.STATEMENT)


def _change(rng: random.Random, run: Any, statements: list[Statement]) -> set[int]:
    """A few random changes; returns the statements whose result changed."""
    changed: set[int] = set()
    for statement in rng.sample(statements, 3):  # results rewritten
        _results(run).filter(statement=statement).delete()
        _result(rng, run, statement)
        changed.add(statement.pk)
    gone = rng.choice(statements)  # a result removed
    _results(run).filter(statement=gone).delete()
    changed.add(gone.pk)
    new = StatementFactory(discussion=statements[0].discussion, order=100 + len(statements))
    _result(rng, run, new)  # a result added
    statements.append(new)
    moved = rng.choice(statements)  # a statement moved
    moved.order = 1000 + len(statements)
    moved.save(update_fields=["order"])
    changed |= {new.pk, moved.pk}
    return changed


@pytest.mark.parametrize("seed", range(5))
def test_incremental_updates_give_the_rows_and_totals_of_a_full_rebuild(seed):
    rng = random.Random(seed)
    run, other = ExtractionRunFactory(), ExtractionRunFactory()
    statements = [s for _ in range(3) for s in discussion_with_statements(10)[1]]
    for statement in statements:
        _result(rng, run, statement)
        _result(rng, other, statement)  # another run's index is left alone
    _stored(run)
    other_rows = _stored(other)[0]
    for _ in range(4):
        before = dict(StatementError.objects.filter(run=run).values_list("pk", "statement_id"))
        changed = _change(rng, run, statements)
        incremental = _stored(run)
        after = dict(StatementError.objects.filter(run=run).values_list("pk", "statement_id"))
        # Only the changed statements' rows were rewritten: the others kept theirs.
        assert {pk for pk, s in before.items() if s not in changed} <= after.keys()
        assert incremental == _stored(run, full=True)
        assert incremental[0] and incremental[1]
    assert _rows(other) == other_rows


def test_a_deleted_statement_takes_its_part_of_the_totals_with_it():
    """Deleting a statement deletes its rows and hash with it (cascade): the totals are rebuilt
    rather than kept with its counts."""
    rng = random.Random(7)
    run = ExtractionRunFactory()
    _, statements = discussion_with_statements(8)
    for statement in statements:
        _result(rng, run, statement)
    _stored(run)
    Statement.objects.filter(pk__in=[s.pk for s in statements[:2]]).delete()
    assert _stored(run) == _stored(run, full=True)


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
    _results(run).filter(statement=statements[0]).delete()
    statement_row(run, statements[0], people_fn=3)
    rebuilds: list[int] = []
    rebuild = errors._index_rebuild
    monkeypatch.setattr(
        errors, "_index_rebuild", lambda run, diff: rebuilds.append(run.pk) or rebuild(run, diff)
    )
    incremental = _stored(run)
    assert rebuilds == [run.pk] and incremental == _stored(run, full=True)
