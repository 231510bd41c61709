"""Writing many rows at once: new values into existing rows, and new rows.

Django's ``bulk_update`` builds a ``CASE WHEN pk = ...`` expression per field and row in
Python, and PostgreSQL's time for one such statement grows with the square of its rows. On PostgreSQL one UPDATE instead joins the
rows to a JSON document of their new values (``jsonb_to_recordset``), encoded once and sent
as one parameter. Elsewhere (SQLite) ``bulk_update`` in batches.

New rows go in with ``COPY`` on PostgreSQL (``rows_insert``): no SQL text of placeholders for
psycopg to parse and Django to compile value by value, and the server's fastest way in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import connection, connections, models

BATCH = 500


def rows_update(rows: Sequence[models.Model], fields: Sequence[str]) -> None:
    """Store these fields of these rows (each has its primary key), one statement on
    PostgreSQL."""
    if not rows:
        return
    model = type(rows[0])
    if connection.vendor != "postgresql":
        model._default_manager.bulk_update(rows, list(fields), batch_size=BATCH)
        return
    meta, quote = model._meta, connection.ops.quote_name
    wanted = set(fields)
    columns = [f for f in meta.concrete_fields if f.primary_key or f.name in wanted]
    # Plain data built here: no cycle check, no spaces (PostgreSQL parses it).
    document = json.dumps(
        [{f.column: _json_scalar(getattr(row, f.attname)) for f in columns} for row in rows],
        check_circular=False,
        separators=(",", ":"),
    )
    record = ", ".join(f"{quote(f.column)} {f.db_type(connection)}" for f in columns)
    assigned = ", ".join(
        f"{quote(f.column)} = v.{quote(f.column)}" for f in columns if not f.primary_key
    )
    pk = quote(meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} AS r SET {assigned} "
            f"FROM jsonb_to_recordset(%s::jsonb) AS v({record}) WHERE r.{pk} = v.{pk}",
            [document],
        )


def _json_scalar(value: Any) -> Any:
    """A field's value as the JSON record holds it: datetimes as ISO text (read back as
    timestamptz), everything else as it stands."""
    return value.isoformat() if isinstance(value, datetime) else value


def rows_insert(rows: Sequence[models.Model]) -> None:
    """Insert these new rows of one model as ``bulk_create`` does (no signals, no
    ``save()``), each given its primary key: on PostgreSQL one COPY, the keys drawn from the
    table's sequence first; elsewhere ``bulk_create`` in batches."""
    if not rows:
        return
    model = type(rows[0])
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(rows, batch_size=BATCH)
        return
    db = connections[connection.alias]  # not the proxy: its every attribute is a lookup
    meta, quote = model._meta, db.ops.quote_name
    missing = [row for row in rows if row.pk is None]
    with db.cursor() as cursor:
        if missing:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [quote(meta.db_table), meta.pk.column, len(missing)],
            )
            for row, (pk,) in zip(missing, cursor.fetchall(), strict=True):
                row.pk = pk
        fields = [f for f in meta.concrete_fields if not getattr(f, "generated", False)]
        columns = ", ".join(quote(f.column) for f in fields)
        plan = [(f, f.attname, _plain_type(f)) for f in fields]
        # The underlying psycopg cursor: Django's wrapper has no COPY (nor logs it).
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(_row_values(row, plan, db))
    for row in rows:
        row._state.adding, row._state.db = False, db.alias


# Django's own field classes whose database value is the Python value itself when it has this
# exact type (their preparation would give it back unchanged; any str for text): read from the
# row as it is.
_PLAIN_FIELDS: dict[type, type] = {
    kind: int
    for kind in (
        models.AutoField,
        models.BigAutoField,
        models.SmallAutoField,
        models.IntegerField,
        models.BigIntegerField,
        models.SmallIntegerField,
        models.PositiveIntegerField,
        models.PositiveBigIntegerField,
        models.PositiveSmallIntegerField,
    )
} | {models.CharField: str, models.TextField: str, models.BooleanField: bool}
_UNSET = object()


def _plain_type(field: models.Field) -> type | None:
    """The Python type a field's values are written as they are when they have it; None: every
    value is prepared as Django prepares it."""
    if type(field).pre_save is not models.Field.pre_save:
        return None  # e.g. auto_now
    if type(field) in (models.ForeignKey, models.OneToOneField):
        return _PLAIN_FIELDS.get(type(field.target_field))  # type: ignore[attr-defined]
    return _PLAIN_FIELDS.get(type(field))


def _row_values(row: models.Model, plan: list, db: Any) -> list[Any]:
    """A new row's values as ``bulk_create`` writes them."""
    state = row.__dict__
    values = []
    for field, attname, plain in plan:
        if plain is not None:
            value = state.get(attname, _UNSET)
            # Text fields keep any str as it is (a choice's enum member too), as Django does.
            if value is None or type(value) is plain or (plain is str and isinstance(value, str)):
                values.append(value)
                continue
        values.append(field.get_db_prep_save(field.pre_save(row, add=True), db))
    return values
