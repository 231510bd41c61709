"""Ids and versions in query strings and form posts: parsed in one place, refused with a 400.

``str.isdigit()`` accepts "²" (which ``int()`` then refuses) and a bare ``int()`` accepts
"-1", " 7" and "+7"; both let a bad value slip past a check or crash the view. Every id and
version a view reads from GET/POST goes through ``parse_id``.
"""

from __future__ import annotations

import re

from django.core.exceptions import BadRequest

MAX_ID = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")


class BadParameter(BadRequest):
    """A parameter that is not what it must be; answered with a 400 naming it."""

    def __init__(self, name: str, value: object, expected: str):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        self.name = name
        super().__init__(f"{name}: expected {expected}, got {shown}.")


def parse_id(raw: str | None, *, name: str, required: bool = False) -> int | None:
    """A positive integer id (1 .. 2**63-1) from a GET/POST value; None when absent or empty.

    Anything else (``²``, ``-1``, ``1.5``, ``%00``, ``abc``) raises BadParameter.
    """
    if raw is None or raw == "":
        if required:
            raise BadParameter(name, raw or "", "a positive whole number")
        return None
    if not _DIGITS.fullmatch(raw) or not 1 <= int(raw) <= MAX_ID:
        raise BadParameter(name, raw, "a positive whole number")
    return int(raw)
