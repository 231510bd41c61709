"""Writing many new rows at once.

New rows go in with ``COPY`` on PostgreSQL (``rows_insert``): no SQL text of placeholders for
psycopg to parse and Django to compile value by value, and the server's fastest way in. Rows
that are many and plain (an import's) can be given as their values (``values_insert``), with no
model instance built for each, a JSON payload stored twice encoded once (``JsonText``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection, connections, models
from django.utils import timezone

BATCH = 500


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
            for row, pk in zip(missing, _keys_drawn(cursor, meta, len(missing)), strict=True):
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


def _keys_drawn(cursor: Any, meta: Any, n: int) -> list[int]:
    """``n`` new primary keys from the table's sequence (named once, not once per key)."""
    cursor.execute(
        "WITH s AS MATERIALIZED (SELECT pg_get_serial_sequence(%s, %s)::regclass AS seq) "
        "SELECT nextval(s.seq) FROM s, generate_series(1, %s)",
        [connection.ops.quote_name(meta.db_table), meta.pk.column, n],
    )
    return [key for (key,) in cursor.fetchall()]


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


class JsonText(str):
    """A JSON field's value given to ``values_insert`` as its JSON text, written as it stands."""


def json_text(value: Any) -> JsonText:
    """A JSON field's value encoded once, to be written in more than one row."""
    return JsonText(json.dumps(value, separators=(",", ":"), check_circular=False))


def values_insert(
    model: type[models.Model], rows: Sequence[dict[str, Any]], *, now: datetime | None = None
) -> None:
    """Insert new rows of ``model`` given as their values by attname (``statement_id``), every
    row with the same keys, as ``bulk_create`` would insert instances of them (no signals, no
    ``save()``): the fields not given take their defaults, auto_now(_add) ones ``now`` (by
    default the time of the call); each row is given its primary key (``row["id"]``). A JSON field's value is
    encoded here unless given as JsonText. On PostgreSQL one COPY, the keys drawn from the
    table's sequence first; elsewhere ``bulk_create`` of the instances."""
    if not rows:
        return
    meta = model._meta
    pk = meta.pk.attname
    if connection.vendor != "postgresql":
        instances = [model(**{k: _decoded(v) for k, v in row.items()}) for row in rows]
        model._default_manager.bulk_create(instances, batch_size=BATCH)
        for row, instance in zip(rows, instances, strict=True):
            row[pk] = instance.pk
        return
    db = connections[connection.alias]
    fields = [f for f in meta.concrete_fields if not getattr(f, "generated", False)]
    given = {*rows[0], pk}
    now = now or timezone.now()
    plan = [_value_plan(field, given, now, db) for field in fields]
    quote = db.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    with db.cursor() as cursor:
        for row, key in zip(rows, _keys_drawn(cursor, meta, len(rows)), strict=True):
            row[pk] = key
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([value(row) for value in plan])


def _decoded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, JsonText) else value


def _value_plan(
    field: models.Field, given: set[str], now: datetime, db: Any
) -> Callable[[dict[str, Any]], Any]:
    """How a row's value of ``field`` is written: as given (prepared as Django prepares it
    unless it is plain), else the field's default, or ``now`` for a time set on insert."""
    attname = field.attname
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        stamp = field.get_db_prep_save(now, db)
        return lambda row: stamp
    # A date or time field's pre_save only sets the times above; another's decides the value.
    if type(field).pre_save is not models.Field.pre_save and not hasattr(field, "auto_now"):
        raise TypeError(f"values_insert cannot set {field} (its pre_save decides its value)")
    if attname not in given:
        if field.has_default() and callable(field.default):
            return lambda row: _prepared(field, field.get_default(), db)
        default = _prepared(field, field.get_default(), db)
        return lambda row: default
    plain = _plain_type(field)
    if isinstance(field, models.JSONField):
        return lambda row: _prepared(field, row[attname], db)
    if plain is str:
        return lambda row: (
            value if isinstance(value := row[attname], str) else _prepared(field, value, db)
        )
    if plain is not None:
        return lambda row: (
            value
            if type(value := row[attname]) is plain or value is None
            else _prepared(field, value, db)
        )
    return lambda row: _prepared(field, row[attname], db)


def _prepared(field: models.Field, value: Any, db: Any) -> Any:
    """A value as ``bulk_create`` writes it; a JSON field's as its text, once."""
    if isinstance(field, models.JSONField):
        if value is None or isinstance(value, JsonText):
            return value
        return json.dumps(value, cls=field.encoder, separators=(",", ":"))
    return field.get_db_prep_save(value, db)
