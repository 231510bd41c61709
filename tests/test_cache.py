"""The cache fails open while Redis cannot be reached (evalsite/cache.py), and /health/ says so."""

from __future__ import annotations

import logging
import socket
import time

import pytest
from django.core.cache import cache
from django.test import Client

from evalsite import cache as shared_cache
from evalsite.cache import cache_reachable, outage


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nobody listens once it is closed


def _redis_at(settings, port: int) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "evalsite.cache.FailOpenRedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }


@pytest.fixture
def unreachable(settings):
    outage.reset()
    _redis_at(settings, _closed_port())
    yield
    outage.reset()


@pytest.mark.usefixtures("unreachable")
def test_reads_find_nothing_writes_are_dropped_and_marks_let_work_through(caplog):
    caplog.set_level(logging.WARNING, logger="evalsite.cache")
    assert cache.get("key") is None
    assert cache.get("key", "default") == "default"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.set("key", 1) is None
    assert cache.add("mark", 1) is True  # a de-duplicating mark never holds work back
    assert cache.delete("key") is False
    assert cache.has_key("key") is False
    with pytest.raises(ValueError):
        cache.incr("counter")  # as for a missing key: the lockout counts from one
    assert cache_reachable() is False
    warnings = [r for r in caplog.records if "cache unreachable" in r.getMessage()]
    assert len(warnings) == 1  # once per outage, not once per call


@pytest.mark.usefixtures("unreachable")
def test_during_the_pause_redis_is_not_asked_and_after_it_it_is(monkeypatch):
    calls: list[str] = []
    real_get = shared_cache.RedisCache.get

    def counted(self, *args, **kwargs):
        calls.append("get")
        return real_get(self, *args, **kwargs)

    monkeypatch.setattr(shared_cache.RedisCache, "get", counted)
    for _ in range(5):
        cache.get("key")
    assert calls == ["get"]
    monkeypatch.setattr(outage, "paused_until", time.monotonic() - 1)  # the pause is over
    cache.get("key")
    assert calls == ["get", "get"]


def test_a_redis_that_never_answers_costs_one_short_wait(settings):
    """A server that accepts connections and then says nothing (a hung Redis): the socket
    timeout ends the first call, and the pause spares the calls after it."""
    outage.reset()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        _redis_at(settings, silent.getsockname()[1])
        began = time.monotonic()
        assert cache.get("key") is None
        for _ in range(20):
            assert cache.get("key") is None
        waited = time.monotonic() - began
    outage.reset()
    assert waited < 3  # 0.5 s socket timeouts, once; not 21 waits


@pytest.mark.django_db
def test_health_says_ok_with_the_embedded_cache_and_broker(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.REDIS_URL = ""
    answer = Client().get("/health/")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "database": "ok", "cache": "local", "broker": "local"}
    assert "no-cache" in answer["Cache-Control"]


@pytest.mark.django_db
@pytest.mark.usefixtures("unreachable")
def test_health_says_degraded_when_the_cache_does_not_answer(settings):
    settings.REDIS_URL = ""
    answer = Client().get("/health/")
    assert answer.status_code == 200
    assert answer.json()["status"] == "degraded"
    assert answer.json()["cache"] == "unreachable"


@pytest.mark.django_db
def test_health_says_down_when_the_database_does_not_answer(monkeypatch, settings):
    from django.db import OperationalError

    from evalsite import health

    def refused() -> None:
        raise OperationalError("connection refused")

    settings.REDIS_URL = ""
    monkeypatch.setattr(health.connection, "cursor", refused)
    answer = Client().get("/health/")
    assert answer.status_code == 503
    assert answer.json()["status"] == "down"
    assert answer.json()["database"] == "unreachable"


def test_health_takes_only_get():
    assert Client().post("/health/").status_code == 405
