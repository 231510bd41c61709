"""Reads for the team page, the auditor's own figures and the progress API: per auditor and
per discussion, how much is assigned, coded, submitted, approved, rejected and skipped, how
long the coding took and how well it agrees.

Active coding time comes from editor activity: every step of a coder's own history (start,
autosaves, submit; ``FeedbackRevision`` keeps the first and the last save of a folded
session) is a moment they were at work. The time between two consecutive moments of one coder
counts, towards the statement of the later one, unless it is longer than
``CODING_IDLE_SECONDS`` (a pause, a night). Agreement is what the worker computing the
inter-auditor family stored on the team page's rows (``team_agreement_store``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import pairwise

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Left

from audit.models import (
    AuditorFigures,
    CodingTally,
    Discussion,
    DiscussionFigures,
    Feedback,
    FeedbackRevision,
    TeamFigures,
)
from evalsite.access import AUDITOR, is_admin

S = Feedback.Status
COUNTS = ("assigned", "coded", "submitted", "approved", "rejected", "skipped")
# Columns of the team table, its CSV and JSON, in order.
COLUMNS = (
    *COUNTS,
    "active_minutes",
    "median_minutes",
    "per_day",
    "agreement_gt",
    "agreement_coders",
)
TIMES = ("active_seconds", "median_seconds", "per_day")
# What a stored row (``audit.models.TeamFigures``) gives a ProgressRow.
STORED = (*COUNTS, "open", *TIMES, "agreement_gt", "agreement_coders")


@dataclass
class ProgressRow:
    """One auditor's or one discussion's figures."""

    id: int
    label: str
    assigned: int = 0
    coded: int = 0
    submitted: int = 0
    approved: int = 0
    rejected: int = 0
    skipped: int = 0
    open: int = 0  # assigned and not yet submitted or skipped
    active_seconds: float = 0.0
    median_seconds: float | None = None
    per_day: float | None = None
    agreement_gt: float | None = None
    agreement_coders: float | None = None

    @property
    def active_minutes(self) -> float:
        return round(self.active_seconds / 60, 1)

    @property
    def median_minutes(self) -> float | None:
        return None if self.median_seconds is None else round(self.median_seconds / 60, 2)

    @property
    def done_percent(self) -> int:
        """Share of the assignments released (submitted or skipped), for the progress bar."""
        if not self.assigned:
            return 0
        return round(100 * (self.assigned - self.open) / self.assigned)

    def as_dict(self) -> dict:
        return {"id": self.id, "label": self.label, **{c: getattr(self, c) for c in COLUMNS}}


# --- counts ------------------------------------------------------------------------------------


def _count_into(rows: dict[int, ProgressRow], counted: Iterable[dict], key: str) -> None:
    for row in counted:
        target = rows.get(row[key])
        if target is not None:
            for name in (*COUNTS, "open"):
                if name in row:
                    setattr(target, name, getattr(target, name) + row[name])


def _tally_counts(key: str, tallies: QuerySet[CodingTally]) -> Iterable[dict]:
    """The stored tallies (``audit.derived.tallies``) summed per ``key``: a row per discussion and
    auditor, not one per coding."""
    return (
        tallies.order_by().values(key).annotate(**{name: Sum(name) for name in (*COUNTS, "open")})
    )


# --- active time --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Moment:
    at: datetime
    auditor_id: int
    statement_id: int
    discussion_id: int
    # Breaks ties between moments at the same instant, so every replay orders them alike.
    revision_id: int = 0


def coding_moments(
    *, auditor_ids: Iterable[int] | None = None, since: datetime | None = None
) -> list[Moment]:
    """When each coder worked on their own coding (from ``since`` on), in time order per coder."""
    revisions = FeedbackRevision.objects.filter(author_id=F("feedback__auditor_id"))
    if auditor_ids is not None:
        revisions = revisions.filter(author_id__in=list(auditor_ids))
    if since is not None:
        revisions = revisions.filter(Q(created_at__gte=since) | Q(updated_at__gte=since))
    moments = []
    for pk, author, statement, discussion, created, updated in revisions.values_list(
        "pk",
        "author_id",
        "feedback__statement_id",
        "feedback__statement__discussion_id",
        "created_at",
        "updated_at",
    ).iterator():
        if since is None or created >= since:
            moments.append(Moment(created, author, statement, discussion, pk))
        if updated is not None and updated > created and (since is None or updated >= since):
            moments.append(Moment(updated, author, statement, discussion, pk))
    return sorted(moments, key=lambda m: (m.auditor_id, m.at, m.revision_id))


MICROSECOND = timedelta(microseconds=1)


def time_spent(
    moments: Iterable[Moment], *, idle_seconds: float | None = None
) -> Iterator[tuple[Moment, int]]:
    """Each moment after a gap within the idle limit, with the gap in microseconds (the time
    before a coder's first moment, or between two coders' moments, counts for nothing)."""
    idle = settings.CODING_IDLE_SECONDS if idle_seconds is None else idle_seconds
    for previous, moment in pairwise(moments):
        gap = moment.at - previous.at
        if previous.auditor_id == moment.auditor_id and 0 < gap.total_seconds() <= idle:
            yield moment, gap // MICROSECOND


@dataclass(frozen=True)
class Spent:
    """Seconds of active time, on one statement, by one auditor, on one day."""

    auditor_id: int
    statement_id: int
    discussion_id: int
    day: str
    seconds: float


def active_time(moments: list[Moment], *, idle_seconds: float | None = None) -> list[Spent]:
    """The time between consecutive moments of one coder, gaps over the idle limit left out."""
    return [
        Spent(
            m.auditor_id,
            m.statement_id,
            m.discussion_id,
            m.at.date().isoformat(),
            micros / 1_000_000,
        )
        for m, micros in time_spent(moments, idle_seconds=idle_seconds)
    ]


def _add_time(rows: dict[int, ProgressRow], spent: list[Spent], key: str, submitted) -> None:
    """Active time, median per submitted statement and submitted statements per active day."""
    days: dict[int, set[str]] = defaultdict(set)
    per_pair: dict[int, dict[tuple[int, int], float]] = defaultdict(lambda: defaultdict(float))
    for s in spent:
        row_id = getattr(s, key)
        if row_id not in rows:
            continue
        rows[row_id].active_seconds += s.seconds
        days[row_id].add(s.day)
        per_pair[row_id][(s.auditor_id, s.statement_id)] += s.seconds
    for row_id, row in rows.items():
        times = [t for pair, t in per_pair[row_id].items() if pair in submitted]
        row.median_seconds = statistics.median(times) if times else None
        row.per_day = round(row.submitted / len(days[row_id]), 2) if days[row_id] else None


def _submitted_pairs(spent: list[Spent]) -> set[tuple[int, int]]:
    """Of the (auditor, statement) pairs with active time, those submitted (or decided)."""
    statements = {s.statement_id for s in spent}
    sent = Feedback.objects.exclude(status=S.DRAFT).filter(
        statement_id__in=statements, auditor_id__in={s.auditor_id for s in spent}
    )
    return set(sent.values_list("auditor_id", "statement_id").iterator()) if statements else set()


TimeFigures = dict[int, dict[str, float | None]]
# (auditor id, statement id, day, microseconds): a stored ``CodingTime`` row, and its key.
TimeRow = tuple[int, int, date, int]
TimeKey = tuple[int, int, date]


def time_rows(spent: Iterable[tuple[Moment, int]]) -> dict[TimeKey, tuple[int, int]]:
    """The replayed gaps summed as ``CodingTime`` stores them: per (auditor, statement, day),
    the discussion and the microseconds."""
    found: dict[TimeKey, tuple[int, int]] = {}
    for moment, micros in spent:
        key = (moment.auditor_id, moment.statement_id, moment.at.date())
        discussion_id, before = found.get(key, (moment.discussion_id, 0))
        found[key] = (discussion_id, before + micros)
    return found


def times_of(
    *, rows: Iterable[TimeRow], sent: set[tuple[int, int]], submitted: int
) -> dict[str, float | None]:
    """One discussion's or auditor's time figures from its time rows (the full replay)."""
    total, days = 0, set()
    per_pair: dict[tuple[int, int], int] = defaultdict(int)
    for auditor_id, statement_id, day, micros in rows:
        total += micros
        days.add(day)
        per_pair[(auditor_id, statement_id)] += micros
    times = sorted(micros for pair, micros in per_pair.items() if pair in sent)
    middle = times[(len(times) - 1) // 2 :][:2]
    return time_figures(
        total=total, days=len(days), middle=middle, sent=len(times), submitted=submitted
    )


def time_figures(
    *, total: int, days: int, middle: list[int], sent: int, submitted: int
) -> dict[str, float | None]:
    """Active seconds, median seconds per sent statement and sent statements per active day,
    from the microseconds in all, the active days, the one or two middle statements' times
    (of ``sent``) and the count of sent statements. The worker's full replay and its refresh
    both end here, on integers, so they agree to the bit."""
    if not sent:
        median = None
    elif sent % 2:
        median = middle[0] / 1_000_000
    else:  # as statistics.median does it
        median = (middle[0] / 1_000_000 + middle[1] / 1_000_000) / 2
    return {
        "active_seconds": total / 1_000_000,
        "median_seconds": median,
        "per_day": round(submitted / days, 2) if days else None,
    }


def sent_pairs() -> set[tuple[int, int]]:
    """Every (auditor, statement) whose coding was sent (submitted or decided)."""
    sent = Feedback.objects.exclude(status=S.DRAFT)
    return set(sent.values_list("auditor_id", "statement_id").iterator())


def figures_of_rows(rows: dict[TimeKey, tuple[int, int]]) -> tuple[TimeFigures, TimeFigures]:
    """Per discussion and per auditor with a stored row and time: active seconds, median
    seconds per submitted statement and submitted statements per active day."""
    sent = sent_pairs()
    by_discussion: dict[int, list[TimeRow]] = defaultdict(list)
    by_auditor: dict[int, list[TimeRow]] = defaultdict(list)
    for (auditor_id, statement_id, day), (discussion_id, micros) in rows.items():
        by_discussion[discussion_id].append((auditor_id, statement_id, day, micros))
        by_auditor[auditor_id].append((auditor_id, statement_id, day, micros))
    found: list[TimeFigures] = []
    for model, grouped in ((DiscussionFigures, by_discussion), (AuditorFigures, by_auditor)):
        submitted = model.objects.filter(pk__in=list(grouped)).values_list("pk", "submitted")
        found.append(
            {pk: times_of(rows=grouped[pk], sent=sent, submitted=n) for pk, n in submitted}
        )
    return found[0], found[1]


def coding_times() -> tuple[TimeFigures, TimeFigures]:
    """``figures_of_rows`` from every coder's whole history (the worker's full replay)."""
    return figures_of_rows(time_rows(time_spent(coding_moments())))


def stored_row(figures: TeamFigures | None, *, id: int, label: str) -> ProgressRow:
    """A row of the team page from its stored figures (none stored: no work)."""
    if figures is None:
        return ProgressRow(id=id, label=label)
    return ProgressRow(id=id, label=label, **{name: getattr(figures, name) for name in STORED})


def auditor_progress_stored(*, auditors: Iterable[User]) -> list[ProgressRow]:
    """``auditor_progress`` from the stored rows: one read, however much each auditor did."""
    users = list(auditors)
    stored = {row.pk: row for row in AuditorFigures.objects.filter(pk__in=[u.pk for u in users])}
    return [stored_row(stored.get(u.pk), id=u.pk, label=u.get_username()) for u in users]


# --- the two tables -----------------------------------------------------------------------------


def auditor_progress(*, auditors: Iterable[User]) -> list[ProgressRow]:
    """One row per auditor (in the order given)."""
    rows = {u.pk: ProgressRow(id=u.pk, label=u.get_username()) for u in auditors}
    ids = list(rows)
    _count_into(
        rows, _tally_counts("auditor_id", CodingTally.objects.filter(auditor__in=ids)), "auditor_id"
    )
    spent = active_time(coding_moments(auditor_ids=ids))
    _add_time(rows, spent, "auditor_id", _submitted_pairs(spent))
    return _with_agreement(rows, AuditorFigures)


def discussion_progress() -> list[ProgressRow]:
    """One row per discussion with any assignment or coding, in discussion order."""
    counted = list(_tally_counts("discussion_id", CodingTally.objects.all()))
    labels = Discussion.objects.filter(pk__in=CodingTally.objects.values("discussion_id"))
    rows = {
        pk: ProgressRow(id=pk, label=label)
        for pk, label in labels.order_by("pk").values_list("pk", Left("summary", 80))
    }
    _count_into(rows, counted, "discussion_id")
    spent = active_time(coding_moments())
    _add_time(rows, spent, "discussion_id", _submitted_pairs(spent))
    return _with_agreement(rows, DiscussionFigures)


def _with_agreement(
    rows: dict[int, ProgressRow], model: type[AuditorFigures] | type[DiscussionFigures]
) -> list[ProgressRow]:
    """The rows, each with the agreement figures stored on its row of the team page (by the
    worker that computes the inter-auditor family: ``team_agreement_store``)."""
    stored = model.objects.filter(pk__in=list(rows)).values_list(
        "pk", "agreement_gt", "agreement_coders"
    )
    for pk, with_ground_truth, with_coders in stored:
        rows[pk].agreement_gt, rows[pk].agreement_coders = with_ground_truth, with_coders
    return list(rows.values())


def rows_sorted(rows: list[ProgressRow], sort: str) -> list[ProgressRow]:
    """Sort by a column ("-" first: descending); missing figures go last either way."""
    descending = sort.startswith("-")
    name = sort.lstrip("-")
    if name not in (*COLUMNS, "label", "id"):
        return rows
    present = [r for r in rows if getattr(r, name) is not None]
    missing = [r for r in rows if getattr(r, name) is None]
    return sorted(present, key=lambda r: getattr(r, name), reverse=descending) + missing


def team_progress(*, user: User) -> dict[str, list[ProgressRow]]:
    """What the user may see of the team's figures: admins every auditor and discussion,
    auditors their own row."""
    if is_admin(user):
        return {
            "auditors": auditor_progress(auditors=auditors_with_work()),
            "discussions": discussion_progress(),
        }
    return {"auditors": auditor_progress(auditors=[user]), "discussions": []}


def auditors_with_work() -> list[User]:
    """Everyone in the auditor role, and anyone else with assignments or coding."""
    # EXISTS, not joins: a join multiplies the rows per user. Anyone with assignments or
    # coding has a stored tally.
    users = get_user_model().objects.filter(
        Exists(Group.objects.filter(user=OuterRef("pk"), name=AUDITOR))
        | Exists(CodingTally.objects.filter(auditor=OuterRef("pk")))
    )
    return list(users.order_by("username"))
