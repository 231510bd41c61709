"""Stored counts per (discussion, auditor): ``CodingTally``.

The queue, the review home, the review queue, the team page and the progress API show how much
each auditor has coded, sent, had approved or rejected, skipped, has open and has waiting for
review. Counting that from the feedback and assignments on every request grows with the data;
the tallies are counted once, when the rows change.

How they stay true:
- every service that writes a ``Feedback`` or an ``Assignment`` calls the counting code for
  the pairs it touches, in the same transaction (``coding_written``, ``codings_created``,
  ``assignment_written``, ``tallies_refresh``). A coding's pairs are those of every auditor
  coding its statement when its status changed: approving one coding takes the others out of
  the review stream. A save that changes nothing counted (an autosave) calls nothing;
- deletions, which cascade, go through ``audit.services.inputs.inputs_delete`` (the admin site
  too), which reads what goes first: ``tallies_forget`` for deleted discussions, a refresh of
  the surviving pairs;
- ``tallies_batched()`` collects the pairs of many writes (a submit and the assignment it
  releases, an import, a bulk approval) and refreshes them once at its end;
- a refresh recounts its pairs from the rows, so it is idempotent, and ``tallies_rebuild``
  (``manage.py tallies_rebuild``, the data migration) recounts every pair.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from audit.derived.coding_times import times_changed
from audit.derived.team_figures import (
    figures_add,
    figures_rebuild,
    queue_figures_refresh,
    weakest_mine_counted,
)
from audit.models import (
    Adjudication,
    Assignment,
    AuditorFigures,
    CodingTally,
    DiscussionFigures,
    Feedback,
    Speaker,
    Statement,
    TriageStatement,
)
from audit.selectors.stream import waiting_q
from evalsite.perf.planner import planner_statistics_after_commit

Pair = tuple[int, int]  # (discussion id, auditor id)
S = Feedback.Status
A = Assignment.Status
FEEDBACK_COUNTS = (
    "coded",
    "submitted",
    "approved",
    "rejected",
    "in_review",
    "waiting",
    "to_adjudicate",
    "sent_to_code",
)
ASSIGNMENT_COUNTS = ("assigned", "skipped", "open", "open_unsent")
SENT = (S.SUBMITTED, S.APPROVED)
COUNTED = (*FEEDBACK_COUNTS, *ASSIGNMENT_COUNTS)
BATCH = 500
# What a refresh writes: the queue's progress filters and the team page plan on these tables.
TALLY_MODELS = (CodingTally, DiscussionFigures, AuditorFigures)

_batched: ContextVar[set[Pair] | None] = ContextVar("tallies_batched", default=None)


def _feedback_counts(feedback: QuerySet[Feedback]) -> Iterable[dict[str, Any]]:
    return (
        feedback.filter(statement__speaker__type=Speaker.Type.SUBJECT)
        .order_by()
        .values("statement__discussion_id", "auditor_id")
        .annotate(
            coded=Count("id"),
            submitted=Count("id", filter=~Q(status=S.DRAFT)),
            approved=Count("id", filter=Q(status=S.APPROVED)),
            rejected=Count("id", filter=Q(status=S.REJECTED)),
            in_review=Count("id", filter=Q(status=S.SUBMITTED)),
            waiting=Count("id", filter=waiting_q()),
            to_adjudicate=Count("id", filter=_shared_q()),
            sent_to_code=Count("id", filter=Q(status__in=SENT) & ~Exists(_accepted())),
        )
    )


def _accepted() -> QuerySet[TriageStatement]:
    """The outer coding's statement is AI accepted by review triage (out of the queue)."""
    return TriageStatement.objects.filter(statement_id=OuterRef("statement_id"), provisional=True)


