"""Row locks and foreign-key checks never wait for each other in a circle (PostgreSQL).

PostgreSQL checks a new row's foreign keys when its transaction commits (Django makes them
deferred) by reading each referenced row FOR KEY SHARE. A row locked FOR UPDATE blocks that
read; FOR NO KEY UPDATE (what a plain UPDATE takes) does not. An approval locked its
statement FOR UPDATE and then waited for a team-figures row that the team-times task had
updated, while the task's commit waited to check its new time rows' statement: a deadlock.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import date
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

from audit.models import CodingTime, DiscussionFigures
from audit.services import feedback_approve
from tests.conftest import require_service
from tests.metrics.extraction_helpers import make_world

ROOT = Path(__file__).resolve().parent.parent
LOCK_CALL = re.compile(r"select_for_update\(((?:[^()]|\([^()]*\))*)\)")


def test_every_row_lock_lets_foreign_key_checks_through():
    """The one rule (docs/architecture.md, "Row locks"), wherever rows are locked."""
    plain = [
        f"{path.relative_to(ROOT)}: select_for_update({arguments})"
        for package in ("audit", "metrics", "evalsite")
        for path in (ROOT / package).rglob("*.py")
        for arguments in LOCK_CALL.findall(path.read_text())
        if "no_key=True" not in arguments
    ]
    assert plain == []


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_an_approval_and_the_team_times_writer_of_its_discussion_both_commit(auditor, admin_user):
    require_service("PostgreSQL", connection.vendor == "postgresql", "row locks are PostgreSQL's")
    world = make_world(auditor, discussions=1, statements=1)
    statement = world.statements[0]
    assert DiscussionFigures.objects.filter(pk=statement.discussion_id).exists()
    written, approval_waits = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def team_times_writer() -> None:
        """What the team-times task writes: a time row of the statement, then its figures."""
        try:
            with transaction.atomic():
                CodingTime.objects.create(
                    auditor=auditor,
                    statement=statement,
                    discussion_id=statement.discussion_id,
                    day=date.today(),
                    micros=1,
                )
                DiscussionFigures.objects.filter(pk=statement.discussion_id).update(
                    active_seconds=1.0
                )
                written.set()
                approval_waits.wait(10)
            # committing checks the time row's statement (FOR KEY SHARE)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    def approver() -> None:
        try:
            written.wait(10)
            feedback_approve(feedback=world.fb(statement), admin=admin_user)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=team_times_writer), threading.Thread(target=approver)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while not _waiting_for_a_lock() and time.monotonic() < deadline:
        time.sleep(0.02)
    approval_waits.set()  # the approval holds its statement and waits for the figures' row
    for thread in threads:
        thread.join(20)

    assert errors == []
    assert world.fb(statement).status == "approved"
    assert CodingTime.objects.filter(statement=statement).count() == 1
