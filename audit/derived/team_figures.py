"""The team page's stored rows (``DiscussionFigures``, ``AuditorFigures``): how they are kept
and read.

- counts: every tally refresh (``audit.derived.tallies``) passes the counts it found before and after
  for its pairs; the difference is added to the pairs' discussion and auditor rows in the same
  transaction, under the tallies' row locks, so two writers never lose each other's change.
  ``figures_rebuild`` sums the tallies again (with ``tallies_rebuild``);
- active time: kept by ``audit.derived.coding_times`` on the worker (``audit.tasks.team_times``): it
  replays only the changed days of the changed coders' history, and reads the figures again
  of the rows whose time, sent codings or count of them changed (``figures_add`` records the
  latter);
- agreement: ``team_agreement_store``, called by the worker that computes the inter-auditor
  family (audit never imports metrics);
- what is still to code (``to_code``, the queue's "done") and the lowest review triage score
  among it (``weakest``, the weakest-first queue's order): recounted for a discussion whenever
  its statements, their speakers or review triage's scores or acceptance of them change
  (``queue_figures_refresh``, called by ``audit.derived.tallies``), and when its row is created
  (``to_code``; a discussion review triage scores gets a row then).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Min, QuerySet, Sum
from django.db.models.functions import Left

from audit.models import (
    TEAM_SORT_FIELDS,
    AuditorFigures,
    CodingTally,
    Discussion,
    DiscussionFigures,
    Feedback,
    Speaker,
    Statement,
    TriageStatement,
)

Pair = tuple[int, int]  # (discussion id, auditor id)
SUMMED = (
    "coded",
    "submitted",
    "approved",
    "rejected",
    "in_review",
    "waiting",
    "to_adjudicate",
    "assigned",
    "skipped",
    "open",
    "open_unsent",
)
COUNTS = ("pairs", *SUMMED)
TIMES = ("active_seconds", "median_seconds", "per_day")
AGREEMENT = ("agreement_gt", "agreement_coders")
BATCH = 500
QUEUE_FIGURES = ("pk", "to_code", "weakest")


# --- counts: the tallies' differences ------------------------------------------------------------


def _difference(before: Mapping[str, int] | None, after: Mapping[str, int] | None) -> dict:
    old, new = before or {}, after or {}
    change = {name: new.get(name, 0) - old.get(name, 0) for name in SUMMED}
    change["pairs"] = int(any(new.values())) - int(any(old.values()))
    return {name: value for name, value in change.items() if value}


def figures_add(*, before: Mapping[Pair, Mapping[str, int]], after: Mapping[Pair, dict]) -> None:
    """Add what a tally refresh changed to the discussions' and auditors' rows (pairs absent
    from ``after`` have no work left)."""
    by_discussion: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_auditor: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for pair in set(before) | set(after):
        for name, value in _difference(before.get(pair), after.get(pair)).items():
            by_discussion[pair[0]][name] += value
            by_auditor[pair[1]][name] += value
    # A pair that counted something before has its rows (made when it first did).
    new = [pair for pair in after if not any((before.get(pair) or {}).values())]
    _rows_ensure(
        discussion_ids=sorted({d for d, _ in new} & set(by_discussion)),
        auditor_ids=sorted({a for _, a in new} & set(by_auditor)),
    )
    _times_follow(before=before, after=after)
    # In id order, discussions then auditors: concurrent refreshes take the locks in one order.
    for model, changes in ((DiscussionFigures, by_discussion), (AuditorFigures, by_auditor)):
        for pk in sorted(changes):
            change = {name: F(name) + value for name, value in changes[pk].items() if value}
            if change:
                model.objects.filter(pk=pk).update(**change)


def _times_follow(
    *, before: Mapping[Pair, Mapping[str, int]], after: Mapping[Pair, Mapping[str, int]]
) -> None:
    """Statements per active day divide by the count of sent codings: a pair whose count (or
    whose having work at all) changed has its rows' time figures read again."""
    from audit.derived.coding_times import times_changed

    pairs = set(before) | set(after)
    times_changed(
        changes=[
            (pair[1], pair[0], None)
            for pair in sorted(pairs)
            if {"submitted", "pairs"} & set(_difference(before.get(pair), after.get(pair)))
        ]
    )


