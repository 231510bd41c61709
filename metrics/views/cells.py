"""What the pages' long tables write in every row, done once per row in Python: a figure as
the templates' ``floatformat:3`` writes it, and a link whose pattern is reversed once per
table. A template loop's tags and filters cost more than the rows they write."""

from __future__ import annotations

import unicodedata
from decimal import ROUND_HALF_UP, Decimal
from html import escape as html_escape
from typing import Any

from django.urls import reverse
from django.utils.text import Truncator

_MILLI = Decimal("0.001")
_STAND_IN = 987654321  # an id no row has, replaced by each row's own


def fixed(value: Any) -> str:
    """Three decimals, as ``floatformat:3`` writes them (half up on the shortest decimal form,
    no sign on a rounded zero, "" for none)."""
    if value is None:
        return ""
    rounded = Decimal(repr(value)).quantize(_MILLI, ROUND_HALF_UP)
    return f"{rounded:f}" if rounded else "0.000"


def link_format(name: str) -> str:
    """The path of the URL ``name`` with one integer argument, as a format string ("{}")."""
    return reverse(name, args=[_STAND_IN]).replace(str(_STAND_IN), "{}")


def escaped(value: Any) -> str:
    """Text made safe for HTML as the templates' autoescape makes it."""
    return html_escape(str(value))


def truncated(text: str, length: int) -> str:
    """As ``truncatechars``: the text in its composed form, cut to ``length`` characters with
    an ellipsis when longer (the cut itself by Django's ``Truncator``)."""
    text = unicodedata.normalize("NFC", text)
    return text if len(text) <= length else Truncator(text).chars(length)
