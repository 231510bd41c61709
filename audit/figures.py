"""The stored statement F1, computed and stored by metrics, shown on audit's pages.

audit never imports metrics beyond the library. A statement card shows the run's stored
statement F1 with its state (pending, updating, failed) and the ground-truth export carries
it: metrics registers its reader here in ``MetricsConfig.ready`` and audit asks through it.
With no reader registered, cards show the F1 as pending and exports carry none.

Every other figure an audit page shows is audit's own: the review screen's disagreement
marker and the editor's item pairs run the library's matcher (``audit.selectors.disagreement``,
``audit.selectors.alignment``); each auditor's and discussion's agreement is stored on the
team page's rows (``audit.derived.team_figures.team_agreement_store``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class StoredResult:
    """A stored per-statement result, as audit pages show it."""

    status: str  # fresh / stale / failed
    values: dict[str, Any] | None
    computed_at: datetime | None = None
    error: str = ""


class StatementResultsReader(Protocol):
    def __call__(self, *, run_id: int, statement_ids: list[int]) -> dict[int, StoredResult]: ...


@dataclass
class _Readers:
    statement_f1: StatementResultsReader | None = None


_readers = _Readers()


def readers_register(*, statement_f1: StatementResultsReader) -> None:
    """Called once by the app that computes the figures (a second call replaces the first)."""
    _readers.statement_f1 = statement_f1


def statement_f1_results(*, run_id: int, statement_ids: list[int]) -> dict[int, StoredResult]:
    """The stored statement F1 of a run for these statements, by statement id."""
    reader = _readers.statement_f1
    return reader(run_id=run_id, statement_ids=statement_ids) if reader else {}