def _shared_q() -> Q:
    """A sent coding (not an adjudication's result) another auditor's sent coding shares its
    statement with, the statement neither merged nor with approved ground truth: what
    ``statements_to_adjudicate`` lists."""
    codings = Feedback.objects.filter(status__in=SENT, adjudication__isnull=True)
    other = codings.filter(statement_id=OuterRef("statement_id")).exclude(
        auditor_id=OuterRef("auditor_id")
    )
    merged = Adjudication.objects.filter(
        statement_id=OuterRef("statement_id"), feedback__isnull=False
    )
    approved = Feedback.objects.filter(statement_id=OuterRef("statement_id"), status=S.APPROVED)
    return Q(
        Q(status__in=SENT, adjudication__isnull=True),
        Exists(other),
        ~Exists(merged),
        ~Exists(approved),
    )


def _assignment_counts(assignments: QuerySet[Assignment]) -> Iterable[dict[str, Any]]:
    sent = Feedback.objects.filter(
        statement_id=OuterRef("statement_id"), auditor_id=OuterRef("auditor_id")
    ).exclude(status=S.DRAFT)
    return (
        assignments.order_by()
        .values("statement__discussion_id", "auditor_id")
        .annotate(
            assigned=Count("id"),
            skipped=Count("id", filter=Q(status=A.SKIPPED)),
            open=Count("id", filter=Q(status=A.OPEN)),
            open_unsent=Count("id", filter=Q(status=A.OPEN) & ~Exists(sent)),
        )
    )


def _counted(where: Q | None) -> dict[Pair, dict[str, int]]:
    """The counts of the pairs of feedback and assignments matching ``where`` (all: None)."""
    feedback, assignments = Feedback.objects.all(), Assignment.objects.all()
    if where is not None:
        feedback, assignments = feedback.filter(where), assignments.filter(where)
    counts: dict[Pair, dict[str, int]] = {}
    for rows in (_feedback_counts(feedback), _assignment_counts(assignments)):
        for row in rows:
            pair = (row.pop("statement__discussion_id"), row.pop("auditor_id"))
            counts.setdefault(pair, dict.fromkeys(COUNTED, 0)).update(row)
    return counts


def _store(
    counts: dict[Pair, dict[str, int]], pairs: Iterable[Pair], weakest: dict[Pair, float]
) -> None:
    """Write the counts of these pairs and their own lowest open scores (``weakest``): upsert
    the pairs with anything counted, delete the rest."""
    empty = [pair for pair in pairs if pair not in counts]
    if empty:
        gone = Q()
        for discussion_id, auditor_id in empty:
            gone |= Q(discussion_id=discussion_id, auditor_id=auditor_id)
        CodingTally.objects.filter(gone).delete()
    CodingTally.objects.bulk_create(
        [
            CodingTally(discussion_id=d, auditor_id=a, weakest=weakest.get((d, a)), **c)
            for (d, a), c in counts.items()
        ],
        batch_size=BATCH,
        update_conflicts=True,
        unique_fields=["discussion", "auditor"],
        update_fields=[*COUNTED, "weakest"],
    )


def tallies_refresh(*, pairs: Iterable[Pair]) -> None:
    """Recount these (discussion, auditor) pairs from the rows (collected instead while
    ``tallies_batched`` is open)."""
    wanted = set(pairs)
    batched = _batched.get()
    if batched is not None:
        batched |= wanted
        return
    ordered = sorted(wanted)
    for start in range(0, len(ordered), BATCH):
        chunk = ordered[start : start + BATCH]
        # The locks are held until the counts are written (in the caller's transaction, no
        # savepoint of its own: an error here fails the write that called it).
        with transaction.atomic(savepoint=False):
            before = _lock(chunk)
            where = Q(
                statement__discussion_id__in={d for d, _ in chunk},
                auditor_id__in={a for _, a in chunk},
            )
            counted = _counted(where)
            after = {pair: counted[pair] for pair in chunk if pair in counted}
            weakest = weakest_mine_counted(
                discussion_ids={d for d, _ in chunk}, auditor_ids={a for _, a in chunk}
            )
            _store(after, chunk, weakest)
            # the team page's sums change by what these pairs' counts changed
            figures_add(before=before, after=after)
    # After an import or a plan of assignments the queue's filters would be planned for the
    # tables as they were.
    planner_statistics_after_commit(models=TALLY_MODELS, written=len(ordered))