def _rows_ensure(*, discussion_ids: list[int], auditor_ids: list[int]) -> None:
    """Create the rows that do not exist yet (a discussion's with its label)."""
    have = set(DiscussionFigures.objects.filter(pk__in=discussion_ids).values_list("pk", flat=True))
    missing = [pk for pk in discussion_ids if pk not in have]
    if missing:
        labels = Discussion.objects.filter(pk__in=missing).values_list("pk", Left("summary", 80))
        to_code = to_code_counted(discussion_ids=missing)
        DiscussionFigures.objects.bulk_create(
            [
                DiscussionFigures(discussion_id=pk, label=label, to_code=to_code.get(pk, 0))
                for pk, label in labels
            ],
            ignore_conflicts=True,
        )
    AuditorFigures.objects.bulk_create(
        [AuditorFigures(auditor_id=pk) for pk in auditor_ids], ignore_conflicts=True
    )


def figures_counted() -> dict[str, dict[int, dict[str, int]]]:
    """The counts a rebuild would store: the tallies summed per discussion and per auditor
    (rows with nothing counted left out)."""
    found: dict[str, dict[int, dict[str, int]]] = {}
    for key in ("discussion_id", "auditor_id"):
        sums = (
            CodingTally.objects.order_by()
            .values(key)
            .annotate(pairs=Count("pk"), **{name: Sum(name) for name in SUMMED})
        )
        found[key] = {row.pop(key): row for row in sums}
    return found


def figures_stored() -> dict[str, dict[int, dict[str, int]]]:
    """The stored counts, in the shape of ``figures_counted``."""
    found = {}
    for key, model in (("discussion_id", DiscussionFigures), ("auditor_id", AuditorFigures)):
        rows = model.objects.exclude(**dict.fromkeys(COUNTS, 0)).values("pk", *COUNTS)
        found[key] = {row.pop("pk"): row for row in rows}
    return found


def to_code_counted(*, discussion_ids: Iterable[int] | None = None) -> dict[int, int]:
    """Statements still to code per discussion (those with none left out)."""
    statements = Statement.objects.to_code()
    if discussion_ids is not None:
        statements = statements.filter(discussion_id__in=list(discussion_ids))
    counts = statements.order_by().values("discussion_id").annotate(n=Count("pk"))
    return dict(counts.values_list("discussion_id", "n"))


def to_code_stored() -> dict[int, int]:
    """Every discussion row's stored count of what is still to code."""
    return dict(DiscussionFigures.objects.values_list("pk", "to_code"))


def to_code_recounted() -> dict[int, int]:
    """What ``to_code_stored`` should say: every discussion row's count from the statements."""
    counted = to_code_counted()
    return {pk: counted.get(pk, 0) for pk in DiscussionFigures.objects.values_list("pk", flat=True)}


def weakest_counted(*, discussion_ids: Iterable[int] | None = None) -> dict[int, float]:
    """The lowest review triage score among each discussion's statements still to code
    (discussions with none scored left out)."""
    scores = TriageStatement.objects.open_scores()
    if discussion_ids is not None:
        scores = scores.filter(statement__discussion_id__in=list(discussion_ids))
    grouped = scores.order_by().values("statement__discussion_id").annotate(low=Min("confidence"))
    return dict(grouped.values_list("statement__discussion_id", "low"))


def weakest_stored() -> dict[int, float]:
    """The stored lowest scores, in the shape of ``weakest_counted`` (so a scored discussion
    without a row shows as a difference)."""
    rows = DiscussionFigures.objects.values_list("pk", "weakest")
    return {pk: low for pk, low in rows if low is not None}


