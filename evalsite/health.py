"""``GET /health/``: whether this web process can serve, and what runs degraded.

For container health checks, load balancers and operators, so it needs no sign-in; it shows
no data, one word per service. 200 while the database answers: ``status`` is "ok", or
"degraded" when the cache or the broker (Redis) is unreachable (rate limits, the sign-in
lockout and presence are off; background work waits for the broker and the sweep). 503 when
the database does not answer.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from evalsite.cache import cache_reachable

log = logging.getLogger(__name__)
OK, UNREACHABLE, LOCAL = "ok", "unreachable", "local"


@require_GET
@never_cache
def health(request: HttpRequest) -> JsonResponse:
    services = {
        "database": OK if _database_answers() else UNREACHABLE,
        "cache": {True: OK, False: UNREACHABLE, None: LOCAL}[cache_reachable()],
        "broker": {True: OK, False: UNREACHABLE, None: LOCAL}[_broker_answers()],
    }
    if services["database"] != OK:
        status = "down"
    elif UNREACHABLE in services.values():
        status = "degraded"
    else:
        status = "ok"
    return JsonResponse({"status": status, **services}, status=503 if status == "down" else 200)


def _database_answers() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError as exc:
        log.warning("health: the database does not answer (%s)", exc)
        return False


def _broker_answers() -> bool | None:
    """A ping of the broker's Redis (None: the embedded filesystem broker)."""
    if not settings.REDIS_URL:
        return None
    client = _broker_client(settings.REDIS_URL)
    from redis.exceptions import RedisError

    try:
        return bool(client.ping())
    except RedisError:
        return False


@lru_cache(maxsize=4)
def _broker_client(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
