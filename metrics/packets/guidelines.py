"""The guideline sections in force that speak of a pattern."""

from __future__ import annotations

import re
from typing import Any

from audit.services.guidelines import guideline_current
from metrics.families.extraction.patterns import (
    Pattern,
)
from metrics.packets.statements import cut

GUIDELINE_CHARS = 4000
# Words a guideline section must name to be one of a pattern's.
TOPICS = {
    "people": ("person", "people"),
    "events": ("event",),
    "pair_bonds": ("pair bond", "bond", "married", "partner"),
    "parents": ("parent", "child", "pair bond"),
}


HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.M)


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, section text) of every heading of a Markdown text, in order."""
    marks = list(HEADING.finditer(text))
    return [
        (m.group(2).strip(), text[m.start() : marks[i + 1].start() if i + 1 < len(marks) else None])
        for i, m in enumerate(marks)
    ]


def _topics(pattern: Pattern) -> tuple[str, ...]:
    if pattern.kind == "sarf":
        return (pattern.variable, "sarf")
    if pattern.kind == "event_kind":
        return (pattern.event_kind, *TOPICS["events"])
    return TOPICS[pattern.entity or pattern.kind]


def packet_guidelines(pattern: Pattern) -> dict[str, Any] | None:
    """The sections of the guidelines in force that speak of the pattern: those whose heading
    names a topic word, else those whose text does (at most GUIDELINE_CHARS in all)."""
    current = guideline_current()
    if current is None:
        return None
    sections = _sections(current.text)
    words = _topics(pattern)
    chosen = [s for s in sections if any(w in s[0].lower() for w in words)] or [
        s for s in sections if any(w in s[1].lower() for w in words)
    ]
    out, used = [], 0
    for heading, text in chosen:
        if used >= GUIDELINE_CHARS:
            break
        piece = cut(text.strip(), GUIDELINE_CHARS - used)
        used += len(piece)
        out.append({"heading": heading, "text": piece})
    return {"version": current.number, "sections": out}
