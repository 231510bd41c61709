"""Shared plumbing of the own-data families: keys, inputs, storing rows, failures, staleness.

Each family stores whole-run (``review_savings``, ``calibration``) or whole-system
(``interauditor``) rows: a row is current when its ``input_hash`` matches the inputs, else
computed again — from stored per-statement pieces (``metrics.own_data.pieces``), so only the
statements whose inputs changed are scored again; ``force`` scores every one again.

Staleness: marking sets ``stale_since`` to the time of the latest change and queues a
computation only for rows that were not stale yet (one is queued or running for the others).
A computation that read its inputs before ``stale_since`` stores its figures but leaves the
row stale and queues itself again, so the row always ends up current. Results record
``values["inputs_read_at"]``; a computation whose inputs are older than the stored row's never
overwrites it, so two workers finishing out of order cannot leave an older result in place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings as django_settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from audit.models import Extraction, ExtractionRun, Feedback, Speaker
from evalsite.match_settings import match_settings
from evalsite.post_commit import after_commit
from evalsite.queue import task_enqueue
from metrics import results
from metrics.families.extraction import StatementF1Metrics, calculate_statement_f1
from metrics.models import MetricResult
from metrics.registry import FAMILIES, INTERAUDITOR, TRIAGE, WHOLE
from metrics.results import (
    changed_since,
    input_hash,
    result_key,
    row_locked,
    row_locked_or_created,
    system_key,
)

log = logging.getLogger(__name__)

# The families computed whole from our data, as the registry declares them.
RUN_FAMILIES = tuple(name for name in WHOLE if FAMILIES[name].scope == MetricResult.Scope.RUN)
CODE_VERSIONS = {name: FAMILIES[name].code_version for name in WHOLE}
SEED = 0
# Beyond this many statements a run's extractions are read whole and filtered here: an IN
# list of 50,000 ids costs the database more than the rows it saves.
PAIRS_BY_ID = 2000

Scope = MetricResult.Scope
Status = MetricResult.Status


def n_resamples() -> int:
    """Bootstrap resamples for every CI of these families (settings.OWN_DATA_BOOTSTRAP_RESAMPLES)."""
    return int(getattr(django_settings, "OWN_DATA_BOOTSTRAP_RESAMPLES", 1000))


INTERAUDITOR_KEY = system_key(INTERAUDITOR)


# --- inputs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroundTruth:
    statement_id: int
    discussion_id: int
    feedback_id: int
    payload: dict | None  # None when loaded without payloads
    stamp: tuple  # (feedback id, version, updated_at): what the input hash sees


@dataclass(frozen=True)
class StatementPair:
    """One subject statement with approved ground truth and this run's extraction of it."""

    statement_id: int
    discussion_id: int
    ai: dict | None  # None when loaded without payloads
    gt: dict | None
    stamp: tuple


def ground_truth_load(
    *, statement_ids: Iterable[int] | None = None, payloads: bool = True
) -> dict[int, GroundTruth]:
    """Approved feedback of subject statements (of ``statement_ids`` when given), by statement
    id; without ``payloads`` only what identifies it (the payload is None): what a family
    whose per-statement pieces are stored needs to tell which pieces changed."""
    rows = Feedback.objects.approved().filter(statement__speaker__type=Speaker.Type.SUBJECT)
    if statement_ids is not None:
        rows = rows.filter(statement_id__in=list(statement_ids))
    fields = ["statement_id", "statement__discussion_id", "id", "version", "updated_at"]
    if payloads:
        fields.append("edited_extraction")
    return {
        row[0]: GroundTruth(
            row[0], row[1], row[2], row[5] if payloads else None, (row[2], row[3], row[4])
        )
        for row in rows.values_list(*fields).iterator(chunk_size=2000)
    }


