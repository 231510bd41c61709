"""Figures about a statement that are computed outside audit, shown on audit pages.

audit never imports metrics beyond the library. A statement card shows the stored statement
F1, the review page marks a statement whose auditors disagree, and the team page shows each
auditor's agreement (inter-auditor family); metrics provides them. This module is the
extension point between them: metrics registers its readers here in ``MetricsConfig.ready``
and views ask through it before rendering. With no reader registered, pages show no figures.
The editor's item pairs are audit's own: ``audit.selectors.alignment`` runs the library's
matcher.
"""

from __future__ import annotations

from collections.abc import Callable
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


# None when fewer than two auditors coded the statement or they all agree; else
# {"f1", "n_auditors", "pairs": [{"auditor_a", "auditor_b", "f1"}]}.
DisagreementReader = Callable[..., "dict[str, Any] | None"]

# Per entity kind, the (AI item id, coded item id) pairs the extraction matcher makes between
# an AI payload and a coding: called as reader(ai=..., coded=...).


@dataclass(frozen=True)
class AuditorAgreement:
    """One auditor's agreement from the stored inter-auditor result (None: not measured)."""

    with_ground_truth: float | None  # mean F1 of their coding against approved ground truth
    with_coders: float | None  # mean symmetric F1 with other auditors on shared statements
    status: str = "fresh"  # of the stored result: fresh / stale / failed


# {username: AuditorAgreement}
AgreementReader = Callable[[], "dict[str, AuditorAgreement]"]
# {discussion id: AuditorAgreement}: the same two figures over the discussion's codings
DiscussionAgreementReader = Callable[[], "dict[int, AuditorAgreement]"]


@dataclass
class _Readers:
    statement_f1: StatementResultsReader | None = None
    disagreement: DisagreementReader | None = None
    agreement: AgreementReader | None = None
    discussion_agreement: DiscussionAgreementReader | None = None


_readers = _Readers()


def readers_register(
    *,
    statement_f1: StatementResultsReader,
    disagreement: DisagreementReader,
    agreement: AgreementReader | None = None,
    discussion_agreement: DiscussionAgreementReader | None = None,
) -> None:
    """Called once by the app that computes the figures (a second call replaces the first)."""
    _readers.statement_f1 = statement_f1
    _readers.disagreement = disagreement
    _readers.agreement = agreement
    _readers.discussion_agreement = discussion_agreement


def statement_f1_results(*, run_id: int, statement_ids: list[int]) -> dict[int, StoredResult]:
    """The stored statement F1 of a run for these statements, by statement id."""
    reader = _readers.statement_f1
    return reader(run_id=run_id, statement_ids=statement_ids) if reader else {}


def statement_disagreement(*, statement_id: int) -> dict[str, Any] | None:
    reader = _readers.disagreement
    return reader(statement_id=statement_id) if reader else None


def auditor_agreement() -> dict[str, AuditorAgreement]:
    """Each auditor's agreement with approved ground truth and with other coders, by username
    (the team page); empty when nothing is stored or no reader is registered."""
    reader = _readers.agreement
    return reader() if reader else {}


def discussion_agreement() -> dict[int, AuditorAgreement]:
    """Per discussion: its codings' agreement with the approved ground truth and between
    coders (the team page); empty when nothing is stored or no reader is registered."""
    reader = _readers.discussion_agreement
    return reader() if reader else {}