def weakest_mine_counted(
    *, discussion_ids: Iterable[int] | None = None, auditor_ids: Iterable[int] | None = None
) -> dict[Pair, float]:
    """Per (discussion, auditor) pair where the auditor coded something: the lowest review
    triage score among the discussion's statements still to code the auditor has not coded
    (pairs with none left out): the order of that auditor's weakest-first queue."""
    scores = TriageStatement.objects.open_scores()
    coded = Feedback.objects.filter(statement__speaker__type=Speaker.Type.SUBJECT)
    if discussion_ids is not None:
        ids = list(discussion_ids)
        scores = scores.filter(statement__discussion_id__in=ids)
        coded = coded.filter(statement__discussion_id__in=ids)
    if auditor_ids is not None:
        coded = coded.filter(auditor_id__in=list(auditor_ids))
    by_discussion: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for statement_id, discussion_id, confidence in scores.values_list(
        "statement_id", "statement__discussion_id", "confidence"
    ):
        by_discussion[discussion_id].append((confidence, statement_id))
    if not by_discussion:  # nothing scored left to code: no coder has a lowest score
        return {}
    mine: dict[Pair, set[int]] = defaultdict(set)
    for discussion_id, auditor_id, statement_id in coded.values_list(
        "statement__discussion_id", "auditor_id", "statement_id"
    ):
        mine[(discussion_id, auditor_id)].add(statement_id)
    found: dict[Pair, float] = {}
    for pair, statement_ids in mine.items():
        left = (c for c, s in by_discussion.get(pair[0], ()) if s not in statement_ids)
        if (low := min(left, default=None)) is not None:
            found[pair] = low
    return found


def weakest_mine_stored() -> dict[Pair, float]:
    """The tallies' stored lowest scores, in the shape of ``weakest_mine_counted``."""
    rows = CodingTally.objects.values_list("discussion_id", "auditor_id", "weakest")
    return {(d, a): low for d, a, low in rows if low is not None}


def queue_figures_refresh(*, discussion_ids: Iterable[int], scored: bool = False) -> None:
    """Recount what is still to code and the lowest open score in these discussions' rows.

    Only rows that exist are recounted (a discussion nobody has worked in has none: it is
    counted when its row is created), unless ``scored``: then a discussion with an open score
    and no row gets one, so the weakest-first queue finds it. Never for a discussion being
    deleted: it must not be given a row back. The rows are locked before
    counting: a concurrent writer of the same discussion counts after this transaction
    commits, so neither stores an older count. The discussions' tallies are locked first, as a
    tally refresh locks its tallies before the rows it adds to (``figures_add``): two writers
    of one discussion never wait for each other in opposite orders."""
    ids = list(discussion_ids)
    if not ids:
        return
    with transaction.atomic():
        _tallies_weakest_refresh(discussion_ids=ids)
        if scored:
            have = set(DiscussionFigures.objects.filter(pk__in=ids).values_list("pk", flat=True))
            missing = weakest_counted(discussion_ids=[pk for pk in ids if pk not in have])
            _rows_ensure(discussion_ids=list(missing), auditor_ids=[])
        rows = DiscussionFigures.objects.select_for_update(no_key=True).filter(pk__in=ids)
        stored = {pk: (n, low) for pk, n, low in rows.order_by("pk").values_list(*QUEUE_FIGURES)}
        if not stored:
            return
        to_code, weakest = (
            to_code_counted(discussion_ids=stored),
            weakest_counted(discussion_ids=stored),
        )
        changed = [
            DiscussionFigures(pk=pk, to_code=to_code.get(pk, 0), weakest=weakest.get(pk))
            for pk, before in stored.items()
            if (to_code.get(pk, 0), weakest.get(pk)) != before
        ]
        DiscussionFigures.objects.bulk_update(changed, ["to_code", "weakest"], batch_size=BATCH)


def _tallies_weakest_refresh(*, discussion_ids: list[int]) -> None:
    """Every coder's own lowest score in these discussions (a score, what is to code or a
    statement changed for all of them), under the tallies' locks, in their order."""
    tallies = CodingTally.objects.select_for_update(no_key=True).filter(
        discussion_id__in=discussion_ids
    )
    rows = list(
        tallies.order_by("discussion_id", "auditor_id").values_list(
            "pk", "discussion_id", "auditor_id", "weakest"
        )
    )  # locked now, before counting; none (nobody coded there yet): nothing to count
    if not rows:
        return
    counted = weakest_mine_counted(discussion_ids=discussion_ids)
    changed = [
        CodingTally(pk=pk, weakest=counted.get((d, a)))
        for pk, d, a, low in rows
        if counted.get((d, a)) != low
    ]
    CodingTally.objects.bulk_update(changed, ["weakest"], batch_size=BATCH)


