"""The team page's stored active time: ``CodingTime`` rows (per auditor, statement and day)
and the time figures of ``DiscussionFigures`` / ``AuditorFigures`` read from them.

How they stay true:
- every write the time depends on records a ``CodingTimeChange`` in its own transaction, the
  service that writes calling ``times_changed``: a revision (a moment; its day:
  ``revisions_written``), a deleted coding (its moments go; the day of its first:
  ``codings_deleting``), a coding sent or taken back and a changed count of sent codings (the
  median and statements per day: ``audit.derived.tallies``). A late commit brings its change
  row with it, so nothing is skipped;
- the worker (``team_times_refresh``, queued once per committed change) replays each changed
  auditor's history from the earliest changed day on, after the last moment before it (a
  moment's time depends only on the one before it), stores the rows that differ and reads the
  figures again of the discussions and auditors whose rows or status changed;
- ``team_times_rebuild`` replays every coder's whole history (``manage.py tallies_rebuild``).
Revisions are never deleted on their own (``audit.models.history_purge``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time
from typing import Any

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, Exists, F, Max, Min, OuterRef, QuerySet, Sum

from audit.models import (
    AuditorFigures,
    CodingTime,
    CodingTimeChange,
    DiscussionFigures,
    Feedback,
    FeedbackRevision,
)
from audit.selectors.progress import (
    Moment,
    coding_moments,
    figures_of_rows,
    time_figures,
    time_rows,
    time_spent,
)
from evalsite.post_commit import after_commit

S = Feedback.Status
TIMES = ("active_seconds", "median_seconds", "per_day")
TIMES_QUEUED = "team-times-queued"
REFRESH_LOCK = 73_160_017  # PostgreSQL advisory lock key: one refresh or rebuild at a time
BATCH = 500


# --- recording what changed (the writer's transaction) -------------------------------------------


Change = tuple[int, int | None, date | None]  # (auditor id, discussion id, since)


def times_changed(*, changes: Iterable[Change]) -> None:
    """Record changes the stored time must follow, and queue the worker once they commit."""
    rows = [CodingTimeChange(auditor_id=a, discussion_id=d, since=s) for a, d, s in changes]
    if rows:
        CodingTimeChange.objects.bulk_create(rows, batch_size=BATCH)
        _queue_on_commit()


def _queue_on_commit() -> None:
    """Queue the refresh once the transaction commits, unless one is queued and not started
    (the worker takes the key away when it starts, so a later change queues another)."""
    from evalsite.queue import task_enqueue_named

    def queue() -> None:
        if cache.add(TIMES_QUEUED, 1, timeout=600):
            task_enqueue_named("audit.tasks.team_times")  # its task module imports this one

    after_commit(queue)


def revisions_written(*, revisions: Iterable[FeedbackRevision]) -> None:
    """A step of a coder's own history is a moment: their time changes from its day on (a
    folded save moves the revision's last moment, never its first). Called by every service
    that writes revisions (``audit.services.feedback.revisions``)."""
    # The feedback is cached: the services write revisions with it.
    own = [r for r in revisions if r.author_id == r.feedback.auditor_id]
    times_changed(changes=[(r.feedback.auditor_id, None, _day(r)) for r in own])


def revision_values_written(*, coders: Iterable[tuple[int, int]], at: datetime) -> None:
    """revisions_written for revisions written as values (an import's), all at ``at``: the
    (author id, coder id) of each."""
    day = at.astimezone(UTC).date()
    times_changed(changes=[(coder, None, day) for author, coder in coders if author == coder])


def _day(revision: FeedbackRevision) -> date:
    return revision.created_at.astimezone(UTC).date()


def codings_deleting(*, feedback: QuerySet[Feedback]) -> None:
    """These codings are about to be deleted with their history (read now: the cascade deletes
    the revisions first): each one's moments go, so its auditor's time changes from the day of
    its first on."""
    own = FeedbackRevision.objects.filter(
        feedback__in=feedback, author_id=F("feedback__auditor_id")
    ).order_by()
    firsts = own.values_list("feedback__auditor_id", "feedback__statement__discussion_id").annotate(
        first=Min("created_at")
    )
    times_changed(changes=[(a, d, first.astimezone(UTC).date()) for a, d, first in firsts])


# --- the worker: replay the changed days ---------------------------------------------------------


def _refresh_lock() -> None:
    """Two refreshes replaying one auditor would each store the other's rows again; SQLite
    lets one writer in at a time anyway."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [REFRESH_LOCK])


def team_times_refresh() -> int:
    """Follow the recorded changes: replay each changed auditor from their earliest changed
    day, then write the figures of the discussions and auditors that changed; returns how
    many rows were written."""
    cache.delete(TIMES_QUEUED)
    with transaction.atomic():
        _refresh_lock()
        changes = list(
            CodingTimeChange.objects.order_by("pk").values_list(
                "pk", "auditor_id", "discussion_id", "since"
            )
        )
        discussions = {d for _, _, d, _ in changes if d is not None}
        auditors = {a for _, a, d, _ in changes if d is not None}
        for auditor_id, since in _replay_starts(changes).items():
            changed = _auditor_replay(auditor_id=auditor_id, day=since)
            discussions |= changed
            auditors |= {auditor_id} if changed else set()
        written = _figures_write(discussion_ids=discussions, auditor_ids=auditors)
        CodingTimeChange.objects.filter(pk__in=[change[0] for change in changes]).delete()
    return written


def _replay_starts(changes: Iterable[tuple[int, int, int | None, date | None]]) -> dict[int, date]:
    """Per auditor, the earliest day their history changed."""
    starts: dict[int, date] = {}
    for _, auditor_id, _, since in changes:
        if since is not None and (auditor_id not in starts or since < starts[auditor_id]):
            starts[auditor_id] = since
    return starts


def _auditor_replay(*, auditor_id: int, day: date) -> set[int]:
    """Replay the auditor's moments from the start of ``day`` (after the last one before it),
    store the rows that differ; returns the discussions whose rows changed."""
    start = datetime.combine(day, time.min, tzinfo=UTC)
    moments = coding_moments(auditor_ids=[auditor_id], since=start)
    before = _moment_before(auditor_id=auditor_id, start=start)
    replayed = time_rows(time_spent([*([before] if before else []), *moments]))
    stored = {
        (auditor_id, statement_id, on): (pk, discussion_id, micros)
        for pk, statement_id, on, discussion_id, micros in CodingTime.objects.filter(
            auditor_id=auditor_id, day__gte=day
        ).values_list("pk", "statement_id", "day", "discussion_id", "micros")
    }
    gone = {key: row for key, row in stored.items() if replayed.get(key) != row[1:]}
    new = {key: row for key, row in replayed.items() if key not in stored or key in gone}
    CodingTime.objects.filter(pk__in=[pk for pk, _, _ in gone.values()]).delete()
    CodingTime.objects.bulk_create(
        [
            CodingTime(auditor_id=a, statement_id=s, day=on, discussion_id=d, micros=m)
            for (a, s, on), (d, m) in new.items()
        ],
        batch_size=BATCH,
    )
    return {d for _, d, _ in gone.values()} | {d for d, _ in new.values()}


def _moment_before(*, auditor_id: int, start: datetime) -> Moment | None:
    """The auditor's last moment before ``start`` (only its time matters: what follows it
    counts towards the statement of the moment after)."""
    own = FeedbackRevision.objects.filter(author_id=auditor_id, feedback__auditor_id=auditor_id)
    # Ordered and limited, not Max(): the join keeps Max() from reading the index backwards.
    created = (
        own.filter(created_at__lt=start)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
    ).first()
    updated = (
        own.filter(updated_at__lt=start, updated_at__gt=F("created_at"))
        .order_by("-updated_at")
        .values_list("updated_at", flat=True)
    ).first()
    latest = max((at for at in (created, updated) if at is not None), default=None)
    return None if latest is None else Moment(latest, auditor_id, 0, 0)


# --- the figures of the changed rows -------------------------------------------------------------


def _figures_write(*, discussion_ids: set[int], auditor_ids: set[int]) -> int:
    """Read the time figures of these discussions and auditors again from their rows and
    write them one row at a time, in id order, discussions first: the order the tallies'
    writers lock the same rows in, so neither waits for the other in a circle."""
    written = 0
    for model, key, ids in (
        (DiscussionFigures, "discussion_id", discussion_ids),
        (AuditorFigures, "auditor_id", auditor_ids),
    ):
        for pk, figures in sorted(_figures_read(model=model, key=key, ids=ids).items()):
            written += model.objects.filter(pk=pk).update(**figures)
    return written


def _figures_read(*, model: Any, key: str, ids: set[int]) -> dict[int, dict[str, float | None]]:
    """Per id with a stored row: its time figures from its ``CodingTime`` rows, summed and
    ordered by the database (an auditor's rows are one per statement they coded)."""
    submitted = model.objects.filter(pk__in=ids).values_list("pk", "submitted")
    return {pk: _figures_summed(key=key, pk=pk, submitted=n) for pk, n in submitted}


def _figures_summed(*, key: str, pk: int, submitted: int) -> dict[str, float | None]:
    rows = CodingTime.objects.filter(**{key: pk}).order_by()
    summed = rows.aggregate(total=Sum("micros"), days=Count("day", distinct=True))
    sent = Feedback.objects.filter(
        auditor_id=OuterRef("auditor_id"), statement_id=OuterRef("statement_id")
    ).exclude(status=S.DRAFT)
    # Each sent statement's time, summed over its days by the database: the median's input.
    per_pair = rows.filter(Exists(sent)).values("auditor_id", "statement_id")
    times = sorted(per_pair.annotate(pair=Sum("micros")).values_list("pair", flat=True))
    return time_figures(
        total=summed["total"] or 0,
        days=summed["days"],
        middle=times[(len(times) - 1) // 2 :][:2],
        sent=len(times),
        submitted=submitted,
    )


# --- checks: the stored rows against a whole replay ---------------------------------------------


def times_stored() -> dict[tuple[int, int, date], tuple[int, int]]:
    """The stored time rows, in the shape of ``times_replayed``."""
    rows = CodingTime.objects.values_list(
        "auditor_id", "statement_id", "day", "discussion_id", "micros"
    )
    return {(a, s, on): (d, m) for a, s, on, d, m in rows.iterator()}


def times_replayed() -> dict[tuple[int, int, date], tuple[int, int]]:
    """The time rows a replay of every coder's whole history gives: {(auditor, statement,
    day): (discussion, microseconds)}."""
    return time_rows(time_spent(coding_moments()))


# --- the full rebuild ----------------------------------------------------------------------------


def team_times_rebuild() -> int:
    """Replay every coder's whole history into the rows and every figure; returns how many
    discussions and auditors carry time."""
    cache.delete(TIMES_QUEUED)
    with transaction.atomic():
        _refresh_lock()
        last = CodingTimeChange.objects.aggregate(last=Max("pk"))["last"] or 0
        rows = time_rows(time_spent(coding_moments()))
        CodingTime.objects.all().delete()
        CodingTime.objects.bulk_create(
            [
                CodingTime(auditor_id=a, statement_id=s, day=on, discussion_id=d, micros=m)
                for (a, s, on), (d, m) in rows.items()
            ],
            batch_size=BATCH,
        )
        written = times_store(figures_of_rows(rows))
        CodingTimeChange.objects.filter(pk__lte=last).delete()
    return written


def times_store(found: tuple[dict, dict]) -> int:
    """Every row's time figures: those found, and no time for every other row."""
    written = 0
    models: tuple[Any, Any] = (DiscussionFigures, AuditorFigures)
    for model, times in zip(models, found, strict=True):
        model.objects.exclude(pk__in=list(times)).exclude(active_seconds=0, per_day=None).update(
            active_seconds=0.0, median_seconds=None, per_day=None
        )
        rows: list[Any] = [model(pk=pk, **figures) for pk, figures in times.items()]
        written += len(rows)
        model.objects.bulk_update(rows, list(TIMES), batch_size=BATCH)
    return written