def run_pairs_load(
    run_id: int, ground_truth: dict[int, GroundTruth], *, payloads: bool = True
) -> list[StatementPair]:
    """The run's extractions of statements with approved GT, in statement order (without
    ``payloads``, ``ai`` is None).

    A statement the run did not extract is not covered by the run (left out, not scored empty).
    """
    fields = ["statement_id", "id", "updated_at", *(["pdp_deltas"] if payloads else [])]
    rows = Extraction.objects.filter(run_id=run_id)
    if len(ground_truth) <= PAIRS_BY_ID:
        rows = rows.filter(statement_id__in=list(ground_truth))
    pairs = []
    for row in sorted(rows.values_list(*fields).iterator(chunk_size=2000), key=lambda r: r[0]):
        statement_id, pk, updated = row[:3]
        gt = ground_truth.get(statement_id)
        if gt is None:
            continue
        stamp = (statement_id, *gt.stamp, pk, updated)
        payload = row[3] if payloads else None
        pairs.append(StatementPair(statement_id, gt.discussion_id, payload, gt.payload, stamp))
    return pairs


def run_pairs_with_payloads(run_id: int, statement_ids: Iterable[int]) -> list[StatementPair]:
    """The pairs of some statements of the run, payloads included (a chunk at a time)."""
    return run_pairs_load(run_id, ground_truth_load(statement_ids=statement_ids))


def pair_score(pair: StatementPair) -> StatementF1Metrics:
    """Extraction F1 of the pair's AI payload against its ground truth (deployment settings)."""
    return calculate_statement_f1(
        pair.ai,
        pair.gt,
        settings=match_settings(),
        statement_id=pair.statement_id,
        discussion_id=pair.discussion_id,
    )


def runs_with_ground_truth(*, besides: Collection[int] = ()) -> list[int]:
    """Runs that extracted at least one subject statement with approved ground truth (of
    those not in ``besides``)."""
    # Per run, EXISTS stops at its first such extraction: joining every approved coding with
    # every extraction to list a handful of runs read the whole table on each approval.
    approved = Feedback.objects.approved().filter(statement_id=OuterRef("statement_id"))
    extracted = Extraction.objects.filter(run_id=OuterRef("pk")).filter(Exists(approved))
    runs = ExtractionRun.objects.exclude(pk__in=besides).filter(Exists(extracted)).order_by("pk")
    return list(runs.values_list("pk", flat=True))


def inputs_hash(family: str, inputs: Any) -> str:
    """Hash of the inputs, settings and code, plus the bootstrap's resamples and seed."""
    return input_hash(
        inputs,
        code_version=CODE_VERSIONS[family],
        settings=match_settings().to_dict(),
        resamples=n_resamples(),
        seed=SEED,
    )


# --- storing -----------------------------------------------------------------------------------


def _settle(row: MetricResult, read_at: datetime) -> bool:
    """Fresh, unless an input changed after ``read_at``: then it stays stale and another
    computation is queued (the marking queued none: the row was already stale). Returns
    whether the row is fresh."""
    if changed_since(row, read_at):
        family, run_id = row.family, row.run_id
        after_commit(lambda: _queue_one(family, run_id))
        return False
    row.status, row.stale_since, row.error = Status.FRESH, None, ""
    return True


def _current(key: str, input_hash: str, read_at: datetime) -> MetricResult | None:
    """The stored row when its inputs are unchanged (confirmed fresh), else None."""
    with transaction.atomic():
        row = row_locked(key, with_values=True)
        if row is None or row.input_hash != input_hash or row.values is None:
            return None
        if row.status == Status.FAILED:
            return None
        if row.status != Status.FRESH:
            _settle(row, read_at)
            row.save(update_fields=["status", "stale_since", "error"])
        return row


def _read_at(row: MetricResult) -> str:
    return (row.values or {}).get("inputs_read_at") or ""


def result_store(
    *,
    family: str,
    key: str,
    scope: str,
    run_id: int | None,
    values: dict[str, Any],
    input_hash: str,
    read_at: datetime,
) -> MetricResult:
    """Store the figures (fresh unless inputs changed meanwhile), unless a computation that
    read newer inputs already stored its own."""
    stamped = {**values, "inputs_read_at": read_at.isoformat(timespec="microseconds")}
    with transaction.atomic():
        # Filled at once from inputs read at `read_at`: created with no ``stale_since``.
        row = row_locked_or_created(
            key=key, family=family, scope=scope, run_id=run_id, with_values=True
        )
        if _read_at(row) > stamped["inputs_read_at"]:
            return row
        row.values, row.input_hash = stamped, input_hash
        row.match_settings = match_settings().to_dict()
        row.code_version = CODE_VERSIONS[family]
        if row.status == Status.FAILED:
            row.status, row.stale_since = Status.STALE, None
        _settle(row, read_at)
        row.computed_at = timezone.now()
        row.save()
    return row


