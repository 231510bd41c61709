"""The shared cache (Redis), which an outage never turns into failed requests.

What the site keeps in the cache may be lost: rate-limit and sign-in lockout counters,
presence, marks that keep work from being queued twice, upload files kept for a retry, the
review pages' why-to-adjudicate counts (aligned again when missing). So when
Redis cannot be reached the cache fails open: a read finds nothing, a write is dropped, ``add``
answers True (a mark never holds work back) and ``incr`` raises ValueError as for a missing
key. Rate limits and the lockout then let every request through, presence shows nobody else.

The first failure logs a warning and pauses the cache for ``PAUSE_SECONDS``: meanwhile no
call goes to Redis, so an outage (even one where connecting hangs until the short socket
timeouts of ``settings.CACHES``) costs a request nothing. The first call after the pause tries
again; ``cache_reachable`` says whether Redis answers now (the health page shows it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
T = TypeVar("T")
PAUSE_SECONDS = 5.0


class _Outage:
    """This process's view of the cache: since when it failed, and until when to leave it."""

    def __init__(self) -> None:
        self.since: float | None = None  # time.time() of the failure that began it
        self.paused_until = 0.0

    def paused(self) -> bool:
        return time.monotonic() < self.paused_until

    def failed(self, exc: Exception) -> None:
        if self.since is None:
            self.since = time.time()
            log.warning(
                "cache unreachable (%s): rate limits, the sign-in lockout and presence are "
                "off until it answers again",
                exc,
            )
        self.paused_until = time.monotonic() + PAUSE_SECONDS

    def answered(self) -> None:
        if self.since is not None:
            log.warning("cache reachable again after %.0f s", time.time() - self.since)
            self.since = None

    def reset(self) -> None:
        self.since, self.paused_until = None, 0.0


outage = _Outage()


class FailOpenRedisCache(RedisCache):
    """Django's Redis cache, failing open while Redis is unreachable (module docstring)."""

    def _guarded(self, fallback: T, call: Callable[..., T], *args: Any) -> T:
        if outage.paused():
            return fallback
        try:
            value = call(*args)
        except RedisError as exc:
            outage.failed(exc)
            return fallback
        outage.answered()
        return value

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(True, super().add, key, value, timeout, version)

    def get(self, key, default=None, version=None):
        return self._guarded(default, super().get, key, default, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(None, super().set, key, value, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(False, super().touch, key, timeout, version)

    def delete(self, key, version=None):
        return self._guarded(False, super().delete, key, version)

    def get_many(self, keys, version=None):
        return self._guarded({}, super().get_many, keys, version)

    def has_key(self, key, version=None):
        return self._guarded(False, super().has_key, key, version)

    def incr(self, key, delta=1, version=None):
        missing = object()
        value = self._guarded(missing, super().incr, key, delta, version)
        if value is missing:
            raise ValueError(f"Key '{key}' not found (the cache is unreachable).")
        return value

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._guarded(list(data), super().set_many, data, timeout, version)

    def delete_many(self, keys, version=None):
        return self._guarded(None, super().delete_many, keys, version)

    def clear(self):
        return self._guarded(False, super().clear)

    def reachable(self) -> bool:
        """Whether Redis answers now (the pause and the short timeouts apply)."""
        return self._guarded(False, lambda: super(FailOpenRedisCache, self).has_key("ping") or True)


def cache_reachable() -> bool | None:
    """Whether the default cache answers (None: a per-process memory cache, nothing shared)."""
    from django.core.cache import caches

    backend = caches["default"]
    return backend.reachable() if isinstance(backend, FailOpenRedisCache) else None
