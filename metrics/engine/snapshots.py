"""A run's extraction-F1 figures on a frozen ground-truth snapshot: computed once, stored.

Live results (family ``extraction``) follow ground truth as it changes. Results on a snapshot
(family ``extraction_snapshot``, ``MetricResult.snapshot`` set) read the snapshot's codings
instead, which never change, so nothing in ground truth makes them stale: they are computed
once per run and snapshot, by the same matcher and settings and the same pure functions as the
live ones, and stored as statement, discussion and run rows keyed like the live ones with the
snapshot added (``…:g<snapshot id>``). Only a change of the run's own extractions (re-imported,
deleted) outdates them: they are then computed again, still on the same frozen ground truth.

What a discussion-unit run is scored on is the snapshot's complete discussions: those whose
every subject statement had approved ground truth when it was frozen.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.models import (
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    GroundTruthSnapshot,
    SnapshotCoding,
)
from evalsite.match_settings import match_settings
from evalsite.post_commit import after_commit
from evalsite.queue import task_enqueue_named
from metrics import results
from metrics.engine.services import CODE_VERSION, run_values
from metrics.families.extraction import (
    calculate_cumulative_f1,
    calculate_statement_f1,
    statement_contribution,
    total_contributions,
)
from metrics.models import MetricResult
from metrics.results import changed_since, input_hash, result_key, row_locked_or_created

log = logging.getLogger(__name__)

SNAPSHOT_FAMILY = "extraction_snapshot"
Scope = MetricResult.Scope
Status = MetricResult.Status
# A placeholder still stale this long after it was asked for: its task is taken for lost.
REQUEUE_AFTER = timedelta(minutes=2)


def snapshot_key(
    scope: str,
    *,
    snapshot_id: int,
    run_id: int,
    discussion_id: int | None = None,
    statement_id: int | None = None,
) -> str:
    ids = {"run_id": run_id, "discussion_id": discussion_id, "statement_id": statement_id}
    return f"{result_key(SNAPSHOT_FAMILY, scope, **ids)}:g{snapshot_id}"


def snapshot_results() -> Any:
    return MetricResult.objects.filter(family=SNAPSHOT_FAMILY)


def snapshot_run_row(*, run_id: int, snapshot_id: int) -> MetricResult | None:
    key = snapshot_key(Scope.RUN, snapshot_id=snapshot_id, run_id=run_id)
    return MetricResult.objects.filter(key=key).defer("contribution").first()


# --- asking for them ------------------------------------------------------------------------------


def snapshot_results_request(*, run: ExtractionRun, snapshot: GroundTruthSnapshot) -> MetricResult:
    """The run's row on the snapshot: stored figures, or a placeholder (stale) whose
    computation is queued (again, if it was asked for long ago and is still not done)."""
    key = snapshot_key(Scope.RUN, snapshot_id=snapshot.pk, run_id=run.pk)
    row = MetricResult.objects.filter(key=key).defer("contribution").first()
    if row is not None and not _lost(row):
        return row
    with transaction.atomic():
        row = row_locked_or_created(
            key=key,
            family=SNAPSHOT_FAMILY,
            scope=Scope.RUN,
            run_id=run.pk,
            snapshot_id=snapshot.pk,
            stale_since=timezone.now(),
        )
        if row.status == Status.STALE:
            MetricResult.objects.filter(pk=row.pk).update(stale_since=timezone.now())
            after_commit(lambda: _enqueue(run.pk, snapshot.pk))
    return row


def _lost(row: MetricResult) -> bool:
    return (
        row.status == Status.STALE
        and row.stale_since is not None
        and row.stale_since < timezone.now() - REQUEUE_AFTER
    )


def _enqueue(run_id: int, snapshot_id: int) -> None:
    task_enqueue_named(
        "metrics.tasks.compute_snapshot_results", run_id=run_id, snapshot_id=snapshot_id
    )


def snapshot_results_mark_stale(
    *, run_ids: Iterable[int] | None, statement_ids: Iterable[int]
) -> int:
    """The runs' extractions changed: their figures on every snapshot are computed again.
    ``run_ids`` None: the runs that extracted these statements."""
    if run_ids is None:
        run_ids = set(
            Extraction.objects.filter(statement_id__in=list(statement_ids)).values_list(
                "run_id", flat=True
            )
        )
    rows = snapshot_results().filter(scope=Scope.RUN, run_id__in=list(run_ids))
    pairs = list(rows.values_list("run_id", "snapshot_id"))
    marked = rows.exclude(status=Status.STALE).update(
        status=Status.STALE, stale_since=timezone.now()
    )
    after_commit(lambda: _enqueue_all(pairs))
    return marked


def _enqueue_all(pairs: list[tuple[int, int]]) -> None:
    for run_id, snapshot_id in pairs:
        _enqueue(run_id, snapshot_id)


# --- computing them ------------------------------------------------------------------------------


@dataclass
class _Computed:
    rows: list[MetricResult] = field(default_factory=list)
    statements: list[dict] = field(default_factory=list)  # contributions
    discussions: list[dict] = field(default_factory=list)
    stamps: list[Any] = field(default_factory=list)  # what the figures were computed from


def snapshot_results_record_failure(*, run_id: int, snapshot_id: int) -> None:
    """``snapshot_results_compute``, a bug recorded as the run row's failure (transient
    database errors propagate, so the task is retried)."""
    with results.failure_recorded(
        family=SNAPSHOT_FAMILY,
        scope=Scope.RUN,
        code_version=CODE_VERSION,
        settings=_settings_dict(),
        run_id=run_id,
        key=snapshot_key(Scope.RUN, snapshot_id=snapshot_id, run_id=run_id),
    ):
        snapshot_results_compute(run_id=run_id, snapshot_id=snapshot_id)


def snapshot_results_compute(*, run_id: int, snapshot_id: int) -> MetricResult | None:
    """Compute and store every figure of the run on the snapshot (statement, discussion and
    run rows), replacing what was stored for them. None: the run or snapshot is gone; a
    change of the run's extractions while it computed leaves the row stale (to be done again)."""
    read_at = timezone.now()
    run = ExtractionRun.objects.select_related("configuration").filter(pk=run_id).first()
    snapshot = GroundTruthSnapshot.objects.filter(pk=snapshot_id).first()
    if run is None or snapshot is None:
        return None
    discussions = _frozen_discussions(snapshot_id)
    computed = _Computed()
    if run.is_discussion_unit:
        left_out = _whole_discussions(run, snapshot_id, discussions, computed)
    else:
        left_out = None
        _by_statement(run, snapshot_id, discussions, computed)
    totals = {
        "statements": total_contributions(computed.statements),
        "discussions": total_contributions(computed.discussions),
    }
    values = run_values(totals, whole=run.is_discussion_unit, left_out=left_out)
    return _store(run, snapshot_id, computed, values, totals, read_at)


