"""Timestamps read from PostgreSQL with psycopg's compiled parser.

Django registers its own loader for ``timestamptz`` (to pin the result's time zone), derived
from psycopg's pure-Python one, so every timestamp a query returns is parsed in Python (the
slow worker reads every stamp of a run on each approval). This loader keeps Django's contract (the value in the
connection's time zone, the same ``tzinfo``) and parses with the compiled loader psycopg ships
in ``psycopg[binary]``. It is registered only where that holds: PostgreSQL through psycopg 3,
the compiled loader present, and the session in UTC (``USE_TZ``, as Django sets it).
"""

from __future__ import annotations

import datetime
import functools
from typing import Any

UTC = datetime.UTC


def compiled_loader() -> type | None:
    """psycopg's compiled ``timestamptz`` loader, or None (no psycopg 3 or no binary build)."""
    try:
        import psycopg
        from psycopg.types.datetime import TimestamptzLoader
    except ImportError:
        return None
    found = psycopg.adapters._get_optimised(TimestamptzLoader)  # documented in psycopg #1273
    return None if found is TimestamptzLoader else found


@functools.cache
def loader_class(compiled: type) -> type:
    """Django's loader with its parsing done by ``compiled``: Django compares the class's
    ``timezone`` with the connection's before each cursor, so it stays a subclass."""
    from django.db.backends.postgresql.psycopg_any import (  # type: ignore[import-untyped]
        BaseTzLoader,  # (django-stubs has no stub for it)
    )

    class CompiledUtcLoader(BaseTzLoader):
        timezone = UTC

        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self.parse = compiled(oid, context).load

        def load(self, data: Any) -> datetime.datetime:
            return self.parse(data).replace(tzinfo=UTC)

    return CompiledUtcLoader


def compiled_timestamps_register(sender: Any, connection: Any, **kwargs: Any) -> None:
    """On each new connection (``connection_created``): read timestamps with the compiled
    loader where the session's time zone is UTC; otherwise leave Django's."""
    if connection.vendor != "postgresql" or connection.timezone != UTC:
        return
    raw = connection.connection
    if not hasattr(raw, "adapters") or raw.info.parameter_status("TimeZone") != "UTC":
        return
    compiled = compiled_loader()
    if compiled is not None:
        raw.adapters.register_loader("timestamptz", loader_class(compiled))
