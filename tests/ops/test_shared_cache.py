"""With REDIS_URL, every process shares one cache (presence, throttling counters, cached pages):
what one web process records (this test's), another sees (a process of its own, with its own
Django settings from the environment). Without it each process has its own memory cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.test import override_settings

from evalsite.cache import FailOpenRedisCache
from tests.conftest import require_service
from tests.metrics.test_worker import redis_available

pytestmark = pytest.mark.services

TOUCH = """
from types import SimpleNamespace
from django.core.cache import cache
from audit.views.presence import presence_touch
user = SimpleNamespace(pk=1, get_username=lambda: "alice")
presence_touch(4242, user)
cache.set("page:probe", "cached by another process", 60)
"""
LOOK = """
import json
from types import SimpleNamespace
from django.core.cache import cache
from audit.views.presence import presence_others
user = SimpleNamespace(pk=2, get_username=lambda: "bob")
print(json.dumps({"others": presence_others(4242, user), "page": cache.get("page:probe")}))
"""


def _process(code: str, env: dict[str, str]) -> str:
    """One more web process: its own interpreter, its own Django settings from ``env``."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=settings.BASE_DIR,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _env(redis_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "CACHE_URL"}}
    env["CACHE_KEY_PREFIX"] = f"evalsite-test-{uuid.uuid4().hex}"
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def _seen_by_second_process(env: dict[str, str]) -> dict:
    """This test's process records (with the cache ``env`` configures), another one looks."""
    if env.get("REDIS_URL"):
        here = {**settings.CACHES["default"], "KEY_PREFIX": env["CACHE_KEY_PREFIX"]}
    else:
        here = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "touch"}
    with override_settings(CACHES={"default": here}):
        exec(TOUCH, {})
        assert cache.get("page:probe") == "cached by another process"  # recorded here
    return json.loads(_process(LOOK, env).strip().splitlines()[-1])


def test_redis_cache_is_shared_between_processes():
    available, why = redis_available()
    require_service("Redis", available, why)
    env = _env(os.environ["REDIS_URL"])

    seen = _seen_by_second_process(env)

    assert [other["name"] for other in seen["others"]] == ["alice"]
    assert seen["page"] == "cached by another process"
    _forget(env)


def test_memory_cache_is_not_shared_between_processes():
    seen = _seen_by_second_process(_env(""))

    assert seen == {"others": [], "page": None}


def test_settings_choose_the_redis_backend_with_redis_url():
    available, why = redis_available()
    require_service("Redis", available, why)

    # Django's Redis cache, failing open while Redis is down (evalsite/cache.py).
    assert settings.CACHES["default"]["BACKEND"] == "evalsite.cache.FailOpenRedisCache"
    assert issubclass(FailOpenRedisCache, RedisCache)
    assert type(caches["default"]) is FailOpenRedisCache
    assert settings.CACHES["default"]["LOCATION"] == os.environ["REDIS_URL"]


def _forget(env: dict[str, str]) -> None:
    import redis

    client = redis.Redis.from_url(env["REDIS_URL"])
    for key in client.scan_iter(f"{env['CACHE_KEY_PREFIX']}:*"):
        client.delete(key)
