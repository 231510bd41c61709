"""The team page's active time on the worker, on a seeded history: N discussions x M
statements, each coded by the benchmark auditor (one in ten by a second auditor too), every
coding a session of a start, a folded edit and a submit a few tens of seconds apart, two
discussions a day.

Prints the worker's time after one new revision: the full replay of every coder's history
(what the worker did before: ``coding_times`` and every row written), the full rebuild of the
stored rows (``team_times_rebuild``) and the refresh that replays only the changed day
(``team_times_refresh``). Everything runs in one transaction that is rolled back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from audit.derived.coding_times import team_times_rebuild, team_times_refresh, times_store
from audit.derived.tallies import tallies_rebuild
from audit.models import CodingTime, Discussion, Feedback, FeedbackRevision, Speaker, Statement
from audit.selectors.progress import coding_times
from audit.services import feedback_save
from evalsite.access import ensure_role_groups
from evalsite.perf.planner import planner_statistics_refresh

BATCH = 2000
START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
# A coding session: start, an edit whose folded saves run from +20 s to +60 s, the submit.
SESSION = ((0, None, "start"), (20, 60, "edit"), (75, None, "submit"))
SECONDS_PER_CODING = 90


class _Rollback(Exception):
    pass


@contextlib.contextmanager
def _stamped_as_given() -> Iterator[None]:
    """Seeded revisions keep the times given them (the field stamps "now" on insert)."""
    field = FeedbackRevision._meta.get_field("created_at")
    field.auto_now_add = False
    try:
        yield
    finally:
        field.auto_now_add = True


def _coders() -> tuple[Any, Any]:
    auditor_group, _ = ensure_role_groups()
    users = []
    for name in ("bench-times-auditor", "bench-times-auditor2"):
        user, _ = get_user_model().objects.get_or_create(username=name)
        user.groups.add(auditor_group)
        users.append(user)
    return users[0], users[1]


def _statements_create(n_discussions: int, n_statements: int) -> list[Statement]:
    stamp = datetime.now(tz=UTC).strftime("%Y%m%d%H%M%S%f")
    discussions = Discussion.objects.bulk_create(
        [
            Discussion(summary=f"Times discussion {i}", external_id=f"times-{stamp}-{i}")
            for i in range(n_discussions)
        ],
        batch_size=BATCH,
    )
    speakers = Speaker.objects.bulk_create(
        [Speaker(discussion=d, name="Subject", type=Speaker.Type.SUBJECT) for d in discussions],
        batch_size=BATCH,
    )
    return Statement.objects.bulk_create(
        [
            Statement(discussion=d, speaker=s, order=j, text=f"Statement {j}")
            for d, s in zip(discussions, speakers, strict=True)
            for j in range(n_statements)
        ],
        batch_size=BATCH,
    )


def _codings_create(statements: list[Statement], coder: Any, *, offset: int) -> datetime:
    """A coding of each statement by ``coder`` with its session's revisions, two discussions
    a day; returns the last moment."""
    codings = Feedback.objects.bulk_create(
        [
            Feedback(statement=s, auditor=coder, status=Feedback.Status.SUBMITTED)
            for s in statements
        ],
        batch_size=BATCH,
    )
    revisions, at = [], START
    first_discussion = min(s.discussion_id for s in statements)
    per_discussion = max(s.order for s in statements) + 1
    for statement, coding in zip(statements, codings, strict=True):
        day, second_of_day = divmod(statement.discussion_id - first_discussion, 2)
        place = second_of_day * per_discussion + statement.order  # the day's codings in turn
        at = START + timedelta(days=day, seconds=offset + place * SECONDS_PER_CODING)
        for version, (first, last, action) in enumerate(SESSION, start=1):
            revisions.append(_revision(coding, coder, version, action, at, first, last))
    with _stamped_as_given():
        FeedbackRevision.objects.bulk_create(revisions, batch_size=BATCH)
    return at + timedelta(seconds=SESSION[-1][0])


def _revision(coding, coder, version, action, at, first, last) -> FeedbackRevision:
    created = at + timedelta(seconds=first)
    updated = created if last is None else at + timedelta(seconds=last)
    return FeedbackRevision(
        feedback=coding,
        author=coder,
        version=version,
        first_version=version,
        action=action,
        status=Feedback.Status.SUBMITTED,
        after={},
        created_at=created,
        updated_at=updated,
    )


class Command(BaseCommand):
    help = "Time the team page's active time on the worker after one new revision."

    def add_arguments(self, parser):
        parser.add_argument("--discussions", type=int, default=1000)
        parser.add_argument("--statements", type=int, default=50, help="per discussion")
        parser.add_argument("--repeat", type=int, default=3, help="timed runs of each")

    def handle(self, *args, **options):
        if options["discussions"] < 1 or options["statements"] < 2 or options["repeat"] < 1:
            raise CommandError("Need at least one discussion, two statements and one run.")
        try:
            with transaction.atomic():
                self._benchmark(options)
                raise _Rollback
        except _Rollback:
            self.stdout.write("seeded rows rolled back")

    def _benchmark(self, options: dict) -> None:
        started = time.perf_counter()
        auditor, second = _coders()
        statements = _statements_create(options["discussions"], options["statements"])
        last = _codings_create(statements, auditor, offset=0)
        _codings_create([s for s in statements if s.order % 10 == 3], second, offset=30)
        tallies_rebuild()
        team_times_rebuild()
        planner_statistics_refresh()  # as a database that grew to this size
        self.stdout.write(
            f"{connection.vendor}: seeded {options['discussions']} discussions x "
            f"{options['statements']} statements, {FeedbackRevision.objects.count()} revisions, "
            f"{CodingTime.objects.count()} time rows in {time.perf_counter() - started:.1f} s"
        )
        for run in range(options["repeat"]):
            self._one_revision(auditor, statements[-1], last + timedelta(seconds=40 * (run + 1)))

    def _one_revision(self, auditor: Any, statement: Statement, at: datetime) -> None:
        """One more save of the auditor's last coding, 40 s after their last moment (the first
        takes it back from review, the next fold into it), then the worker's three ways to
        follow it."""
        coding = Feedback.objects.get(statement=statement, auditor=auditor)
        with mock.patch("django.utils.timezone.now", return_value=at):
            people = [{"id": 1, "name": f"Ann {at.second}"}]
            payload = {"people": people, "events": [], "pair_bonds": [], "delete": []}
            feedback_save(
                feedback=coding, user=auditor, edited_extraction=payload, base_version=None
            )
        # The refresh first: the rebuild would otherwise take the recorded change away.
        timings = [
            ("refresh (the changed day)", team_times_refresh),
            ("full replay (before)", lambda: times_store(coding_times())),
            ("full rebuild", team_times_rebuild),
        ]
        self.stdout.write(" | ".join(f"{name} {self._ms(call):8.1f} ms" for name, call in timings))

    def _ms(self, call: Callable[[], object]) -> float:
        started = time.perf_counter()
        call()
        return (time.perf_counter() - started) * 1000