Frozen = dict[int, list[tuple[int, Any]]]  # discussion -> [(statement, payload or None)]


def _frozen_discussions(snapshot_id: int) -> Frozen:
    discussions: Frozen = {}
    for statement_id, discussion_id, payload in (
        SnapshotCoding.objects.filter(snapshot_id=snapshot_id)
        .order_by("discussion_id", "order")
        .values_list("statement_id", "discussion_id", "payload")
    ):
        discussions.setdefault(discussion_id, []).append((statement_id, payload))
    return discussions


def _settings_dict() -> dict[str, Any]:
    return match_settings().to_dict()


def _row(scope: str, run: ExtractionRun, snapshot_id: int, **ids: Any) -> MetricResult:
    return MetricResult(
        key=snapshot_key(scope, snapshot_id=snapshot_id, run_id=run.pk, **ids),
        family=SNAPSHOT_FAMILY,
        scope=scope,
        run_id=run.pk,
        snapshot_id=snapshot_id,
        status=Status.FRESH,
        match_settings=_settings_dict(),
        code_version=CODE_VERSION,
        computed_at=timezone.now(),
        **ids,
    )


def _by_statement(
    run: ExtractionRun, snapshot_id: int, discussions: Frozen, computed: _Computed
) -> None:
    approved = [s for rows in discussions.values() for s, payload in rows if payload is not None]
    extractions = {
        statement_id: (pk, updated_at, payload)
        for statement_id, pk, updated_at, payload in Extraction.objects.filter(
            run=run, statement_id__in=approved
        ).values_list("statement_id", "id", "updated_at", "pdp_deltas")
    }
    settings = match_settings()
    for discussion_id, rows in discussions.items():
        graded = [(s, payload) for s, payload in rows if payload is not None]
        for statement_id, payload in graded:
            if statement_id in extractions:
                metrics = calculate_statement_f1(
                    extractions[statement_id][2],
                    payload,
                    settings=settings,
                    statement_id=statement_id,
                    discussion_id=discussion_id,
                )
                ids = {"discussion_id": discussion_id, "statement_id": statement_id}
                _add(computed, Scope.STATEMENT, run, snapshot_id, metrics, ids)
                computed.stamps.append([statement_id, *extractions[statement_id][:2]])
        if any(s in extractions for s, _ in graded):
            ai = [extractions[s][2] if s in extractions else None for s, _ in graded]
            cumulative = calculate_cumulative_f1(
                ai, [p for _, p in graded], settings=settings, discussion_id=discussion_id
            )
            _add(
                computed,
                Scope.DISCUSSION,
                run,
                snapshot_id,
                cumulative,
                {"discussion_id": discussion_id},
            )


