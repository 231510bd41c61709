"""What each statement of the error drill-down got wrong, named as a coder names it.

A statement's stored F1 result lists the ids of the items the AI missed (ground-truth ids) and
added (its own ids), the matched event pairs and, per matched pair, the two SARF codes. This
module turns the part one figure of the error analysis counts into words ("Emily Walker",
"John Walker's shift event", "R (relationship): AI conflict, ground truth distance"), from the
statement's ground truth, the AI's extraction and the names of earlier statements. Pure: the
caller reads the payloads (``metrics.selectors.error_statement_payloads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from audit.display import FIELD_WORDS, Labels, item_words
from metrics.families.extraction.sarf import SARF_VARIABLES
from metrics.families.extraction.text import normalize_text
from metrics.families.payload.items import ENTITY_KINDS, entity_items

SHOWN = 6  # items named per statement; the rest are counted


@dataclass
class StatementPayloads:
    """One listed statement's stored result values, its approved ground truth and the AI's
    extraction, with the names known from its discussion's earlier statements on each side
    (people's names only: items are named by them, ``item_words``)."""

    values: dict[str, Any]
    gt: dict[str, Any] | None
    ai: dict[str, Any] | None
    gt_labels: Labels = field(default_factory=Labels)
    ai_labels: Labels = field(default_factory=Labels)


def payload_sides(figure: str) -> tuple[str, ...]:
    """The payloads ``error_items`` reads for ``figure``: the ground truth for what the AI
    missed and for SARF codes, the AI's extraction for what it added."""
    kind = figure.partition(":")[0]
    if kind.endswith("_fp"):
        return ("ai",)
    if kind.endswith("_fn") or kind == "sarf":
        return ("gt",)
    return ()


def payload_lists(figure: str) -> tuple[str, ...]:
    """The lists of a listed statement's payload ``error_items`` reads for ``figure``, besides
    the people (who name the items, and all an earlier statement's payload is read for)."""
    kind = figure.partition(":")[0]
    if kind == "sarf":
        return ("events",)
    entity = kind.rpartition("_")[0]
    return (entity,) if entity in ENTITY_KINDS and entity != "people" else ()


def value_keys(figure: str) -> tuple[str, ...]:
    """The keys of a statement's stored F1 values ``error_items`` reads for ``figure``."""
    kind = figure.partition(":")[0]
    if kind == "sarf":
        return ("events_matches", "sarf_pairs")
    if kind in {f"{e}_{c}" for e in ENTITY_KINDS for c in ("fn", "fp")}:
        return (f"{kind}_ids",)
    return ()


def error_items(figure: str, found: StatementPayloads) -> list[str]:
    """The items of one statement behind ``figure`` (see ``metrics.engine.errors``), in words;
    past ``SHOWN``, one line saying how many more."""
    kind, _, detail = figure.partition(":")
    if kind in ("events_fn", "events_fp") and detail:  # one event kind
        named = _unmatched(found, "events", missed=kind == "events_fn", event_kind=detail)
    elif kind in {f"{e}_{c}" for e in ENTITY_KINDS for c in ("fn", "fp")}:
        entity, side = kind.rsplit("_", 1)
        named = _unmatched(found, entity, missed=side == "fn")
    elif kind == "sarf":
        variable, _, codes = detail.partition(":")
        ai_code, _, gt_code = codes.partition(":")
        named = _sarf_differences(found, variable, ai_code, gt_code)
    else:
        named = []
    if len(named) > SHOWN:
        return [*named[:SHOWN], f"and {len(named) - SHOWN} more"]
    return named


def _by_id(payload: dict[str, Any] | None, entity: str) -> dict[Any, dict[str, Any]]:
    return {item.get("id"): item for item in entity_items(payload or {}, entity)}


def _unmatched(
    found: StatementPayloads, entity: str, *, missed: bool, event_kind: str = ""
) -> list[str]:
    """The ground-truth items the AI missed (``missed``) or the AI's items with no match."""
    payload, labels = (found.gt, found.gt_labels) if missed else (found.ai, found.ai_labels)
    labels = labels.copy().feed_people(payload)
    items = _by_id(payload, entity)
    ids = found.values.get(f"{entity}_{'fn' if missed else 'fp'}_ids") or []
    named = []
    for ident in ids:
        item = items.get(ident)
        if item is None:
            named.append("an item no longer in this statement's coding")
            continue
        if event_kind and _kind(item) != event_kind:
            continue
        named.append(_words(entity, item, labels))
    return named


def _sarf_differences(
    found: StatementPayloads, variable: str, ai_code: str, gt_code: str
) -> list[str]:
    """The matched events whose SARF codes differ: every differing variable (``variable``
    empty), or the one variable with exactly these codes."""
    labels = found.gt_labels.copy().feed_people(found.gt)
    events = _by_id(found.gt, "events")
    matches = found.values.get("events_matches") or []
    pairs = found.values.get("sarf_pairs") or {}
    named = []
    for index, match in enumerate(matches):
        differing = []
        for name in SARF_VARIABLES:
            if variable and name != variable:
                continue
            codes = (pairs.get(name) or [])[index : index + 1]
            if not codes:
                continue
            ai, gt = codes[0]
            if ai == gt or (variable and (ai, gt) != (ai_code, gt_code)):
                continue
            differing.append(f"{FIELD_WORDS.get(name, name)}: AI {ai}, ground truth {gt}")
        if differing:
            event = events.get(match.get("gt_id")) or {}
            named.append(f"{_words('events', event, labels)} — {'; '.join(differing)}")
    return named


def _kind(event: dict[str, Any]) -> str:
    """An event's kind as the error analysis labels it (``fn_event_kinds``)."""
    return normalize_text(event.get("kind")) or "none"


def _words(entity: str, item: dict[str, Any], labels: Labels) -> str:
    words = item_words(entity, item, labels)
    if entity == "events":
        when = item.get("dateTime")
        return f"{words} ({when})" if when else words
    return words
