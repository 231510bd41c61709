"""Free-text dates as the F1 library reads them (``parse_date``), the coded dates it would read
otherwise than a person does (``date_problem``) and what it compares (``date_reading``).
"""

from __future__ import annotations

import difflib
import re
import warnings
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from dateutil import parser as date_parser

from metrics.families.payload.edits import is_blank

DATE_FIELDS = ("dateTime", "endDateTime")
DATE_EXAMPLES = "e.g. 1985, March 2003, 2003-03-12"


# Dates are free text. Partial dates ("1985", "March 2003") are placed in the middle of the
# period they name and flagged partial, so the F1 library compares them with the approximate
# tolerance instead of borrowing today's month or day as a bare dateutil.parse would.

_ISO_DAY = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ t].*)?$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{1,2})$")
_YEAR = re.compile(r"^(\d{4})$")
_MONTH_YEAR = re.compile(r"^([a-z]+)\.? (\d{4})$")
_MONTH_DAY_YEAR = re.compile(r"^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$")
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)? ([a-z]+)\.?,? (\d{4})$")
# fmt: off
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
# fmt: on
_MONTHS = {
    name[:length]: number
    for number, name in enumerate(_MONTH_NAMES, start=1)
    for length in (3, len(name))
} | {"sept": 9}
# Two different defaults reveal which parts dateutil filled in by itself.
_DEFAULT_A = datetime(2000, 1, 1)
_DEFAULT_B = datetime(2001, 2, 2)
_MID_YEAR_MONTH, _MID_MONTH_DAY = 7, 15


@dataclass(frozen=True, slots=True)
class ParsedDate:
    ordinal: int  # date.toordinal(), so differences are day counts
    partial: bool  # month or day missing in the text
    precision: str = "day"  # what the text names: "year", "month" or "day"

    @property
    def reading(self) -> str:
        """What the metric compares, as a person reads it: "1957-12, month"."""
        day = date.fromordinal(self.ordinal)
        shown = {"year": f"{day.year}", "month": f"{day.year}-{day.month:02d}"}
        return f"{shown.get(self.precision, day.isoformat())}, {self.precision}"


def parse_date(value: Any) -> ParsedDate | None:
    """A free-text date, or None when missing, yearless or unparseable."""
    if not isinstance(value, str) or not value.strip():
        return None
    return _parse_text(" ".join(value.lower().split()))


def clear_parse_date_cache() -> None:
    """Forget cached parses (benchmarks time a cold start)."""
    _parse_text.cache_clear()


@lru_cache(maxsize=65536)
def _parse_text(text: str) -> ParsedDate | None:
    try:
        fast = _parse_fast(text)
    except ValueError:
        return None
    return fast if fast is not None else parse_with_dateutil(text)


def _parse_fast(text: str) -> ParsedDate | None:
    """The usual forms (ISO, "March 2003", "March 12, 2003"), every word read; None for any
    other text. dateutil is much slower; the tests check they agree with it."""
    if match := _ISO_DAY.match(text):
        return _build(int(match[1]), int(match[2]), int(match[3]))
    if match := _ISO_MONTH.match(text):
        return _build(int(match[1]), int(match[2]), None)
    if match := _YEAR.match(text):
        return _build(int(match[1]), None, None)
    if (match := _MONTH_YEAR.match(text)) and match[1] in _MONTHS:
        return _build(int(match[2]), _MONTHS[match[1]], None)
    if (match := _MONTH_DAY_YEAR.match(text)) and match[1] in _MONTHS:
        return _build(int(match[3]), _MONTHS[match[1]], int(match[2]))
    if (match := _DAY_MONTH_YEAR.match(text)) and match[2] in _MONTHS:
        return _build(int(match[3]), _MONTHS[match[2]], int(match[1]))
    return None


