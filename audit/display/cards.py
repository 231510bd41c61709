"""A payload as cards: one per person, event and pair bond, with its deletions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from audit.display.diffs import diff_kind
from audit.display.labels import Labels, person_name
from metrics.families.payload.items import ENTITY_KINDS, entity_items

SARF_ARROWS = {"up": "↑", "down": "↓", "same": "="}
SARF_LETTERS = (("symptom", "S"), ("anxiety", "A"), ("relationship", "R"), ("functioning", "F"))


@dataclass
class Card:
    kind: str
    id: Any
    title: str
    lines: list[tuple[str, str]] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    confidence: Any = None
    state: str = ""  # "", "added", "changed", "removed", "here" (coded at this statement)
    changed_fields: list[str] = field(default_factory=list)

    @property
    def tag(self) -> str:
        return {"people": "Person", "events": "Event", "pair_bonds": "Bond"}[self.kind]


def _confidence(item: dict) -> str:
    value = item.get("confidence")
    return (
        "" if value is None else f"{value:.2f}" if isinstance(value, (int, float)) else str(value)
    )


def person_card(person: dict, labels: Labels) -> Card:
    lines = [("Gender", person.get("gender") or "—")]
    if person.get("parents") is not None:
        lines.append(("Parents", labels.bond(person["parents"])))
    elif person.get("parent_a") is not None or person.get("parent_b") is not None:
        parents = (
            f"{labels.person(person.get('parent_a'))} & {labels.person(person.get('parent_b'))}"
        )
        lines.append(("Parents", parents))
    return Card(
        "people", person.get("id"), person_name(person), lines, confidence=_confidence(person)
    )


def _date_text(event: dict) -> str:
    date = event.get("dateTime") or "no date"
    if event.get("endDateTime"):
        date = f"{date} – {event['endDateTime']}"
    certainty = event.get("dateCertainty")
    return f"{date} ({certainty})" if certainty else date


def sarf_codes(event: dict, labels: Labels) -> list[str]:
    codes = []
    for variable, letter in SARF_LETTERS:
        value = event.get(variable)
        if value is None:
            continue
        code = f"{letter} {SARF_ARROWS.get(value, value)}"
        if variable == "relationship":
            targets = [labels.person(t) for t in event.get("relationshipTargets") or []]
            triangles = [labels.person(t) for t in event.get("relationshipTriangles") or []]
            code += f" → {', '.join(targets)}" if targets else ""
            code += f" △ {', '.join(triangles)}" if triangles else ""
        codes.append(code)
    return codes


def event_card(event: dict, labels: Labels) -> Card:
    lines = [("Who", labels.person(event.get("person")))]
    for key, label in (("spouse", "Spouse"), ("child", "Child")):
        if event.get(key) is not None:
            lines.append((label, labels.person(event[key])))
    lines.append(("When", _date_text(event)))
    for key in ("description", "location", "notes"):
        if event.get(key):
            lines.append((key.title(), str(event[key])))
    title = str(event.get("kind") or "event").title()
    return Card(
        "events", event.get("id"), title, lines, sarf_codes(event, labels), _confidence(event)
    )


MARRIED: dict[object, str] = {True: "yes", False: "no"}


def bond_card(bond: dict, labels: Labels) -> Card:
    married = MARRIED.get(bond.get("married"), "unknown")
    title = f"{labels.person(bond.get('person_a'))} & {labels.person(bond.get('person_b'))}"
    return Card(
        "pair_bonds", bond.get("id"), title, [("Married", married)], confidence=_confidence(bond)
    )


CARD_BUILDERS = {"people": person_card, "events": event_card, "pair_bonds": bond_card}


@dataclass
class PayloadView:
    """A payload as cards per kind plus its deletes, ready for a template."""

    sections: list[tuple[str, list[Card]]]
    deletes: list[tuple[Any, str, str]]  # (id, label, state)
    empty: bool


def present(payload: dict | None, labels: Labels, *, base: dict | None = None) -> PayloadView:
    """Cards for a payload; with a base payload, items are marked added / changed / removed."""
    payload = payload or {}
    sections = []
    for kind in ENTITY_KINDS:
        cards = [CARD_BUILDERS[kind](item, labels) for item in entity_items(payload, kind)]
        if base is not None:
            cards = _mark(kind, cards, payload, base, labels)
        sections.append((kind, cards))
    deletes = _delete_rows(payload, base, labels)
    empty = not any(cards for _, cards in sections) and not deletes
    return PayloadView(sections, deletes, empty)


def _mark(kind: str, cards: list[Card], payload: dict, base: dict, labels: Labels) -> list[Card]:
    diff = diff_kind(entity_items(base, kind), entity_items(payload, kind))
    for card in cards:
        card.state, card.changed_fields = diff.states.get(card.id, ("", []))
    for item in diff.removed:
        card = CARD_BUILDERS[kind](item, labels)
        card.state = "removed"
        cards.append(card)
    return cards


def _delete_rows(payload: dict, base: dict | None, labels: Labels) -> list[tuple[Any, str, str]]:
    ids = list(payload.get("delete") or [])
    base_ids = set((base or {}).get("delete") or [])
    rows = [
        (i, labels.any(i), "added" if base is not None and i not in base_ids else "") for i in ids
    ]
    if base is not None:
        rows += [(i, labels.any(i), "removed") for i in (base.get("delete") or []) if i not in ids]
    return rows
