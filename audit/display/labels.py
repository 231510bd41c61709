"""Readable names for the items of a payload: people by name, ids resolved in discussion order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from metrics.families.payload.items import entity_items

KIND_TITLES = {"people": "People", "events": "Events", "pair_bonds": "Pair bonds"}


def person_name(person: dict) -> str:
    name = " ".join(str(part) for part in (person.get("name"), person.get("last_name")) if part)
    return name or "a person without a name"


class Labels:
    """Readable names for item ids, fed payload by payload in discussion order.

    A later statement may rename someone, so a later payload's label wins.
    """

    def __init__(self) -> None:
        self.people: dict[Any, str] = {}
        self.bonds: dict[Any, tuple[Any, Any]] = {}
        self.events: dict[Any, str] = {}

    def feed(self, payload: dict | None) -> Labels:
        payload = payload or {}
        for person in entity_items(payload, "people"):
            self.people[person.get("id")] = person_name(person)
        for bond in entity_items(payload, "pair_bonds"):
            self.bonds[bond.get("id")] = (bond.get("person_a"), bond.get("person_b"))
        for event in entity_items(payload, "events"):
            self.events[event.get("id")] = self._event_title(event)
        return self

    def feed_people(self, payload: dict | None) -> Labels:
        """Only the people's names: all that naming an item needs (``item_words``)."""
        for person in entity_items(payload or {}, "people"):
            self.people[person.get("id")] = person_name(person)
        return self

    def copy(self) -> Labels:
        clone = Labels()
        clone.people, clone.bonds, clone.events = (
            dict(self.people),
            dict(self.bonds),
            dict(self.events),
        )
        return clone

    def person(self, ident: Any) -> str:
        if ident is None or ident == "":
            return "—"
        return self.people.get(ident, "someone not in this coding")

    def bond(self, ident: Any) -> str:
        if ident is None or ident == "":
            return "—"
        if ident not in self.bonds:
            return "a pair bond not in this coding"
        a, b = self.bonds[ident]
        return f"{self.person(a)} & {self.person(b)}"

    def any(self, ident: Any) -> str:
        """What a delete id refers to, whichever list it lives in."""
        if ident in self.people:
            return f"person {self.people[ident]}"
        if ident in self.events:
            return f"event {self.events[ident]}"
        if ident in self.bonds:
            return f"pair bond {self.bond(ident)}"
        if isinstance(ident, int) and ident > 0:
            return "an item of the family diagram"  # committed: stored outside the deltas
        return "an item not in this coding"

    def _event_title(self, event: dict) -> str:
        who = event.get("person")
        kind = str(event.get("kind") or "event")
        return f"{kind} · {self.person(who)}" if who is not None else kind


def distinct_names(pairs: Iterable[tuple[Any, str]]) -> list[tuple[Any, str]]:
    """(id, name) pairs with a plain disambiguator where two share a name: "Emily Walker",
    "Emily Walker (2nd)". Ids stay out of sight (the JSON editor and tooltips show them)."""
    seen: dict[str, int] = {}
    named = []
    for ident, name in pairs:
        seen[name] = seen.get(name, 0) + 1
        named.append((ident, name if seen[name] == 1 else f"{name} ({ordinal(seen[name])})"))
    return named


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def readable_labels(data: Any, labels: Labels) -> Labels:
    """``labels`` with the people of a JSON text that may not be valid: each whose id can be
    looked up and whose names are plain text (never a NUL or a lone surrogate on a page)."""
    labels = labels.copy()
    people = data.get("people") if isinstance(data, dict) else None
    for person in people if isinstance(people, list) else []:
        if not isinstance(person, dict):
            continue
        ident, names = person.get("id"), (person.get("name"), person.get("last_name"))
        if isinstance(ident, int) and all(n is None or is_plain(n) for n in names):
            labels.people[ident] = person_name(person)
    return labels


def is_plain(value: Any) -> bool:
    """Text a page can show: a non-empty string with no NUL and no lone surrogate."""
    if not isinstance(value, str) or not value or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def item_words(kind: str, item: dict, labels: Labels) -> str:
    """An item as a coder names it: "Emily Walker", "John Smith's shift event", "The pair
    bond Emily Walker & John Walker"."""
    if kind == "people":
        return (
            person_name(item)
            if (item.get("name") or item.get("last_name"))
            else "A person without a name"
        )
    if kind == "events":
        who = item.get("person")
        what = str(item.get("kind") or "event")
        name = labels.people.get(who)  # someone of an earlier statement may not be fed
        return f"{name}'s {what} event" if name else f"A {what} event"
    return f"The pair bond {labels.person(item.get('person_a'))} & {labels.person(item.get('person_b'))}"
