"""Stored extraction-F1 result rows for the dashboard and comparison tests.

Statement and discussion rows are written directly with the engine's own result and
contribution shapes (a statement row's change recorded for the error index, as its worker
does); the run and system rows are then settled by the real service
(`run_result_compute(rebuild=True)`), exactly as a worker would leave them.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from audit.models import Discussion, ExtractionRun, Feedback, Statement
from metrics.engine.errors import statement_results_changed
from metrics.engine.services import EXTRACTION, discussion_key, run_result_compute, statement_key
from metrics.families.extraction import (
    CumulativeF1Metrics,
    StatementF1Metrics,
    statement_contribution,
)
from metrics.models import MetricResult
from metrics.results import run_key
from tests.factories import DiscussionFactory, FeedbackFactory, StatementFactory, UserFactory


def approve(statement: Statement, auditor: Any = None) -> Feedback:
    return FeedbackFactory(
        statement=statement,
        auditor=auditor or UserFactory(),
        status=Feedback.Status.APPROVED,
    )


def statement_row(
    run: ExtractionRun,
    statement: Statement,
    *,
    status: str = MetricResult.Status.FRESH,
    sarf: dict[str, list[list[str]]] | None = None,
    fn_event_kinds: tuple[str, ...] = (),
    fp_event_kinds: tuple[str, ...] = (),
    **counts: int,
) -> MetricResult:
    """A statement result with the given TP/FP/FN counts (people_tp=2, events_fn=1, ...)."""
    metrics = StatementF1Metrics(
        statement_id=statement.pk,
        discussion_id=statement.discussion_id,
        trivial=not any(counts.values()),
        exact_match=not any(v for k, v in counts.items() if not k.endswith("_tp")),
        sarf_pairs=sarf or {},
        fn_event_kinds=list(fn_event_kinds),
        fp_event_kinds=list(fp_event_kinds),
        **_with_f1(counts),
    )
    row = MetricResult.objects.create(
        key=statement_key(
            run_id=run.pk, discussion_id=statement.discussion_id, statement_id=statement.pk
        ),
        family=EXTRACTION,
        scope=MetricResult.Scope.STATEMENT,
        run=run,
        discussion_id=statement.discussion_id,
        statement=statement,
        values=metrics.to_dict(),
        contribution=statement_contribution(metrics),
        status=status,
        computed_at=timezone.now(),
    )
    statement_results_changed([row])  # as the worker that writes it records it
    return row


def discussion_row(
    run: ExtractionRun,
    discussion: Discussion,
    *,
    statement_count: int = 1,
    status: str = MetricResult.Status.FRESH,
    sarf: dict[str, list[list[str]]] | None = None,
    **counts: int,
) -> MetricResult:
    metrics = CumulativeF1Metrics(
        discussion_id=discussion.pk,
        statement_count=statement_count,
        trivial=not any(counts.values()),
        exact_match=False,
        sarf_pairs=sarf or {},
        **_with_f1(counts),
    )
    return MetricResult.objects.create(
        key=discussion_key(run_id=run.pk, discussion_id=discussion.pk),
        family=EXTRACTION,
        scope=MetricResult.Scope.DISCUSSION,
        run=run,
        discussion=discussion,
        values=metrics.to_dict(),
        contribution=statement_contribution(metrics),
        status=status,
        computed_at=timezone.now(),
    )


def _f1(tp: int, fp: int, fn: int) -> float:
    return 1.0 if 2 * tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)


def _with_f1(counts: dict[str, int]) -> dict[str, Any]:
    """The counts plus the per-type and aggregate F1 they imply."""
    out: dict[str, Any] = dict(counts)
    totals = [0, 0, 0]
    for entity in ("people", "events", "pair_bonds"):
        entity_counts = [counts.get(f"{entity}_{c}", 0) for c in ("tp", "fp", "fn")]
        out[f"{entity}_f1"] = _f1(*entity_counts)
        totals = [a + b for a, b in zip(totals, entity_counts, strict=True)]
    out["aggregate_micro_f1"] = _f1(*totals)
    return out


def settle(run: ExtractionRun) -> MetricResult:
    """The run row (and the system trend) from the rows stored so far, by the real service."""
    return run_result_compute(run_id=run.pk, rebuild=True)


def run_result(run: ExtractionRun) -> MetricResult:
    return MetricResult.objects.get(key=run_key(EXTRACTION, run.pk))


def discussion_with_statements(n: int, summary: str = "") -> tuple[Discussion, list[Statement]]:
    discussion = DiscussionFactory(**({"summary": summary} if summary else {}))
    return discussion, [StatementFactory(discussion=discussion, order=i) for i in range(n)]
