"""Reading a stored comparison (``metrics.engine.comparison`` builds it, ``derived`` stores
it): its head without the lists of statements, or one list with the details of its statements
only. On PostgreSQL the database cuts the parts out of the stored row.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from metrics.models import MetricResult

LISTS = ("statements", "details")  # the parts of a stored comparison a reader takes one slice of
_HEAD_SQL = "SELECT r.\"values\" - 'statements' - 'details' FROM {table} AS r WHERE r.key = %s"
# One list (its path: statements, figure, direction) and the details of its statements only,
# with the row's state. The row's values are read out of their storage (decompressed) once,
# in the lateral subquery, and the figures are taken key by key: cutting the lists out with
# ``-`` copies the whole value twice.
_PART_SQL = """
SELECT r.id, r.input_hash, r.status, r.error, r.computed_at, r."values" IS NULL,
       COALESCE((SELECT jsonb_object_agg(k, v.whole -> k) FROM jsonb_object_keys(v.whole) AS k
                  WHERE k NOT IN ('statements', 'details')), '{{}}'::jsonb),
       v.whole #> %s::text[],
       (SELECT jsonb_object_agg(s ->> 'statement_id', v.details -> (s ->> 'statement_id'))
          FROM jsonb_array_elements(v.whole #> %s::text[]) AS s
         WHERE v.details ? (s ->> 'statement_id'))
  FROM {table} AS r,
       LATERAL (SELECT w.whole, w.whole -> 'details' AS details
                  FROM (SELECT r."values" || '{{}}'::jsonb AS whole OFFSET 0) AS w OFFSET 0) AS v
 WHERE r.key = %s
"""


def comparison_part(key: str, *, listed: tuple[str, str] | None = None) -> dict[str, Any] | None:
    """The stored comparison under ``key`` without its lists of statements, or with the one
    ``listed`` names (figure, direction) and the details of its statements only, in the shape
    of the whole (None when nothing is stored). A stored comparison holds the details of every
    statement of every list (hundreds of KB); a page shows one list. On PostgreSQL the database
    cuts the parts out of the row; elsewhere the row is read whole and cut here."""
    if listed is None:
        if connection.vendor != "postgresql":
            values = MetricResult.objects.filter(key=key).values_list("values", flat=True).first()
            return _cut(values, None)
        table = connection.ops.quote_name(MetricResult._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(_HEAD_SQL.format(table=table), [key])
            found = cursor.fetchone()
        return _json(found[0]) if found else None
    return comparison_part_read(key, listed=listed)[1]


def comparison_part_read(
    key: str, *, listed: tuple[str, str] | None = None
) -> tuple[MetricResult | None, dict[str, Any] | None]:
    """The stored row under ``key`` (without its values) and the part of them ``listed``
    names (``comparison_part``): one query on PostgreSQL when a list is named."""
    if listed is None:
        row = MetricResult.objects.filter(key=key).defer("values", "contribution").first()
        return row, comparison_part(key) if row else None
    if connection.vendor != "postgresql":
        row = MetricResult.objects.filter(key=key).defer("contribution").first()
        return row, _cut(row.values, listed) if row else None
    table = connection.ops.quote_name(MetricResult._meta.db_table)
    path = ["statements", *listed]
    with connection.cursor() as cursor:
        cursor.execute(_PART_SQL.format(table=table), [path, path, key])
        found = cursor.fetchone()
    if found is None:
        return None, None
    pk, hashed, status, error, computed_at = found[:5]
    row = MetricResult(
        pk=pk, key=key, input_hash=hashed, status=status, error=error, computed_at=computed_at
    )
    if found[5]:
        return row, None
    head, rows, details = (_json(part) for part in found[6:])
    part = {**head, "statements": {listed[0]: {listed[1]: rows or []}}, "details": details or {}}
    return row, part


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _cut(values: dict[str, Any] | None, listed: tuple[str, str] | None) -> dict[str, Any] | None:
    if values is None:
        return None
    head = {k: v for k, v in values.items() if k not in LISTS}
    if listed is None:
        return head
    figure, direction = listed
    rows = (values.get("statements") or {}).get(figure, {}).get(direction) or []
    wanted = {str(row["statement_id"]) for row in rows}
    details = {k: v for k, v in (values.get("details") or {}).items() if k in wanted}
    return {**head, "statements": {figure: {direction: rows}}, "details": details}