def _weakest_rebuild() -> None:
    """Store every discussion's lowest open score again, giving a row to each scored one."""
    counted = weakest_counted()
    _rows_ensure(discussion_ids=list(counted), auditor_ids=[])
    stored = DiscussionFigures.objects.values_list("pk", "weakest")
    changed = [
        DiscussionFigures(pk=pk, weakest=counted.get(pk))
        for pk, low in stored
        if counted.get(pk) != low
    ]
    DiscussionFigures.objects.bulk_update(changed, ["weakest"], batch_size=BATCH)


def figures_rebuild() -> None:
    """Sum every tally again into the rows, recount what is still to code and the lowest open
    scores (time and agreement stay as they are)."""
    counted = figures_counted()
    _rows_ensure(
        discussion_ids=list(counted["discussion_id"]), auditor_ids=list(counted["auditor_id"])
    )
    for key, model in (("discussion_id", DiscussionFigures), ("auditor_id", AuditorFigures)):
        model.objects.exclude(pk__in=list(counted[key])).update(**dict.fromkeys(COUNTS, 0))
        rows: list[Any] = [model(pk=pk, **counts) for pk, counts in counted[key].items()]
        model.objects.bulk_update(rows, list(COUNTS), batch_size=BATCH)
    stored, recounted = to_code_stored(), to_code_recounted()
    changed = [
        DiscussionFigures(pk=pk, to_code=n) for pk, n in recounted.items() if stored[pk] != n
    ]
    DiscussionFigures.objects.bulk_update(changed, ["to_code"], batch_size=BATCH)
    _weakest_rebuild()


def discussion_label_store(*, discussion: Discussion) -> None:
    """A discussion's summary changed: its row's label follows (no row: nothing to do, as for
    a discussion just created)."""
    DiscussionFigures.objects.filter(pk=discussion.pk).update(label=discussion.summary[:80])


# --- agreement: written by the inter-auditor family's worker ------------------------------------


def team_agreement_store(
    *,
    discussions: Mapping[int, tuple[float | None, float | None]],
    auditors: Mapping[str, tuple[float | None, float | None]],
) -> None:
    """Store each discussion's (by id) and auditor's (by username) agreement (with ground
    truth, with other coders); every other row's agreement becomes unmeasured."""
    from django.contrib.auth import get_user_model

    ids = dict(
        get_user_model().objects.filter(username__in=list(auditors)).values_list("username", "pk")
    )
    by_auditor = {ids[name]: figures for name, figures in auditors.items() if name in ids}
    with transaction.atomic():
        _rows_ensure(discussion_ids=[], auditor_ids=list(by_auditor))
        for model, found in ((DiscussionFigures, discussions), (AuditorFigures, by_auditor)):
            model.objects.exclude(pk__in=list(found)).exclude(
                agreement_gt=None, agreement_coders=None
            ).update(agreement_gt=None, agreement_coders=None)
            rows: list[Any] = [
                model(pk=pk, agreement_gt=gt, agreement_coders=coders)
                for pk, (gt, coders) in found.items()
            ]
            model.objects.bulk_update(rows, list(AGREEMENT), batch_size=BATCH)


# --- reads ----------------------------------------------------------------------------------------


def discussion_figures_sorted(sort: str) -> QuerySet[DiscussionFigures]:
    """The listed discussions' rows in the page's order ("-": descending; missing figures last,
    then by discussion), each order an index of its own."""
    name = sort.lstrip("-")
    rows = DiscussionFigures.objects.filter(pairs__gt=0)
    field = TEAM_SORT_FIELDS.get(name)
    if name == "id":
        return rows.order_by("-discussion_id" if sort.startswith("-") else "discussion_id")
    if field is None:  # an unknown column: discussion order
        return rows.order_by("discussion_id")
    key = F(field).desc(nulls_last=True) if sort.startswith("-") else F(field).asc(nulls_last=True)
    return rows.order_by(key, "discussion_id")
