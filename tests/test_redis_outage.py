"""Redis goes away mid-session (its own redis-server, the cache and the broker of this test):
sign-in, pages, the API's lists, autosaves (API and JSON editor), submit and approve keep
answering; rate limits, the sign-in lockout and presence fail open, with a logged warning
and /health/ saying "degraded". When Redis is back, the limits count again.
"""

from __future__ import annotations

import json
import logging
import shutil

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.urls import reverse

from audit.models import Feedback
from audit.services import feedback_start
from evalsite import cache as shared_cache
from evalsite.cache import cache_reachable, outage
from evalsite.queue import broker_circuit
from tests.audit.test_views_support import HX, make_scene
from tests.broker_fixtures import RedisServer, wait_for
from tests.conftest import TEST_PASSWORD, require_service
from tests.metrics.extraction_helpers import celery_broker

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
pytest_plugins = ["tests.api_fixtures"]


@pytest.fixture
def redis_server(tmp_path, settings, monkeypatch):
    """This test's own redis-server, as the cache and the broker; the cache, once failed, tries
    Redis again after a second rather than five (the wait for it to answer again)."""
    monkeypatch.setattr("evalsite.cache.PAUSE_SECONDS", 1.0)
    require_service("redis-server", bool(shutil.which("redis-server")), "not on PATH")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    server = RedisServer(tmp_path)
    server.start()
    default = django_settings.CACHES["default"]
    if "redis" not in default["BACKEND"].lower():
        pytest.skip("the cache is not Redis (set REDIS_URL)")
    settings.CACHES = {"default": {**default, "LOCATION": server.url}}
    settings.REDIS_URL = server.url
    outage.reset()
    broker_circuit.reset()
    with celery_broker(server.url):
        yield server
    server.stop()
    outage.reset()
    broker_circuit.reset()


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_redis_down_keeps_the_site_up_and_lifts_only_the_limits(
    redis_server, settings, auditor, second_auditor, admin_user, caplog
):
    scene = make_scene()
    draft = feedback_start(statement=scene.first, auditor=auditor)
    to_approve = feedback_start(statement=scene.second, auditor=second_auditor)
    Feedback.objects.filter(pk=to_approve.pk).update(status=Feedback.Status.SUBMITTED)
    coder, other, admin = signed_in(auditor), signed_in(second_auditor), signed_in(admin_user)
    presence = reverse("audit:presence", args=[scene.first.pk])
    other.post(presence)
    assert b"bob is editing" in coder.post(presence).content  # presence works while Redis is up
    assert coder.get("/health/").json()["status"] == "ok"

    redis_server.stop()
    settings.API_THROTTLE_RATES = {"session": "2/minute"}
    caplog.set_level(logging.WARNING, logger="evalsite.cache")

    # Sign-in: eleven wrong passwords lock nothing (the lockout is off), the right one works.
    for _ in range(11):
        assert (
            Client().post(reverse("login"), {"username": "alice", "password": "no"}).status_code
            == 200
        )
    assert (
        Client()
        .post(reverse("login"), {"username": "alice", "password": TEST_PASSWORD})
        .status_code
        == 302
    )

    # Pages, the editor (which shows presence) first.
    pages = [
        reverse("audit:feedback_edit", args=[draft.pk]),
        reverse("home"),
        reverse("audit:discussion", args=[scene.discussion.pk]),
        reverse("audit:statement", args=[scene.first.pk]),
        reverse("audit:feedback_history", args=[draft.pk]),
        reverse("audit:inbox"),
        reverse("metrics:dashboard"),
    ]
    admin_pages = [
        reverse("audit:review_queue"),
        reverse("audit:statement_review", args=[scene.second.pk]),
        reverse("audit:team"),
        reverse("metrics:jobs"),
        reverse("metrics:discussions"),
    ]
    answers = {path: coder.get(path).status_code for path in pages}
    answers |= {path: admin.get(path).status_code for path in admin_pages}
    assert set(answers.values()) == {200}, answers
    assert coder.post(presence).status_code == 200  # nobody else shown, no error

    # The API's lists, past the (unenforceable) rate of 2 a minute.
    lists = [coder.get("/api/v1/feedback/").status_code for _ in range(4)]
    assert lists == [200] * 4

    # Autosave (API), the JSON editor's save, submit, approve.
    saved = coder.put(
        f"/api/v1/feedback/{draft.pk}/",
        {"version": draft.version, "edited_extraction": draft.edited_extraction, "comment": "x"},
        content_type="application/json",
    )
    assert saved.status_code == 200, saved.content
    version = saved.json()["version"]
    payload = json.dumps(draft.edited_extraction)
    json_save = coder.post(
        reverse("audit:feedback_json", args=[draft.pk]),
        {"payload": payload.replace('"Ann"', '"Anne"', 1), "version": version},
        **HX,
    )
    assert json_save.status_code == 200, json_save.content
    draft.refresh_from_db()
    submitted = coder.post(
        reverse("audit:feedback_submit", args=[draft.pk]), {"version": draft.version}, **HX
    )
    assert submitted.status_code == 200, submitted.content
    approved = admin.post(
        f"/api/v1/feedback/{to_approve.pk}/approve/",
        {"version": Feedback.objects.get(pk=to_approve.pk).version},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.content
    assert Feedback.objects.get(pk=draft.pk).status == Feedback.Status.SUBMITTED
    assert Feedback.objects.get(pk=to_approve.pk).status == Feedback.Status.APPROVED

    health = Client().get("/health/")
    assert health.status_code == 200
    assert health.json() == {
        "status": "degraded",
        "database": "ok",
        "cache": "unreachable",
        "broker": "unreachable",
    }
    assert "cache unreachable" in caplog.text

    redis_server.start()  # same port, empty
    assert wait_for(cache_reachable, shared_cache.PAUSE_SECONDS + 5)
    assert Client().get("/health/").json()["status"] == "ok"
    limited = [coder.get("/api/v1/feedback/").status_code for _ in range(3)]
    assert limited == [200, 200, 429]  # the limits count again