def result_compute(
    *,
    family: str,
    key: str,
    scope: str,
    run_id: int | None,
    inputs: Any,
    compute: Callable[[], dict[str, Any]],
    read_at: datetime,
    force: bool = False,
) -> MetricResult:
    """The stored row if its inputs are unchanged, else ``compute()`` stored as fresh."""
    input_hash = inputs_hash(family, inputs)
    if not force and (row := _current(key, input_hash, read_at)) is not None:
        return row
    return result_store(
        family=family,
        key=key,
        scope=scope,
        run_id=run_id,
        values=compute(),
        input_hash=input_hash,
        read_at=read_at,
    )


# --- computing one row ------------------------------------------------------------------------


def own_result_compute(*, family: str, run_id: int | None = None) -> None:
    """One row of a family computed whole, by the service its registry entry names; a bug
    becomes the row's failure (``failure_recorded``), transient database errors propagate."""
    with failure_recorded(family=family, run_id=run_id):
        FAMILIES[family].compute_service()(**_service_kwargs(family, run_id))


def own_result_force(*, family: str, run_id: int | None = None) -> None:
    """The full recompute of one row: every per-statement piece computed again, the figures
    derived from them (what an incremental update must equal)."""
    with failure_recorded(family=family, run_id=run_id):
        FAMILIES[family].compute_service()(force=True, **_service_kwargs(family, run_id))


def _service_kwargs(family: str, run_id: int | None) -> dict[str, Any]:
    return {"run_id": run_id} if FAMILIES[family].scope == Scope.RUN else {}


# --- failures ----------------------------------------------------------------------------------


def failure_recorded(*, family: str, run_id: int | None = None) -> AbstractContextManager[None]:
    """A bug becomes the family's failed row with its traceback (``metrics.results``)."""
    return results.failure_recorded(
        family=family,
        scope=FAMILIES[family].scope,
        code_version=CODE_VERSIONS[family],
        settings=match_settings().to_dict(),
        run_id=run_id,
    )


# --- staleness ---------------------------------------------------------------------------------

Target = tuple[str, int | None]  # (family, run id or None for the system row)


def _key(target: Target) -> str:
    family, run_id = target
    return result_key(family, FAMILIES[family].scope, run_id=run_id)


def _mark(targets: Iterable[Target]) -> list[Target]:
    """Mark the rows stale, ``stale_since`` = now: the time of the *latest* change, which is
    what tells a running computation its inputs are outdated (``_settle``).

    Missing rows are created. Returns the targets that were not stale yet: only those need a
    computation queued — a stale row already has one queued or running, and a burst of
    changes (a bulk approval) queues one computation per row, not one per change.
    """
    wanted = {_key(target): target for target in targets}
    rows = MetricResult.objects.filter(key__in=list(wanted))
    # The status is compared here, not in the query: with a recompute-all's rows stale,
    # PostgreSQL read them all through the status index.
    already_stale = {
        key for key, status in rows.values_list("key", "status") if status == Status.STALE
    }
    now = timezone.now()
    rows.update(status=Status.STALE, stale_since=now)
    MetricResult.objects.bulk_create(
        [
            MetricResult(
                key=key,
                family=family,
                scope=FAMILIES[family].scope,
                run_id=run_id,
                status=Status.STALE,
                stale_since=now,
            )
            for key, (family, run_id) in wanted.items()
        ],
        ignore_conflicts=True,
    )
    return [target for key, target in wanted.items() if key not in already_stale]


