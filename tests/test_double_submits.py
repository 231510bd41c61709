"""Double submits are idempotent: N simultaneous identical requests store one row.

Real threads against PostgreSQL (committed transactions, one connection per thread): the
others get the same row back (200) instead of a 500 from a check-then-create race.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import pytest
from django.db import connection, transaction
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.derived.tallies import tallies_counted, tallies_stored
from audit.derived.team_figures import to_code_recounted, to_code_stored
from audit.models import (
    CodingTally,
    Discussion,
    ExtractionRun,
    Feedback,
    Statement,
    TriageSettings,
)
from audit.services import feedback_start, feedback_submit
from audit.services.inputs import statement_save
from audit.services.triage import triage_statements_apply
from tests.api_fixtures import make_discussion
from tests.conftest import require_service
from tests.factories import SIMPLE_PDP, ExtractionFactory, ExtractionRunFactory

pytestmark = pytest.mark.django_db(transaction=True)
pytest_plugins = ["tests.audit.adjudication_fixtures"]
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


@pytest.mark.parametrize("existing", [False, True])
def test_simultaneous_guideline_saves_of_one_text_make_one_version(admin_user, existing):
    from audit.models import GuidelineVersion
    from audit.services.guidelines import guideline_save

    if existing:
        guideline_save(text="# Before", admin=admin_user)
    body = {"text": "# Rules", "note": "race"}
    responses = simultaneously(
        admin_user, lambda c: c.post("/api/v1/guidelines/", body, format="json")
    )
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * (N - 1) + [201], [r.content for r in responses]
    assert GuidelineVersion.objects.filter(text="# Rules").count() == 1
    assert {r.json()["version"] for r in responses} == {1 + existing}


def test_simultaneous_identical_comments_store_one_and_notify_once(admin_user, auditor):
    from audit.models import Comment, Notification

    _, (_, subject, _) = make_discussion("Thread race")
    url = f"/api/v1/statements/{subject.pk}/comments/"
    responses = simultaneously(
        admin_user, lambda c: c.post(url, {"body": "look @alice"}, format="json")
    )
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * (N - 1) + [201], [r.content for r in responses]
    assert Comment.objects.filter(statement=subject).count() == 1
    assert {r.json()["id"] for r in responses} == {Comment.objects.get().pk}
    assert Notification.objects.filter(user=auditor).count() == 1


def test_simultaneous_reads_reset_a_moot_choice_once(admin_user, second_admin, two_codings):
    from audit.models import Adjudication, AuditLogEntry
    from audit.services.adjudication_state import adjudication_choice_set
    from tests.audit.adjudication_fixtures import alice_resubmits_the_move_as_a_new_event

    statement = two_codings.statement
    adjudication_choice_set(
        statement=statement, admin=admin_user, key="events:0:-5", choice={"coder": 1}
    )
    alice_resubmits_the_move_as_a_new_event(two_codings, second_admin)
    url = f"/api/v1/statements/{statement.pk}/adjudication/"
    responses = simultaneously(admin_user, lambda c: c.get(url))
    assert [r.status_code for r in responses] == [200] * N, [r.content for r in responses]
    assert {len(r.json()["reset_choices"]) for r in responses} == {1}
    logged = AuditLogEntry.objects.filter(action=AuditLogEntry.Action.ADJUDICATION_RESET)
    assert logged.count() == 1
    assert Adjudication.objects.get().reset_choices == responses[0].json()["reset_choices"]


def one_after_the_other_holding(first: Callable[[], None], second: Callable[[], None]) -> None:
    """Run ``first`` in a transaction that stays open (its locks held) while ``second``, in
    another, writes the same rows; then both commit. Errors in either are raised here."""
    first_written = threading.Event()
    errors: list[BaseException] = []

    def write(change: Callable[[], None], *, hold: bool) -> None:
        try:
            with transaction.atomic():
                if not hold:
                    first_written.wait(10)
                change()
                if hold:  # written and holding the lock: let the other write meanwhile
                    first_written.set()
                    time.sleep(0.5)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=write, args=(first,), kwargs={"hold": True}),
        threading.Thread(target=write, args=(second,), kwargs={"hold": False}),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_two_writers_of_one_tally_both_count(auditor):
    """Two transactions submit two codings of the same (discussion, auditor) at once: the
    second waits on the first's lock of the tally row, then counts the first's committed
    submit too, so the stored tally ends at 2 (without the lock: 1, the older count wins)."""
    _, (_, first, second) = make_discussion("Tallied race", n_subject=2)
    codings = [feedback_start(statement=s, auditor=auditor) for s in (first, second)]

    one_after_the_other_holding(
        lambda: feedback_submit(feedback=codings[0], user=auditor),
        lambda: feedback_submit(feedback=codings[1], user=auditor),
    )

    assert tallies_stored() == tallies_counted()
    assert CodingTally.objects.get(auditor=auditor).submitted == 2


def test_two_writers_of_what_is_still_to_code_both_count(auditor):
    """Review triage accepts a statement while a statement is added to the same discussion:
    the second recount waits on the first's lock of the discussion's row, then counts the
    acceptance too, so the stored count is right (without the lock: the older count wins)."""
    _, (_, first, second) = make_discussion("To-code race", n_subject=2)
    feedback_start(statement=first, auditor=auditor)  # someone worked here: the row exists
    run = ExtractionRunFactory()
    TriageSettings.objects.create(run=run, enabled=True, qa_rate=0.0)

    def accept() -> None:
        scores = {second.pk: 0.99}
        triage_statements_apply(run_id=run.pk, scores=scores, accepted=[second.pk], threshold=0.5)

    def add() -> None:
        added = Statement(discussion=second.discussion, speaker=second.speaker, order=9)
        statement_save(statement=added)

    one_after_the_other_holding(accept, add)

    assert to_code_stored() == to_code_recounted() == {second.discussion_id: 2}
