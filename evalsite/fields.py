"""Model fields shared by the apps."""

from __future__ import annotations

from django.db import models


class RowJSONField(models.JSONField):
    """A JSONField bulk-inserted as one placeholder per row.

    Django 5.2 bulk-inserts plain fields on PostgreSQL as UNNEST arrays, and psycopg escapes
    every quote of every JSON text in an array from Python: most of a bulk write's time when
    the rows carry payloads (a recompute's results, an import's extractions and codings).
    A field with ``get_placeholder`` opts the insert out of UNNEST; the SQL is otherwise the same.
    """

    def get_placeholder(self, value: object, compiler: object, connection: object) -> str:
        return "%s"