def _lock(pairs: list[Pair]) -> dict[Pair, dict[str, int]]:
    """Lock the pairs' rows (created empty if missing) before counting: a concurrent writer of
    the same pair waits here until the other commits, then counts the other's rows too (each
    statement reads what is committed), so neither overwrites the other with an older count.
    Returns the locked rows' counts (what the refresh changes)."""
    CodingTally.objects.bulk_create(
        [CodingTally(discussion_id=d, auditor_id=a) for d, a in pairs],
        batch_size=BATCH,
        ignore_conflicts=True,
    )
    found = Q()
    for discussion_id, auditor_id in pairs:
        found |= Q(discussion_id=discussion_id, auditor_id=auditor_id)
    locked = CodingTally.objects.select_for_update(no_key=True).filter(found)
    rows = locked.order_by("discussion_id", "auditor_id").values(
        "discussion_id", "auditor_id", *COUNTED
    )
    return {(row.pop("discussion_id"), row.pop("auditor_id")): row for row in rows}


@contextlib.contextmanager
def tallies_batched() -> Iterator[None]:
    """Collect the pairs refreshed inside and refresh them once at the end (nested: the
    outermost does). For writes inside a transaction: on an error nothing is refreshed, as
    the transaction rolls back what was written."""
    if _batched.get() is not None:
        yield
        return
    pairs: set[Pair] = set()
    token = _batched.set(pairs)
    try:
        yield
    finally:
        _batched.reset(token)
    tallies_refresh(pairs=pairs)


@transaction.atomic
def tallies_rebuild() -> int:
    """Recount every pair from scratch; returns how many pairs have work."""
    counts = _counted(None)
    CodingTally.objects.all().delete()
    _store(counts, [], weakest_mine_counted())
    figures_rebuild()
    planner_statistics_after_commit(models=TALLY_MODELS, written=len(counts))
    return len(counts)


def tallies_counted() -> dict[Pair, dict[str, int]]:
    """What a rebuild would store, without storing it (to check the stored tallies)."""
    return _counted(None)


def tallies_stored() -> dict[Pair, dict[str, int]]:
    rows = CodingTally.objects.values("discussion_id", "auditor_id", *COUNTED)
    return {(r.pop("discussion_id"), r.pop("auditor_id")): r for r in rows}


# --- what is still to code changed ------------------------------------------------------------


def queue_changed(*, statement_ids: Iterable[int], rescored: Iterable[int] = ()) -> None:
    """These statements entered or left what is still to code (review triage accepted them or
    gave them back, a speaker became or stopped being the subject), or review triage scored
    them again (``rescored``): their discussions' count and lowest open score, and the coders'
    tallies of the first (which count subject statements, and the sent codings of statements
    still to code)."""
    ids, scored = list(statement_ids), list(rescored)
    if not ids and not scored:
        return
    discussions = Statement.objects.filter(pk__in=[*ids, *scored]).values_list(
        "discussion_id", flat=True
    )
    queue_figures_refresh(discussion_ids=set(discussions.distinct()), scored=True)
    if ids:
        coders = Feedback.objects.filter(statement_id__in=ids)
        tallies_refresh(pairs=set(coders.values_list("statement__discussion_id", "auditor_id")))


