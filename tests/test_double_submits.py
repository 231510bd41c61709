"""Double submits are idempotent: N simultaneous identical requests store one row.

Real threads against PostgreSQL (committed transactions, one connection per thread): the
others get the same row back (200) instead of a 500 from a check-then-create race.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import Discussion, ExtractionRun, Feedback, Statement
from tests.api_fixtures import make_discussion
from tests.conftest import require_service
from tests.factories import SIMPLE_PDP, ExtractionFactory, ExtractionRunFactory

pytestmark = pytest.mark.django_db(transaction=True)
N = 10


@pytest.fixture(autouse=True)
def postgresql():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


@pytest.fixture
def import_run():
    """The run imports file extractions under, already there (as on any site in use), so
    nothing but the import's own guard orders simultaneous imports."""
    return ExtractionRun.objects.create(model_name="imported", prompt_version="unknown")


def simultaneously(user, send: Callable[[APIClient], object], n: int = N) -> list:
    """Run ``send`` in n threads released at once; return the responses."""
    token, _ = Token.objects.get_or_create(user=user)
    barrier = threading.Barrier(n)
    responses: list = [None] * n

    def worker(index: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        try:
            barrier.wait()
            responses[index] = send(client)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


def test_simultaneous_feedback_starts_make_one_feedback(auditor):
    _, (_, subject, _) = make_discussion("Race")
    ExtractionFactory(statement=subject, run=ExtractionRunFactory())
    responses = simultaneously(
        auditor, lambda c: c.post("/api/v1/feedback/", {"statement": subject.pk}, format="json")
    )
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * (N - 1) + [201], [r.content for r in responses]
    assert Feedback.objects.filter(statement=subject).count() == 1
    assert {r.json()["id"] for r in responses} == {Feedback.objects.get().pk}


def test_simultaneous_discussion_posts_with_one_external_id_make_one(admin_user, import_run):
    body = {
        "discussion": {"summary": "Doe family", "external_id": "race-1"},
        "statements": [
            {"text": "Tell me.", "speaker_type": "expert"},
            {"text": "John married Mary.", "speaker_type": "subject", "pdp_deltas": SIMPLE_PDP},
        ],
    }
    responses = simultaneously(
        admin_user, lambda c: c.post("/api/v1/discussions/", body, format="json")
    )
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * (N - 1) + [201], [r.content for r in responses]
    assert Discussion.objects.filter(external_id="race-1").count() == 1
    assert Statement.objects.count() == 2


def test_simultaneous_imports_of_one_file_import_it_once(admin_user, import_run):
    data = {
        "schema_version": "1",
        "exported_at": "2025-01-01T00:00:00Z",
        "discussions": [
            {
                "id": 7,
                "external_id": "race-file",
                "summary": "S",
                "statements": [
                    {"id": 1, "order": 0, "text": "Hi.", "speaker_type": "Subject"},
                    {"id": 2, "order": 1, "text": "Yes.", "speaker_type": "Subject"},
                ],
            }
        ],
    }
    body = json.dumps(data)
    responses = simultaneously(
        admin_user,
        lambda c: c.generic(
            "POST", "/api/v1/ground-truth/import", body, content_type="application/json"
        ),
        n=5,
    )
    assert [r.status_code for r in responses] == [200] * 5, [r.content for r in responses]
    created = sorted(r.json()["discussions_created"] for r in responses)
    assert created == [0, 0, 0, 0, 1]
    assert Discussion.objects.count() == 1 and Statement.objects.count() == 2
