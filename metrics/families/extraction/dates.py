"""The date gate of event matching.

Dates are free text, parsed by ``metrics.families.payload.rules.parse_date`` (the same rule the editors
validate with): partial dates ("1985", "March 2003") are placed in the middle of the
period they name and flagged partial, so they are compared with the approximate
tolerance here.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from metrics.families.payload.dates import clear_parse_date_cache, parse_date

from .settings import MatchSettings

CERTAIN, APPROXIMATE, UNKNOWN = "certain", "approximate", "unknown"


class EventDate(NamedTuple):
    ordinal: int | None  # None: missing or unparseable, matches any date
    certainty: str


def normalize_certainty(value: Any) -> str:
    """dateCertainty defaults to certain; unrecognised values read as certain too."""
    text = value.strip().lower() if isinstance(value, str) else ""
    return text if text in (APPROXIMATE, UNKNOWN) else CERTAIN


def event_date(event: dict[str, Any]) -> EventDate:
    text, certainty = event.get("dateTime"), event.get("dateCertainty")
    try:
        return _event_date(text, certainty)
    except TypeError:  # unhashable (a list, say): reads as missing, like any non-string
        return _event_date(
            text if isinstance(text, str) else None,
            certainty if isinstance(certainty, str) else None,
        )


@lru_cache(maxsize=65536)
def _event_date(text: Any, certainty_text: Any) -> EventDate:
    # Non-strings read as missing: parse_date and normalize_certainty both ignore them.
    parsed = parse_date(text)
    certainty = normalize_certainty(certainty_text)
    if parsed is None:
        return EventDate(None, certainty)
    if parsed.partial and certainty == CERTAIN:
        certainty = APPROXIMATE
    return EventDate(parsed.ordinal, certainty)


def date_similarity(ai: EventDate, gt: EventDate, settings: MatchSettings) -> float | None:
    """Similarity in 0.5..1 inside the tolerance, None when the dates rule the pair out."""
    if ai.ordinal is None or gt.ordinal is None:
        return 1.0
    if UNKNOWN in (ai.certainty, gt.certainty):
        return 1.0
    if APPROXIMATE in (ai.certainty, gt.certainty):
        tolerance = settings.approximate_date_tolerance_days
    else:
        tolerance = settings.date_tolerance_days
    days_apart = abs(ai.ordinal - gt.ordinal)
    if days_apart > tolerance:
        return None
    return 1.0 - days_apart / (2 * tolerance)


class DateIndex:
    """A larger set of GT event dates, sorted by day and split by certainty, so that
    the ones compatible with an AI date are found by bisecting the tolerance window
    rather than by testing every member (an accumulated PDP has dozens of events
    per person and kind, mostly years apart). compatible() gives what
    date_similarity would for every member it does not rule out.
    """

    __slots__ = ("_approximate", "_certain", "_free")
    MIN_SIZE = 8  # below this many members a plain scan with date_similarity is cheaper

    def __init__(self, members: list[tuple[int, EventDate]]):
        """members: (index, date) pairs; compatible() returns the indices."""
        self._free: list[int] = []
        certain: list[tuple[int, int]] = []
        approximate: list[tuple[int, int]] = []
        for index, day in members:
            if day.ordinal is None or day.certainty == UNKNOWN:
                self._free.append(index)  # matches any date, with similarity 1.0
            elif day.certainty == APPROXIMATE:
                approximate.append((day.ordinal, index))
            else:
                certain.append((day.ordinal, index))
        self._certain = _DaySorted(certain)
        self._approximate = _DaySorted(approximate)

    def compatible(self, ai: EventDate, settings: MatchSettings) -> list[tuple[int, float]]:
        """(index, date similarity) of the members within tolerance of ai."""
        free = [(index, 1.0) for index in self._free]
        if ai.ordinal is None or ai.certainty == UNKNOWN:
            every = self._certain.indices + self._approximate.indices
            return free + [(index, 1.0) for index in every]
        approximate_days = settings.approximate_date_tolerance_days
        certain_days = (
            approximate_days if ai.certainty == APPROXIMATE else settings.date_tolerance_days
        )
        return (
            free
            + self._certain.within(ai.ordinal, certain_days)
            + self._approximate.within(ai.ordinal, approximate_days)
        )


class _DaySorted:
    """(day, index) pairs sorted by day."""

    __slots__ = ("days", "indices")

    def __init__(self, pairs: list[tuple[int, int]]):
        pairs.sort()
        self.days = [day for day, _ in pairs]
        self.indices = [index for _, index in pairs]

    def within(self, day: int, tolerance: float) -> list[tuple[int, float]]:
        """(index, similarity) of the members at most tolerance days from day, scored
        as date_similarity does."""
        start = bisect_left(self.days, day - tolerance)
        stop = bisect_right(self.days, day + tolerance, start)
        return [
            (index, 1.0 - abs(day - other) / (2 * tolerance))
            for other, index in zip(self.days[start:stop], self.indices[start:stop], strict=True)
        ]


def clear_date_cache() -> None:
    clear_parse_date_cache()
    _event_date.cache_clear()


_CERTAINTY_CODES = {CERTAIN: 0, APPROXIMATE: 1, UNKNOWN: 2}


def date_similarity_matrix(
    ai: list[EventDate], gt: list[EventDate], settings: MatchSettings
) -> tuple[np.ndarray, np.ndarray]:
    """date_similarity for every pair at once: (similarity, within_tolerance).

    Same rules as date_similarity, which stays as the readable reference (the
    tests check they agree).
    """
    ai_days, ai_codes = _date_arrays(ai)
    gt_days, gt_codes = _date_arrays(gt)
    # A missing date carries the "unknown" code: both mean "matches any date".
    free = (ai_codes == 2)[:, None] | (gt_codes == 2)[None, :]
    approximate = (ai_codes == 1)[:, None] | (gt_codes == 1)[None, :]
    tolerance = np.where(
        approximate, settings.approximate_date_tolerance_days, settings.date_tolerance_days
    )
    days_apart = np.abs(ai_days[:, None] - gt_days[None, :])
    within = free | (days_apart <= tolerance)
    similarity = np.where(free, 1.0, 1.0 - days_apart / (2.0 * tolerance))
    return similarity, within


def _date_arrays(dates: list[EventDate]) -> tuple[np.ndarray, np.ndarray]:
    days = np.array([d.ordinal or 0 for d in dates], dtype=np.int64)
    codes = np.array(
        [2 if d.ordinal is None else _CERTAINTY_CODES[d.certainty] for d in dates], dtype=np.int8
    )
    return days, codes