def parse_with_dateutil(text: str) -> ParsedDate | None:
    """The slow, general path of parse_date (public so tests can compare the fast paths)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first = date_parser.parse(text, default=_DEFAULT_A, fuzzy=True)
            second = date_parser.parse(text, default=_DEFAULT_B, fuzzy=True)
    except (ValueError, OverflowError, TypeError):
        return None
    if first.year != second.year:
        return None  # no year: cannot be placed in time at all
    month = first.month if first.month == second.month else None
    day = first.day if first.day == second.day and month is not None else None
    try:
        return _build(first.year, month, day)
    except ValueError:
        return None


def _build(year: int, month: int | None, day: int | None) -> ParsedDate:
    if month is None:
        return ParsedDate(date(year, _MID_YEAR_MONTH, 1).toordinal(), True, "year")
    if day is None:
        return ParsedDate(date(year, month, _MID_MONTH_DAY).toordinal(), True, "month")
    return ParsedDate(date(year, month, day).toordinal(), False, "day")


# --- is a date read as a person reads it? -----------------------------------------------------
# parse_date reads what it can (dateutil skips words it does not know), which is right for the
# AI's free text but not for ground truth: "ecember 1957" (a lost first key) reads as the year
# 1957. A date a coder enters must mean to the metric what it means to a person: every word is
# part of the date, or one of these, which say "about" (the certainty's job) and change no
# period. A season or "early", "late" narrow the period the metric cannot compare.
DATE_FILLER_WORDS = frozenset(
    {"about", "around", "circa", "c", "ca", "approx", "approximately", "roughly", "in", "on",
     "of", "the"}
)  # fmt: skip
_WORD = re.compile(r"[^\W\d_]+")
_SLASHED = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$")


def date_problem(value: Any) -> str:
    """Why a coded date does not mean to the metric what it means to a person ("" when it
    does, or when it is empty: an unknown date is left empty)."""
    if not isinstance(value, str) or is_blank(value):
        return ""
    return _text_date_problem(value)


@lru_cache(maxsize=65536)
def _text_date_problem(value: str) -> str:
    """date_problem of a text: a file's dates repeat (an import checks thousands), each is
    read once (as many kept as parse_date keeps)."""
    text = " ".join(value.lower().split())
    parsed = parse_date(text)
    if parsed is None:
        return f"{value!r} is not a date with a year ({DATE_EXAMPLES}); leave it empty if the date is unknown"
    if (
        (slashed := _SLASHED.match(text))
        and slashed[1] != slashed[2]
        and int(slashed[1]) <= 12
        and int(slashed[2]) <= 12
    ):
        return (
            f"{value!r} could be read day first or month first; write it as year-month-day "
            f"(e.g. {slashed[3]}-{int(slashed[1]):02d}-{int(slashed[2]):02d})"
        )
    if not text.isascii() and any(char.isdigit() and not char.isascii() for char in text):
        return f"{value!r}: write the date with the digits 0-9"
    # The fast paths of parse_date read every word; dateutil may skip some.
    fast = _parse_fast(text) is not None
    unread = [] if fast else [
        word
        for word in _WORD.findall(value)
        if word.lower() not in DATE_FILLER_WORDS and not _names_month(word.lower(), parsed)
    ]  # fmt: skip
    if unread:
        return _unread_words_problem(value, unread, parsed)
    if not _year_written(text, parsed):
        return f"{value!r} needs the year written in full (four digits, e.g. 1957)"
    return ""


def _names_month(word: str, parsed: ParsedDate) -> bool:
    """A month name (or its abbreviation, or a day's ordinal suffix) the parse used."""
    return (word in _MONTHS and parsed.precision != "year") or word in ("st", "nd", "rd", "th")


def _year_written(text: str, parsed: ParsedDate) -> bool:
    year = str(date.fromordinal(parsed.ordinal).year)
    return bool(re.search(rf"(?<!\d){year}(?!\d)", text))


def _unread_words_problem(value: str, unread: list[str], parsed: ParsedDate) -> str:
    words = ", ".join(repr(word) for word in unread)
    guess = difflib.get_close_matches(unread[0].lower(), _MONTH_NAMES, n=1, cutoff=0.7)
    hint = f" Did you mean {guess[0].title()}?" if guess else ""
    return (
        f"{value!r} would count as the {parsed.precision} {parsed.reading.split(',')[0]} for "
        f"the metric, which does not read {words}: "
        f"write only a date (e.g. 1957, December 1957, 1957-12-03) and say how sure it is with "
        f"the certainty.{hint}"
    )


def date_reading(value: Any) -> str:
    """What the metric will compare for a coded date ("1957-12, month"), or "" when it reads
    none (empty, or a date_problem)."""
    if date_problem(value) or not isinstance(value, str) or is_blank(value):
        return ""
    parsed = parse_date(value)
    return parsed.reading if parsed is not None else ""
