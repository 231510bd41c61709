"""Typed reads of the environment: the only place the code reads ``os.environ``.

Each helper takes the variable's name and its default, and returns the typed value. A value
that does not parse raises ``ImproperlyConfigured`` naming the variable and the value, so a
typo stops the start instead of being read as something else. An unset variable gives the
default; so does a blank one, except for ``env_str`` and ``env_list``, where blank means empty. README's configuration table lists every name these are called with
(tests/test_env.py compares the two).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import overload

from django.core.exceptions import ImproperlyConfigured

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})

# Every name read so far in this process (with the settings imported: all unconditional ones).
READ: set[str] = set()


def _raw(name: str) -> str | None:
    """The variable's value, stripped; None when unset."""
    READ.add(name)
    value = os.environ.get(name)
    return None if value is None else value.strip()


def _given(name: str) -> str | None:
    """The variable's value, stripped; None when unset or blank."""
    return _raw(name) or None


def _refuse(name: str, raw: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name} must be {expected}, not {raw!r}.")


def env_str(name: str, default: str = "") -> str:
    raw = _raw(name)
    return default if raw is None else raw


def env_bool(name: str, default: bool) -> bool:
    """1/true/yes/on or 0/false/no/off, in any case."""
    raw = _given(name)
    if raw is None:
        return default
    if raw.lower() in TRUE:
        return True
    if raw.lower() in FALSE:
        return False
    raise _refuse(name, raw, "one of 1/true/yes/on or 0/false/no/off")


@overload
def env_int(name: str, default: int, *, minimum: int | None = None) -> int: ...
@overload
def env_int(name: str, default: None, *, minimum: int | None = None) -> int | None: ...
def env_int(name: str, default: int | None, *, minimum: int | None = None) -> int | None:
    """A whole number in ASCII digits (an optional sign), at least ``minimum`` when given."""
    raw = _given(name)
    if raw is None:
        return default
    digits = raw[1:] if raw[:1] in "+-" else raw
    if not (digits.isascii() and digits.isdigit()):
        raise _refuse(name, raw, "a whole number")
    value = int(raw)
    if minimum is not None and value < minimum:
        raise _refuse(name, raw, f"a whole number of at least {minimum}")
    return value


@overload
def env_float(name: str, default: float, *, minimum: float | None = None) -> float: ...
@overload
def env_float(name: str, default: None, *, minimum: float | None = None) -> float | None: ...
def env_float(name: str, default: float | None, *, minimum: float | None = None) -> float | None:
    """A finite number written in ASCII, at least ``minimum`` when given."""
    raw = _given(name)
    if raw is None:
        return default
    try:
        value = float(raw) if raw.isascii() else float("nan")
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        raise _refuse(name, raw, "a number")
    if minimum is not None and value < minimum:
        raise _refuse(name, raw, f"a number of at least {minimum:g}")
    return value


def env_choice(name: str, default: str, choices: Iterable[str]) -> str:
    """One of ``choices``, in any case; returned as ``choices`` spells it."""
    raw = _given(name)
    if raw is None:
        return default
    allowed = tuple(choices)
    for choice in allowed:
        if raw.lower() == choice.lower():
            return choice
    raise _refuse(name, raw, "one of " + ", ".join(repr(choice) for choice in allowed))


def env_list(name: str, default: Iterable[str] = ()) -> list[str]:
    """Comma-separated values, each stripped; empty items left out."""
    raw = _raw(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    raw = _given(name)
    return default if raw is None else Path(raw)


# Keys that shipped in examples and compose files (and Django's own placeholder prefix).
PLACEHOLDER_SECRET_KEYS = frozenset(
    {"change-me", "changeme", "change_me", "secret", "secret-key", "your-secret-key", "x"}
)
SECRET_KEY_MIN_LENGTH = 50


def secret_key_problem(key: str) -> str | None:
    """Why ``key`` must not sign a production site's sessions, or None (the rules of Django's
    security.W009 check, made an error, plus known placeholders)."""
    if key.strip().lower() in PLACEHOLDER_SECRET_KEYS or key.startswith("django-insecure-"):
        return "is a known placeholder: set a random one"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"is too weak: at least {SECRET_KEY_MIN_LENGTH} characters (it has {len(key)})"
    if len(set(key)) < 5:
        return "is too weak: at least 5 of its characters different"
    return None
