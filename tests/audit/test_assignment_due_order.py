"""An auditor's open assignments in due order (earliest due first, none last, then discussion
and place), read along the ``assignment_due_order`` index through each assignment's stored
discussion: the order is right whatever order the statements were stored in, every assignment
carries its statement's discussion, and a page of 20 out of thousands is read, not sorted."""

from __future__ import annotations

import json
import random
from datetime import date, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F

from audit.models import Assignment, CodingTally, Discussion, Feedback, Speaker, Statement
from audit.selectors.stream import my_open_assignments
from audit.services.assignments import AssignmentPlan, assignments_create
from tests.conftest import require_service

MONDAY = date(2026, 11, 30)


def _discussions(count: int, statements: int, *, seed: int) -> list[Discussion]:
    """Discussions whose statements are stored in shuffled order, so ids say nothing of place."""
    discussions = Discussion.objects.bulk_create(Discussion(summary=f"d{n}") for n in range(count))
    speakers = Speaker.objects.bulk_create(
        Speaker(discussion=d, name="Ann", type=Speaker.Type.SUBJECT) for d in discussions
    )
    rows = [
        Statement(discussion_id=s.discussion_id, speaker=s, order=order, text="...")
        for s in speakers
        for order in range(statements)
    ]
    random.Random(seed).shuffle(rows)
    Statement.objects.bulk_create(rows)
    return discussions


def _expected(user) -> list[int]:
    rows = Assignment.objects.open().of(user).select_related("statement")
    place = [
        (a.due is None, a.due or MONDAY, a.statement.discussion_id, a.statement.order, a.pk)
        for a in rows
    ]
    return [key[-1] for key in sorted(place)]


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_open_assignments_come_in_due_order_whatever_order_statements_were_stored(
    seed, auditor, admin_user
):
    rng = random.Random(seed)
    discussions = _discussions(6, 8, seed=seed)
    # Ranges of discussions get different due dates (or none), assigned in a random order.
    for discussion in rng.sample(discussions, len(discussions)):
        for first, last in ((0, 2), (3, 7)):
            due = rng.choice([None, MONDAY, MONDAY + timedelta(days=3), MONDAY - timedelta(1)])
            plan = AssignmentPlan(
                discussions=[discussion],
                auditors=[auditor],
                first_order=first,
                last_order=last,
                due=due,
            )
            assignments_create(plan=plan, admin=admin_user)

    listed = [a.pk for a in my_open_assignments(user=auditor)]

    assert listed == _expected(auditor)
    assert len(listed) == 6 * 8
    assert not Assignment.objects.exclude(discussion_id=F("statement__discussion_id")).exists()


@pytest.mark.django_db(transaction=True)  # committed, so the table can be vacuumed
def test_a_page_of_open_assignments_is_read_along_the_index_not_sorted(auditor, admin_user):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    discussions = _discussions(100, 50, seed=0)
    plan = AssignmentPlan(discussions=discussions, auditors=[auditor])
    assignments_create(plan=plan, admin=admin_user)
    with connection.cursor() as cursor:
        for model in (Assignment, Statement, CodingTally, Feedback):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    page = my_open_assignments(user=auditor)[:20]

    plan = json.loads(page.explain(format="json", analyze=True))[0]["Plan"]

    read = [n for n in _nodes(plan) if n.get("Index Name") == "assignment_due_order"]
    assert read, "the open assignments are not read along assignment_due_order"
    # a page's worth (the first discussion's 50 and the next one's first few), not all 5,000
    assert read[0]["Actual Rows"] <= 2 * 50
    assert [a.pk for a in page] == _expected(auditor)[:20]


def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


BEFORE = [("audit", "0021_triage_accepted_index")]
AFTER = [("audit", "0022_assignment_discussion")]


def test_the_migration_stores_each_assignment_s_discussion(migrated_to):
    user = get_user_model().objects.create(username="coder")
    old = migrated_to(BEFORE)
    model = old.get_model
    rows = {}
    for name in ("first", "second"):
        discussion = model("audit", "Discussion").objects.create(summary=name)
        speaker = model("audit", "Speaker").objects.create(
            discussion=discussion, name="Ann", type="subject"
        )
        for order in range(2):
            statement = model("audit", "Statement").objects.create(
                discussion=discussion, speaker=speaker, order=order, text="..."
            )
            assignment = model("audit", "Assignment").objects.create(
                statement=statement, auditor_id=user.pk, assigned_by_id=user.pk
            )
            rows[assignment.pk] = discussion.pk

    new = migrated_to(AFTER)

    stored = new.get_model("audit", "Assignment").objects.values_list("pk", "discussion_id")
    assert dict(stored) == rows
