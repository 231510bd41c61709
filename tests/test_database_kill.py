"""The request's database connection dies right after its commit (its PostgreSQL backend is
terminated from another connection, as a restart of the server would): what was stored is
answered as stored. The work that follows the commit (marking results stale, queueing) runs
again on a new connection; work that keeps failing is logged and left to the sweep, which
sends the stored announcement; a retried request gets the stored result, not a 409.
"""

from __future__ import annotations

import logging
import shutil
import time

import psycopg
import pytest
from django.db import OperationalError, connection, connections

from audit.models import Announcement, Feedback, FeedbackRevision
from evalsite.queue import broker_circuit
from metrics import tasks
from metrics.engine import invalidation
from metrics.models import MetricResult
from tests.broker_fixtures import RedisServer
from tests.conftest import require_service
from tests.metrics.extraction_helpers import celery_broker, make_world

pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("only_extraction_results"),
]
pytest_plugins = ["tests.api_fixtures", "tests.metrics.extraction_helpers"]


def _terminate(db) -> None:
    """End the backend of this connection from another one, and wait until it is gone."""
    pid = db.connection.info.backend_pid
    params = db.settings_dict
    with psycopg.connect(
        host=params["HOST"],
        port=params["PORT"] or 5432,
        user=params["USER"],
        password=params["PASSWORD"] or None,
        dbname=params["NAME"],
        autocommit=True,
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                return
            time.sleep(0.02)
    raise AssertionError(f"backend {pid} still there")


@pytest.fixture
def killed_after_commit(monkeypatch, tmp_path):
    """``arm()``: the next commit on the default connection is followed by the end of its
    backend, before the work that waits for the commit runs. Tasks are published to this
    test's own redis-server (no worker takes them), as a web process publishes them."""
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("redis-server", bool(shutil.which("redis-server")), "not on PATH")
    armed: list[bool] = []
    wrapper = type(connections["default"])
    real = wrapper.run_and_clear_commit_hooks

    def commit_then_die(self) -> None:
        if armed and self.alias == "default":
            armed.clear()
            _terminate(self)
        real(self)

    monkeypatch.setattr(wrapper, "run_and_clear_commit_hooks", commit_then_die)
    broker = RedisServer(tmp_path)
    broker.start()
    broker_circuit.reset()
    with celery_broker(broker.url):
        yield lambda: armed.append(True)
    broker.stop()


def _statement_row(statement):
    return MetricResult.objects.filter(family="extraction", scope="statement", statement=statement)


def test_an_approval_answers_what_it_stored_and_its_results_follow(
    killed_after_commit, auditor, admin_user, api
):
    world = make_world(auditor, discussions=1, statements=2)
    statement = world.statements[0]
    feedback = world.fb(statement)
    client = api(admin_user)
    killed_after_commit()
    answer = client.post(
        f"/api/v1/feedback/{feedback.pk}/approve/", {"version": feedback.version}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "approved"
    assert world.fb(statement).status == Feedback.Status.APPROVED
    # Marking its results stale ran again on a new connection (and queued their tasks).
    assert _statement_row(statement).get().status == MetricResult.Status.STALE
    assert not Announcement.objects.exists()


def test_an_autosave_answers_what_it_stored(killed_after_commit, auditor, api):
    world = make_world(auditor, discussions=1, statements=1)
    feedback = world.fb(world.statements[0])
    Feedback.objects.filter(pk=feedback.pk).update(status=Feedback.Status.DRAFT)
    client = api(auditor)
    killed_after_commit()
    answer = client.put(
        f"/api/v1/feedback/{feedback.pk}/",
        {
            "version": feedback.version,
            "edited_extraction": feedback.edited_extraction,
            "comment": "c",
        },
        format="json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["version"] == feedback.version + 1
    # The next request finds the dead connection first: its reads reconnect.
    stored = client.get(f"/api/v1/feedback/{feedback.pk}/")
    assert stored.status_code == 200, stored.content
    assert (stored.json()["version"], stored.json()["comment"]) == (feedback.version + 1, "c")


def test_work_that_keeps_failing_after_the_commit_is_left_to_the_sweep(
    monkeypatch, auditor, admin_user, api, caplog
):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    world = make_world(auditor, discussions=1, statements=1)
    statement = world.statements[0]
    feedback = world.fb(statement)

    def unreachable(**kwargs) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(invalidation, "_results_mark_stale", unreachable)
    caplog.set_level(logging.WARNING)
    answer = api(admin_user).post(
        f"/api/v1/feedback/{feedback.pk}/approve/", {"version": feedback.version}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert world.fb(statement).status == Feedback.Status.APPROVED
    assert "the change is stored, the sweep does the rest" in caplog.text
    assert list(Announcement.objects.values_list("signal", flat=True)) == ["ground_truth_changed"]
    assert not _statement_row(statement).exists()  # nothing knows yet that it changed

    monkeypatch.undo()  # the database is back
    counts = tasks.recompute_stale.delay(after_outage=True).get()
    assert counts["announcements"] == 1
    assert not Announcement.objects.exists()
    assert _statement_row(statement).get().status == MetricResult.Status.FRESH


def test_a_retried_approval_gets_the_stored_result_not_a_conflict(
    auditor, admin_user, make_user, api
):
    world = make_world(auditor, discussions=1, statements=1)
    feedback = world.fb(world.statements[0])
    client = api(admin_user)
    url, body = f"/api/v1/feedback/{feedback.pk}/approve/", {"version": feedback.version}
    first = client.post(url, body, format="json")
    again = client.post(url, body, format="json")
    assert (first.status_code, again.status_code) == (200, 200), again.content
    assert again.json() == first.json()
    assert FeedbackRevision.objects.filter(feedback=feedback, action="approve").count() == 1
    # Another admin sending the same did not approve it: theirs is a conflict.
    other = api(make_user("dave", role="admin"))
    assert other.post(url, body, format="json").status_code == 409