def _whole_discussions(
    run: ExtractionRun, snapshot_id: int, discussions: Frozen, computed: _Computed
) -> int:
    """Scores the discussions frozen complete; returns how many the run extracted that were
    frozen only partly approved (left out)."""
    extractions = dict(
        (discussion_id, (pk, updated_at, pdp))
        for discussion_id, pk, updated_at, pdp in DiscussionExtraction.objects.filter(
            run=run, discussion_id__in=list(discussions)
        ).values_list("discussion_id", "id", "updated_at", "pdp")
    )
    settings, left_out = match_settings(), 0
    for discussion_id, extraction in extractions.items():
        rows = discussions[discussion_id]
        if any(payload is None for _, payload in rows):
            left_out += 1
            continue
        metrics = calculate_cumulative_f1(
            [extraction[2]], [p for _, p in rows], settings=settings, discussion_id=discussion_id
        )
        _add(
            computed, Scope.DISCUSSION, run, snapshot_id, metrics, {"discussion_id": discussion_id}
        )
        computed.stamps.append([discussion_id, *extraction[:2]])
    return left_out


def _add(
    computed: _Computed,
    scope: str,
    run: ExtractionRun,
    snapshot_id: int,
    metrics: Any,
    ids: dict[str, Any],
) -> None:
    row = _row(scope, run, snapshot_id, **ids)
    row.values, row.contribution = metrics.to_dict(), statement_contribution(metrics)
    computed.rows.append(row)
    (computed.statements if scope == Scope.STATEMENT else computed.discussions).append(
        row.contribution
    )


@transaction.atomic
def _store(
    run: ExtractionRun,
    snapshot_id: int,
    computed: _Computed,
    values: dict,
    totals: dict,
    read_at: datetime,
) -> MetricResult:
    """Replace the pair's rows: children written anew, the run row filled (under its lock)."""
    key = snapshot_key(Scope.RUN, snapshot_id=snapshot_id, run_id=run.pk)
    run_row = row_locked_or_created(
        key=key, family=SNAPSHOT_FAMILY, scope=Scope.RUN, run_id=run.pk, snapshot_id=snapshot_id
    )
    if changed_since(run_row, read_at):
        return run_row  # its extractions changed meanwhile: the task queued then does it
    snapshot_results().filter(run_id=run.pk, snapshot_id=snapshot_id).exclude(
        pk=run_row.pk
    ).delete()
    MetricResult.objects.bulk_create(computed.rows, batch_size=500)
    run_row.values, run_row.contribution = values, totals
    run_row.input_hash = input_hash(
        [snapshot_id, computed.stamps], code_version=CODE_VERSION, settings=_settings_dict()
    )
    run_row.status, run_row.stale_since, run_row.error = Status.FRESH, None, ""
    run_row.match_settings, run_row.code_version = _settings_dict(), CODE_VERSION
    run_row.computed_at = timezone.now()
    run_row.save()
    return run_row
