"""Review triage's rows are read by statement: "still to code" probes the small index of AI
accepted rows, and a weakest score per discussion reads scores from the index, at a size
where PostgreSQL would otherwise hash every accepted row or scan every score. The queue's page
reads no score at all: its weakest scores are stored."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Min
from django.test.utils import CaptureQueriesContext

from audit.models import Discussion, ExtractionRun, Speaker, Statement, TriageStatement
from audit.selectors.queues import discussion_queue_counted
from tests.conftest import require_service

# committed, so the tables can be vacuumed as autovacuum leaves a live site
pytestmark = pytest.mark.django_db(transaction=True)

DISCUSSIONS, STATEMENTS = 200, 50


@pytest.fixture
def triaged_site() -> list[int]:
    """200 discussions x 50 subject statements, every one scored, a third AI accepted; the
    tables are vacuumed and analysed, as autovacuum keeps a live site's. Returns the ids."""
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    run = ExtractionRun.objects.create(model_name="m", prompt_version="1")
    discussions = Discussion.objects.bulk_create(
        Discussion(summary=f"d{n}") for n in range(DISCUSSIONS)
    )
    speakers = Speaker.objects.bulk_create(
        Speaker(discussion=d, name="Ann", type=Speaker.Type.SUBJECT) for d in discussions
    )
    statements = Statement.objects.bulk_create(
        Statement(discussion_id=s.discussion_id, speaker=s, order=order, text="...")
        for s in speakers
        for order in range(STATEMENTS)
    )
    TriageStatement.objects.bulk_create(
        TriageStatement(run=run, statement=s, confidence=(n % 97) / 97, provisional=n % 3 == 0)
        for n, s in enumerate(statements)
    )
    with connection.cursor() as cursor:
        for model in (Discussion, Speaker, Statement, TriageStatement):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")
    return [d.pk for d in discussions]


def _plan(queryset) -> str:
    return queryset.explain()


def test_still_to_code_probes_the_index_of_accepted_rows(triaged_site):
    page = triaged_site[:2]  # 1 % of the statements, as a queue page at 5,000 x 50
    to_code = Statement.objects.to_code().filter(discussion_id__in=page)

    plan = _plan(to_code)

    assert "triage_accepted" in plan
    accepted = TriageStatement.objects.filter(provisional=True, statement__discussion_id__in=page)
    assert to_code.count() == len(page) * STATEMENTS - accepted.count()


def test_the_weakest_score_of_a_page_s_discussions_is_read_from_the_index(triaged_site):
    page = triaged_site[:2]  # 1 % of the statements, as a queue page at 5,000 x 50
    weakest = (
        Statement.objects.to_code()
        .filter(discussion_id__in=page)
        .order_by()
        .values("discussion_id")
        .annotate(weakest=Min("triage__confidence"))
    )

    plan = _plan(weakest)

    assert "triage_statement_score" in plan
    assert "Seq Scan on audit_triagestatement" not in plan
    assert len(list(weakest)) == len(page)


def test_the_queue_page_reads_no_score_from_the_triage_rows(triaged_site, django_user_model):
    """The page's weakest scores are the stored ones (``DiscussionFigures`` and the tallies):
    at 5,000 x 50 reading them from the 250,300 triage rows made PostgreSQL scan them all."""
    viewer = django_user_model.objects.create(username="viewer")
    page = triaged_site[:50]

    with CaptureQueriesContext(connection) as queries:
        counted = discussion_queue_counted(user=viewer, ids=page)

    assert [d.pk for d in counted] == sorted(page)
    assert not [q["sql"] for q in queries if "confidence" in q["sql"]]
