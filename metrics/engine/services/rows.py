"""The extraction family's result rows: their keys, the hash of their inputs, the query of
them all, and how one is created, filled, confirmed fresh or recorded as failed."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from django.utils import timezone

from evalsite.match_settings import match_settings
from metrics import results
from metrics.models import MetricResult
from metrics.registry import EXTRACTION, FAMILIES
from metrics.results import input_hash, result_key, row_locked_or_created, system_key

CODE_VERSION = FAMILIES[EXTRACTION].code_version  # bump it in the registry

Scope = MetricResult.Scope
Status = MetricResult.Status
CHILD_SCOPES = (Scope.STATEMENT, Scope.DISCUSSION)


def statement_key(*, run_id: int, discussion_id: int | None, statement_id: int) -> str:
    ids = {"run_id": run_id, "discussion_id": discussion_id, "statement_id": statement_id}
    return result_key(EXTRACTION, Scope.STATEMENT, **ids)


def discussion_key(*, run_id: int, discussion_id: int) -> str:
    return result_key(EXTRACTION, Scope.DISCUSSION, run_id=run_id, discussion_id=discussion_id)


SYSTEM_KEY = system_key(EXTRACTION)


def _hash(inputs: Any) -> str:
    return input_hash(inputs, code_version=CODE_VERSION, settings=match_settings().to_dict())


def extraction_results() -> Any:
    return MetricResult.objects.filter(family=EXTRACTION)


def _locked_or_created(key: str, *, scope: str, **ids: Any) -> MetricResult:
    """A placeholder waits for its computation: stale since now until stored."""
    return row_locked_or_created(
        key=key, family=EXTRACTION, scope=scope, stale_since=timezone.now(), **ids
    )


def row_is_current(row: MetricResult, input_hash: str, force: bool) -> bool:
    return (
        not force
        and row.input_hash == input_hash
        and row.computed_at is not None
        and row.status != Status.FAILED
    )


def row_fill(row: MetricResult, *, values: dict, contribution: dict, input_hash: str) -> None:
    row.values, row.contribution, row.input_hash = values, contribution, input_hash
    row_mark_fresh(row)
    row.error, row.computed_at = "", timezone.now()


def row_mark_fresh(row: MetricResult) -> None:
    # Same hash means same settings and code; recording them again keeps equal-but-differently
    # written settings from being found outdated again (results_mark_outdated).
    row.status, row.stale_since = Status.FRESH, None
    row.match_settings, row.code_version = match_settings().to_dict(), CODE_VERSION


CONFIRMED_FIELDS = ["status", "stale_since", "match_settings", "code_version"]
STORED_FIELDS = [*CONFIRMED_FIELDS, "values", "contribution", "input_hash", "error", "computed_at"]


def failure_recorded(
    *,
    scope: str,
    run_id: int | None = None,
    statement_id: int | None = None,
    discussion_id: int | None = None,
) -> AbstractContextManager[None]:
    """A bug in one extraction result becomes a failed row, and its run and system rows show
    it (``metrics.results.failure_recorded``); a missing row is created stale since now."""
    return results.failure_recorded(
        family=EXTRACTION,
        scope=scope,
        code_version=CODE_VERSION,
        settings=match_settings().to_dict(),
        run_id=run_id,
        discussion_id=discussion_id,
        statement_id=statement_id,
        stale_now=True,
    )
