"""Failure packets: for a run (or a configuration's replicates) and one error pattern, what to
paste into an assistant asked to improve the extraction prompt, as JSON and as Markdown.

A packet holds the pattern in one line with its counts (how often, in how many statements and
discussions, its share of all errors), the N statements where it happens most (each with its
text and the few statements before it, the AI's and the ground truth's items of the pattern
side by side, the auditor's note, the comment thread and the guidelines version it was coded
under) and the guideline sections in force that speak of it.

Reads stored results: the counts and the ranking come from the error index of each run's
stored error analysis (``metrics.engine.errors``), the items from the listed statements'
stored results and payloads; wrong parent links, which the index does not count, are found
by reading the runs' statement results that match people (``PARENT_CHUNK`` at a time).

Bounded: at most ``MAX_STATEMENTS`` statements; per statement its text cut at
``TEXT_CHARS``, ``CONTEXT_BEFORE`` statements before it cut at ``CONTEXT_CHARS``, at most
``ITEMS`` items a side, the note cut at ``NOTE_CHARS``, at most ``COMMENTS`` comments cut at
``COMMENT_CHARS``; guideline sections up to ``GUIDELINE_CHARS``. Whatever is left over
``MAX_MARKDOWN`` characters of Markdown (or ``MAX_JSON`` of JSON) drops statements from the end,
and the packet says so. Admins only (a packet shows everyone's codings); comments are those
the reader may see (``audit.selectors.threads.comments_visible_to``).

By part: ``patterns`` (counts, ranking), ``statements``, ``guidelines``, ``packet`` (assembled,
bounded) and ``formats`` (JSON, Markdown).
"""

from metrics.packets.formats import packet_json, packet_markdown
from metrics.packets.guidelines import GUIDELINE_CHARS
from metrics.packets.packet import FORMAT_VERSION, MAX_JSON, MAX_MARKDOWN, failure_packet
from metrics.packets.patterns import (
    DEFAULT_STATEMENTS,
    MAX_STATEMENTS,
    PARENT_CHUNK,
    PacketInputError,
    PacketNotAllowed,
    PacketNotReady,
    packet_patterns,
)
from metrics.packets.statements import (
    COMMENT_CHARS,
    COMMENTS,
    CONTEXT_BEFORE,
    CONTEXT_CHARS,
    ITEMS,
    NOTE_CHARS,
    TEXT_CHARS,
)

__all__ = [
    "COMMENTS",
    "COMMENT_CHARS",
    "CONTEXT_BEFORE",
    "CONTEXT_CHARS",
    "DEFAULT_STATEMENTS",
    "FORMAT_VERSION",
    "GUIDELINE_CHARS",
    "ITEMS",
    "MAX_JSON",
    "MAX_MARKDOWN",
    "MAX_STATEMENTS",
    "NOTE_CHARS",
    "PARENT_CHUNK",
    "TEXT_CHARS",
    "PacketInputError",
    "PacketNotAllowed",
    "PacketNotReady",
    "failure_packet",
    "packet_json",
    "packet_markdown",
    "packet_patterns",
]
