"""What follows a commit never turns a stored change into a failed request.

- ``after_commit(func)``: ``transaction.on_commit`` for the work that follows a change (marking
  results stale, queueing tasks, cache marks). If the database fails it (the connection died
  after the commit: a restarted server, a killed backend), the work is tried once more, on a
  new connection if the old one is dead. What still fails is logged (WARNING) and swallowed:
  the request answers with what was stored, and the sweep does the rest (audit's
  announcements stay stored until delivered: ``audit.signals``).
- ``reads_reconnect``: an execute wrapper (installed per request by the middleware) under
  which a read outside a transaction that finds its connection dead reconnects and runs
  once more, so a response read after the commit (a serializer, a refresh) is not lost either.
  Writes never run twice.

``settings.POST_COMMIT_RAISE``: errors other than the database's (a bug) still raise (the test
suite sets it, so a broken hook fails its test).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction

log = logging.getLogger(__name__)
CONNECTION_LOST = (OperationalError, InterfaceError)


def after_commit(func: Callable[[], Any], *, once: str = "") -> None:
    """Run ``func`` once the current transaction commits (at once outside one), never raising.
    ``once``: a key that registers the work only once per transaction (a cascade of thousands
    of rows marks stale once)."""
    if once and after_commit_registered(once):
        return

    def run() -> None:
        try:
            _with_one_reconnect(func)
        except Exception as exc:
            what = f"after the commit, {_name(func)} failed; the change is stored, the sweep "
            if _infrastructure(exc):
                log.warning("%sdoes the rest (%s: %s)", what, type(exc).__name__, exc)
                return
            if settings.POST_COMMIT_RAISE:
                raise
            log.exception("%sdoes the rest", what)

    functools.update_wrapper(run, func)  # named as the work it runs (logs, tests)
    run.once = once  # type: ignore[attr-defined]
    transaction.on_commit(run)


def after_commit_registered(once: str) -> bool:
    """Whether work with this ``once`` key waits for the current transaction's commit."""
    return any(getattr(hook[1], "once", None) == once for hook in connection.run_on_commit)


def _with_one_reconnect(func: Callable[[], Any]) -> None:
    """Run the work; after a database error (the work is idempotent: marks, queueing) run it
    once more, on a new connection if the old one died."""
    try:
        func()
    except CONNECTION_LOST:
        if connection.in_atomic_block:
            raise
        if not _usable(connection):
            connection.close()
        func()


def _usable(db: Any) -> bool:
    return db.connection is not None and db.is_usable()


def _infrastructure(exc: Exception) -> bool:
    # The broker's errors never get here (task_enqueue catches them), nor the cache's
    # (evalsite/cache.py fails open).
    return isinstance(exc, DatabaseError)


def _name(func: Callable[[], Any]) -> str:
    return getattr(func, "__qualname__", repr(func))


def reads_reconnect(execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
    """Run a query; a read outside a transaction whose connection died runs once more on a
    new connection (nothing was done on the dead one)."""
    try:
        return execute(sql, params, many, context)
    except CONNECTION_LOST:
        db = context["connection"]
        if many or db.in_atomic_block or not _is_read(sql) or _usable(db):
            raise
        log.warning("the database connection was lost; reading again on a new one")
        db.close()
        db.ensure_connection()
        context["cursor"].cursor = db.create_cursor()
        return execute(sql, params, many, context)


def _is_read(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"
