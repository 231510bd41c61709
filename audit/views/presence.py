"""Who else has a statement's editor open, kept in Django's cache.

Each open editor refreshes its entry every 15 seconds; entries older than PRESENCE_TTL are
ignored. With REDIS_URL set the cache is Redis (evalsite/settings.py), shared by every web
process; without it (one development process) the per-process memory cache does.
"""

from __future__ import annotations

import time

from django.contrib.auth.models import User
from django.core.cache import cache

PRESENCE_TTL = 40  # seconds: two missed polls and you are gone


def _key(statement_id: int) -> str:
    return f"audit:presence:{statement_id}"


def _alive(entries: dict, now: float) -> dict:
    return {uid: entry for uid, entry in entries.items() if now - entry["at"] < PRESENCE_TTL}


def presence_touch(statement_id: int, user: User) -> list[dict]:
    """Record that the user is editing; return the others editing, with seconds since seen."""
    now = time.time()
    entries = _alive(cache.get(_key(statement_id)) or {}, now)
    entries[user.pk] = {"name": user.get_username(), "at": now}
    # Read-modify-write may drop a concurrent entry; the next 15 s poll restores it.
    cache.set(_key(statement_id), entries, PRESENCE_TTL)
    return _others(entries, user, now)


def presence_others(statement_id: int, user: User) -> list[dict]:
    now = time.time()
    return _others(_alive(cache.get(_key(statement_id)) or {}, now), user, now)


def presence_leave(statement_id: int, user: User) -> None:
    entries = cache.get(_key(statement_id)) or {}
    if entries.pop(user.pk, None) is not None:
        cache.set(_key(statement_id), entries, PRESENCE_TTL)


def _others(entries: dict, user: User, now: float) -> list[dict]:
    return [
        {"name": entry["name"], "seconds": int(now - entry["at"])}
        for uid, entry in sorted(entries.items(), key=lambda kv: kv[1]["name"])
        if uid != user.pk
    ]