def tallies_forget(*, discussion_ids: Iterable[int]) -> None:
    """These discussions are about to be deleted, their tallies with them (a cascade): their
    counts leave the auditors' rows now, under the tallies' locks."""
    ids = sorted(set(discussion_ids))
    if not ids:
        return
    with transaction.atomic(savepoint=False):
        locked = CodingTally.objects.select_for_update(no_key=True).filter(discussion_id__in=ids)
        rows = locked.order_by("discussion_id", "auditor_id").values(
            "discussion_id", "auditor_id", *COUNTED
        )
        before = {(row.pop("discussion_id"), row.pop("auditor_id")): row for row in rows}
        figures_add(before=before, after={})


# --- the pairs a written row touches ---------------------------------------------------------


def _discussion_of(row: Feedback | Assignment) -> int | None:
    if row._meta.get_field("statement").is_cached(row):
        return row.statement.discussion_id
    return (
        Statement.objects.filter(pk=row.statement_id)
        .values_list("discussion_id", flat=True)
        .first()
    )


def feedback_pairs(feedback: Feedback, *, approval_changed: bool = True) -> set[Pair]:
    """The feedback's pair and, when its approval changed, those of the other auditors coding
    its statement (approved ground truth takes their codings out of the review stream)."""
    discussion_id = _discussion_of(feedback)
    if discussion_id is None:  # the statement is being deleted: its tallies go with it
        return set()
    auditors = {feedback.auditor_id}
    if approval_changed:
        auditors |= set(
            Feedback.objects.filter(statement_id=feedback.statement_id).values_list(
                "auditor_id", flat=True
            )
        )
    return {(discussion_id, a) for a in auditors}


def pairs_of(*, statement_ids: Iterable[int], auditor_ids: Iterable[int]) -> set[Pair]:
    """Every pair of these statements' discussions and these auditors (for bulk writes)."""
    found = Statement.objects.filter(pk__in=list(statement_ids)).values_list(
        "discussion_id", flat=True
    )
    return {(d, a) for d in set(found) for a in set(auditor_ids)}


# --- what the services call when they write what is counted -----------------------------------


def coding_written(*, feedback: Feedback, before: str | None) -> None:
    """A coding created (``before``: None) or its status or pending change changed (``before``:
    its status until then). Its auditor's tally of the discussion follows; when its status
    changed, or it was created sent, so do those of every coder of its statement (approved
    ground truth and sent codings change what the others wait for and share); when it was sent
    or taken back, its time joins or leaves the medians (an expert's statement has no tally to
    say so). A save that changes neither (an autosave) calls nothing."""
    others = feedback.status in SENT if before is None else before != feedback.status
    tallies_refresh(pairs=feedback_pairs(feedback, approval_changed=others))
    if before is not None and (before == S.DRAFT) != (feedback.status == S.DRAFT):
        times_changed(changes=[(feedback.auditor_id, _discussion_of(feedback), None)])


def codings_created(*, feedbacks: Sequence[Feedback]) -> None:
    """``coding_written`` for many codings created at once (seeded, imported)."""
    own = {(d, f.auditor_id) for f in feedbacks if (d := _discussion_of(f)) is not None}
    sent = [f.statement_id for f in feedbacks if f.status in SENT]
    coders = Feedback.objects.filter(statement_id__in=sent).values_list(
        "statement__discussion_id", "auditor_id"
    )
    tallies_refresh(pairs=own | set(coders))


def statement_coders_refresh(*, statement_id: int) -> None:
    """Every coder's tally of the statement's discussion: a merge of their codings produced
    (or gone) changes what they have to adjudicate."""
    coders = Feedback.objects.filter(statement_id=statement_id)
    tallies_refresh(
        pairs=set(coders.values_list("statement__discussion_id", "auditor_id").distinct())
    )


def assignment_written(*, assignment: Assignment, auditor_before: int | None = None) -> None:
    """An assignment created or its status or auditor changed (``auditor_before``: it was taken
    from them, who count one less)."""
    auditors = {assignment.auditor_id, *([auditor_before] if auditor_before else [])}
    tallies_refresh(pairs={(assignment.discussion_id, a) for a in auditors})
