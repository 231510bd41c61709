"""After a bulk write the planner's statistics are refreshed (evalsite/perf/planner.py): PostgreSQL
then plans for the rows that are there, not for the table it last analysed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.db import connection

from audit.models import Discussion, Speaker
from evalsite.perf import planner

pytestmark = pytest.mark.django_db


def _estimated_rows(model) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [model._meta.db_table])
        return cursor.fetchone()[0]


@pytest.fixture
def postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the planner's statistics are PostgreSQL's")


def _discussions(count: int) -> None:
    Discussion.objects.bulk_create(Discussion(summary=f"d{n}") for n in range(count))


def test_a_bulk_write_refreshes_the_tables_statistics(postgresql):
    _discussions(planner.BULK_ROWS)
    assert _estimated_rows(Discussion) < planner.BULK_ROWS  # never analysed with these rows

    assert planner.planner_statistics_refresh(models=[Discussion], written=planner.BULK_ROWS)

    # ANALYZE in the writing transaction counts its own rows.
    assert _estimated_rows(Discussion) == planner.BULK_ROWS


def test_a_small_write_leaves_the_statistics_to_autovacuum(postgresql):
    _discussions(planner.BULK_ROWS - 1)
    before = _estimated_rows(Discussion)

    assert not planner.planner_statistics_refresh(
        models=[Discussion], written=planner.BULK_ROWS - 1
    )

    assert _estimated_rows(Discussion) == before


def test_a_write_small_beside_the_table_leaves_the_statistics_to_autovacuum(
    postgresql, monkeypatch
):
    monkeypatch.setattr(planner, "BULK_ROWS", 10)
    _discussions(200)
    planner.planner_statistics_refresh(models=[Discussion])  # the planner knows 200 rows
    _discussions(19)

    assert not planner.planner_statistics_refresh(models=[Discussion], written=19)  # < 10 %
    assert _estimated_rows(Discussion) == 200
    assert planner.planner_statistics_refresh(models=[Discussion], written=20)
    assert _estimated_rows(Discussion) == 219


def test_without_models_or_a_count_every_table_is_refreshed(postgresql):
    _discussions(1200)
    Speaker.objects.bulk_create(
        Speaker(discussion=d, name="s") for d in Discussion.objects.all()[:1100]
    )

    assert planner.planner_statistics_refresh()

    assert (_estimated_rows(Discussion), _estimated_rows(Speaker)) == (1200, 1100)


def test_a_failed_refresh_is_logged_and_leaves_the_transaction_usable(postgresql, caplog):
    _discussions(planner.BULK_ROWS)
    gone = SimpleNamespace(_meta=SimpleNamespace(db_table="no_such_table"))

    assert not planner.planner_statistics_refresh(models=[gone])  # type: ignore[list-item]

    assert "no_such_table" in caplog.text
    assert Discussion.objects.count() == planner.BULK_ROWS  # the caller's work goes on


def test_other_databases_are_left_alone(monkeypatch):
    monkeypatch.setattr(connection, "vendor", "sqlite")
    monkeypatch.setattr(connection, "cursor", _no_query)

    assert not planner.planner_statistics_refresh(models=[Discussion])


def _no_query():
    raise AssertionError("no query on a database other than PostgreSQL")


def test_after_commit_a_bulk_write_is_refreshed_once_committed(
    monkeypatch, django_capture_on_commit_callbacks
):
    """A write below BULK_ROWS leaves no callback behind (an approval writes a row or two);
    a bulk one asks for its tables once the transaction commits."""
    asked: list[tuple[list[str], int]] = []
    monkeypatch.setattr(
        planner,
        "planner_statistics_refresh",
        lambda *, models, written: asked.append(([m.__name__ for m in models], written)),
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        planner.planner_statistics_after_commit(models=[Discussion], written=planner.BULK_ROWS - 1)
    assert callbacks == [] and asked == []

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        planner.planner_statistics_after_commit(
            models=(m for m in [Discussion, Speaker]), written=planner.BULK_ROWS
        )
        assert asked == []  # ANALYZE would lock the tables until the end of the transaction
    assert len(callbacks) == 1
    assert asked == [(["Discussion", "Speaker"], planner.BULK_ROWS)]
