"""Index kinds both apps use."""

from __future__ import annotations

from django.db import models
from django.db.models import OrderBy


class NullsLastIndex(models.Index):
    """An index over an order with NULLS LAST where the database can hold one (PostgreSQL).
    SQLite, the embedded default of `make run`, refuses the modifier in an index: there the
    same index is made without it (a sort it serves less well, on demo-sized tables)."""

    def create_sql(self, model, schema_editor, using="", **kwargs):
        if schema_editor.connection.vendor == "postgresql":
            return super().create_sql(model, schema_editor, using, **kwargs)
        return self._without_nulls_order().create_sql(model, schema_editor, using, **kwargs)

    def _without_nulls_order(self) -> models.Index:
        expressions = [
            OrderBy(e.expression, descending=e.descending) if isinstance(e, OrderBy) else e
            for e in self.expressions
        ]
        return models.Index(*expressions, condition=self.condition, name=self.name)