def own_results_mark_stale(*, reason: str = "") -> int:
    """Ground truth or extractions changed: every run row of the run families and the
    inter-auditor row become stale, and their recomputation is queued after commit.

    All runs, not only those that extracted the changed statements: a run row also holds its
    paired comparisons with the other runs. Recomputing an unaffected run is cheap (its input
    hash matches, nothing is computed). Returns how many rows became stale.
    """
    with transaction.atomic():
        with_rows = set(
            MetricResult.objects.filter(family__in=RUN_FAMILIES, run_id__isnull=False).values_list(
                "run_id", flat=True
            )
        )
        # Only runs without rows are searched for ground truth: the search reads extractions.
        run_ids = with_rows | set(runs_with_ground_truth(besides=with_rows))
        targets = [(f, run_id) for run_id in sorted(run_ids) for f in RUN_FAMILIES]
        system: list[Target] = [(f, None) for f in WHOLE if f not in RUN_FAMILIES]
        queued = _mark([*targets, *system])
        after_commit(lambda: _queue(queued))
    log.info("marked %s own-data results stale (%s)", len(queued), reason)
    return len(queued)


def own_results_outdated() -> Any:
    """Own-data rows (not already stale) computed with other match settings or code."""
    current = match_settings().to_dict()
    outdated = MetricResult.objects.none()
    for family in WHOLE:
        rows = MetricResult.objects.filter(family=family).exclude(status=Status.STALE)
        outdated |= rows.exclude(match_settings=current, code_version=CODE_VERSIONS[family])
    return outdated


def interauditor_mark_stale(*, reason: str = "") -> int:
    """Auditors' coding changed: the inter-auditor row becomes stale and is recomputed."""
    with transaction.atomic():
        queued = _mark([(INTERAUDITOR, None)])
        after_commit(lambda: _queue(queued))
    log.debug("marked the inter-auditor result stale (%s)", reason)
    return len(queued)


def triage_mark_stale(*, run_id: int, reason: str = "") -> int:
    """A run's triage settings changed: its triage row becomes stale and is recomputed."""
    with transaction.atomic():
        queued = _mark([(TRIAGE, run_id)])
        after_commit(lambda: _queue(queued))
    log.debug("marked the triage result of run %s stale (%s)", run_id, reason)
    return len(queued)


def _queue(targets: Iterable[Target]) -> None:
    for family, run_id in targets:
        _queue_one(family, run_id)


def _task_kwargs(family: str, run_id: int | None) -> dict[str, Any]:
    return {"family": family, **_service_kwargs(family, run_id)}


def _queue_one(family: str, run_id: int | None) -> None:
    task_enqueue(FAMILIES[family].celery_task(), **_task_kwargs(family, run_id))


def own_results_queue_stale(*, older_than: timedelta | None = None) -> int:
    """The periodic sweep's share (lost tasks): queue each stale row's task again, on its own
    queue (``slow``). Computing whole runs in place would hold the worker that took the sweep,
    a fast one too, for the seconds or minutes a 250,000-statement run takes. While the slow
    worker is busy, sweeps come every minute: at most one task per row waits (a cache mark,
    cleared when the task starts; it expires after OWN_SWEEP_HOLD_SECONDS in case the broker
    lost the task). Returns how many were queued."""
    queued = 0
    for family, run_id in _stale_targets(older_than):
        if cache.add(_sweep_mark(family, run_id), 1, timeout=OWN_SWEEP_HOLD_SECONDS):
            _queue_one(family, run_id)
            queued += 1
    return queued


def own_sweep_mark_clear(*, family: str, run_id: int | None) -> None:
    """The task the sweep queued has started: a later sweep may queue it again."""
    cache.delete(_sweep_mark(family, run_id))


OWN_SWEEP_HOLD_SECONDS = 900


def _sweep_mark(family: str, run_id: int | None) -> str:
    return f"own-data-sweep:{family}:{run_id}"


def _stale_targets(older_than: timedelta | None) -> list[Target]:
    rows = MetricResult.objects.filter(family__in=WHOLE, status=Status.STALE)
    if older_than is not None:
        rows = rows.filter(stale_since__lte=timezone.now() - older_than)
    return list(rows.values_list("family", "run_id"))
