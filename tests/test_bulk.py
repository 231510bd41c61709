"""rows_insert and values_insert write new rows as bulk_create writes them; review triage writes
only the scores that changed."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.models import Feedback, TriageSettings, TriageStatement
from audit.services.triage import triage_statements_apply
from evalsite.perf.bulk import json_text, rows_insert, values_insert
from tests.factories import ExtractionRunFactory, StatementFactory, UserFactory

pytestmark = pytest.mark.django_db


def _scored(n: int) -> list[TriageStatement]:
    run = ExtractionRunFactory()
    return [
        TriageStatement.objects.create(run=run, statement=StatementFactory(), confidence=0.5)
        for _ in range(n)
    ]


def test_review_triage_writes_only_the_scores_that_changed():
    rows = _scored(4)
    TriageStatement.objects.all().update(run=rows[0].run)
    TriageSettings.objects.create(run=rows[0].run, enabled=True, qa_rate=0.0)
    scores = {r.statement_id: 0.5 for r in rows}
    triage_statements_apply(run_id=rows[0].run_id, scores=scores, accepted=[], threshold=None)
    written = dict(TriageStatement.objects.values_list("pk", "updated_at"))

    moved = {**scores, rows[1].statement_id: 0.9}
    triage_statements_apply(run_id=rows[0].run_id, scores=moved, accepted=[], threshold=None)

    now = dict(TriageStatement.objects.values_list("pk", "updated_at"))
    assert [now[r.pk] == written[r.pk] for r in rows] == [True, False, True, True]
    assert TriageStatement.objects.get(pk=rows[1].pk).confidence == 0.9


def _codings(statements: list) -> list:
    auditor = UserFactory()
    return [
        Feedback(
            statement=statement,
            auditor=auditor,
            edited_extraction={"people": [{"id": -1, "name": f'O\'Neil "{n}" \u00e9 \\ end'}]},
            status=Feedback.Status.SUBMITTED,
            comment="tab\there, line\nthere, NULL \\N",
        )
        for n, statement in enumerate(statements)
    ]


def test_new_rows_are_inserted_as_bulk_create_inserts_them():
    """Every column as bulk_create writes it (defaults, times set on insert, JSON, text that
    COPY must escape), each row given its key; one query for the keys and the COPY."""
    statements = [StatementFactory() for _ in range(3)]
    expected = Feedback.objects.bulk_create(_codings(statements))
    copied = _codings(statements)
    with CaptureQueriesContext(connection) as seen:
        rows_insert(copied)
    assert all(row.pk and not row._state.adding for row in copied)
    if connection.vendor == "postgresql":
        assert len(seen.captured_queries) == 1  # the keys (COPY is not logged)
    skip = {"id", "auditor", "created_at", "updated_at"}
    fields = [f.attname for f in Feedback._meta.concrete_fields if f.name not in skip]
    stored = {row.pk: row for row in Feedback.objects.all()}
    for before, after in zip(expected, copied, strict=True):
        old, new = stored[before.pk], stored[after.pk]
        assert [getattr(new, f) for f in fields] == [getattr(old, f) for f in fields]
        assert new.created_at and new.updated_at and new.created_at >= old.created_at
    assert rows_insert([]) is None


def test_values_of_another_type_are_prepared_as_django_prepares_them():
    """Plain values go in as they are; others (a flag in a number column, a lazy text, a key
    given as text) as bulk_create would write them."""
    from django.utils.functional import lazy

    row = _codings([StatementFactory()])[0]
    row.version, row.comment = True, lazy(lambda: "noted", str)()
    row.auditor_id = str(row.auditor_id)
    rows_insert([row])
    stored = Feedback.objects.get(pk=row.pk)
    assert (stored.version, stored.comment, stored.auditor_id) == (1, "noted", int(row.auditor_id))


def test_rows_given_as_values_are_inserted_as_bulk_create_inserts_them():
    """values_insert: the same columns as bulk_create of the instances (defaults, times set
    on insert, JSON given as data or as its text, text that COPY must escape), each row given
    its key."""
    statements = [StatementFactory() for _ in range(3)]
    expected = Feedback.objects.bulk_create(_codings(statements))
    rows = [
        {
            "statement_id": row.statement_id,
            "auditor_id": row.auditor_id,
            "edited_extraction": json_text(row.edited_extraction) if n else row.edited_extraction,
            "status": row.status,
            "comment": row.comment,
            "approved_at": timezone.now() if n == 2 else None,
        }
        for n, row in enumerate(_codings(statements))
    ]
    with CaptureQueriesContext(connection) as seen:
        values_insert(Feedback, rows)
    if connection.vendor == "postgresql":
        assert len(seen.captured_queries) == 1  # the keys (COPY is not logged)
    skip = {"id", "auditor", "created_at", "updated_at", "approved_at"}
    fields = [f.attname for f in Feedback._meta.concrete_fields if f.name not in skip]
    stored = {row.pk: row for row in Feedback.objects.all()}
    for before, after in zip(expected, rows, strict=True):
        old, new = stored[before.pk], stored[after["id"]]
        assert [getattr(new, f) for f in fields] == [getattr(old, f) for f in fields]
        assert new.created_at and new.updated_at and new.created_at >= old.created_at
        assert new.approved_at == after["approved_at"]
    assert values_insert(Feedback, []) is None
