"""Turning PDP payloads into readable cards, diffs and the statement F1 panel.

Pure functions over plain dicts: templates get ready-made strings and never resolve ids.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from metrics.families.payload.rules import ENTITY_KINDS, entity_items, is_edited, normalize_value

KIND_TITLES = {"people": "People", "events": "Events", "pair_bonds": "Pair bonds"}
SARF_ARROWS = {"up": "↑", "down": "↓", "same": "="}
SARF_LETTERS = (("symptom", "S"), ("anxiety", "A"), ("relationship", "R"), ("functioning", "F"))


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
        named.append((ident, name if seen[name] == 1 else f"{name} ({_ordinal(seen[name])})"))
    return named


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --- problems said about things on screen ---------------------------------------------------

FIELD_WORDS = {
    "name": "name",
    "last_name": "last name",
    "gender": "gender",
    "parents": "parents",
    "parent_a": "parents",
    "parent_b": "parents",
    "kind": "kind",
    "person": "who",
    "spouse": "spouse",
    "child": "child",
    "dateTime": "date",
    "endDateTime": "end date",
    "dateCertainty": "certainty",
    "description": "description",
    "location": "location",
    "symptom": "S (symptom)",
    "anxiety": "A (anxiety)",
    "relationship": "R (relationship)",
    "functioning": "F (functioning)",
    "relationshipTargets": "R targets",
    "relationshipTriangles": "triangle",
    "person_a": "first person",
    "person_b": "second person",
    "married": "married",
    "confidence": "confidence",
}
_PATH = re.compile(r"^(people|events|pair_bonds)\[(\d+)\](?:\.(\w+))?")
_MISSING = re.compile(
    r"^'?(-?\d+)'? is not a (person|pair bond) in this statement or an earlier one"
)


def problem_sentence(path: str, message: str, payload: dict, labels: Labels) -> str:
    """A problem as a sentence about what the coder sees: "Emily Walker's parents point at a
    pair bond that is no longer in this coding", never a JSON path or an id alone."""
    found = _PATH.match(path)
    if found is None:
        return message if not path else f"{path.split('[')[0]}: {message}"
    kind, index, name = found[1], int(found[2]), found[3] or ""
    items = entity_items(payload, kind)
    item = items[index] if index < len(items) else {}
    owner = item_words(kind, item, labels)
    field_words = FIELD_WORDS.get(name, name)
    missing = _MISSING.match(message)
    if missing:
        verb = (
            "points" if name in ("person", "spouse", "child", "person_a", "person_b") else "point"
        )
        return f"{owner}'s {field_words} {verb} at a {missing[2]} that is no longer in this coding"
    return f"{owner}, {field_words}: {message}" if field_words else f"{owner}: {message}"


def field_problem(message: str) -> str:
    """A problem as the row says it beside its field ("Who: points at a person that is no
    longer in this coding"): a reference to nothing names no id."""
    missing = _MISSING.match(message)
    return f"points at a {missing[2]} that is no longer in this coding" if missing else message


SINGULAR = {"people": "person", "events": "event", "pair_bonds": "pair bond"}


def json_problem_sentence(path: str, message: str, data: Any, labels: Labels) -> str:
    """A problem of the raw JSON editor's text as a sentence about the item it sits in, then
    where it is in the JSON (which is what that editor shows): "Emily Walker, name: text is
    too long (at people[2].name)", "The 2nd event, date: expected string, got number 5 (at
    events[1].dateTime)". The text is not valid yet: only names that are plain text are used,
    and the people of ``data`` are named only when ``readable_labels`` could read them."""
    found = _PATH.match(path)
    if found is None:  # the text or a whole list ("events: expected array"): its key is its name
        return f"{path}: {message}" if path else message
    kind, index, name = found[1], int(found[2]), found[3] or ""
    items = data.get(kind) if isinstance(data, dict) else None
    item = items[index] if isinstance(items, list) and index < len(items) else None
    owner = f"The {_ordinal(index + 1)} {SINGULAR[kind]}"
    if isinstance(item, dict) and (kind != "people" or _plain(item.get("name"))):
        # an id that is a list or an object has no name to look up
        with contextlib.suppress(TypeError):
            owner = item_words(kind, item, labels)
    if not _plain(owner):
        owner = f"The {_ordinal(index + 1)} {SINGULAR[kind]}"
    field_words = FIELD_WORDS.get(name, name)
    said = f"{owner}, {field_words}: {message}" if field_words else f"{owner}: {message}"
    return f"{said} (at {path})"


def readable_labels(data: Any, labels: Labels) -> Labels:
    """``labels`` with the people of a JSON text that may not be valid: each whose id can be
    looked up and whose names are plain text (never a NUL or a lone surrogate on a page)."""
    labels = labels.copy()
    people = data.get("people") if isinstance(data, dict) else None
    for person in people if isinstance(people, list) else []:
        if not isinstance(person, dict):
            continue
        ident, names = person.get("id"), (person.get("name"), person.get("last_name"))
        if isinstance(ident, int) and all(n is None or _plain(n) for n in names):
            labels.people[ident] = person_name(person)
    return labels


def _plain(value: Any) -> bool:
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


# --- cards ----------------------------------------------------------------------------------


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


# --- diffs ----------------------------------------------------------------------------------


@dataclass
class KindDiff:
    states: dict[Any, tuple[str, list[str]]]  # id -> (state, changed fields)
    removed: list[dict]


def diff_kind(base_items: Iterable[dict], items: Iterable[dict]) -> KindDiff:
    """Match items by id: the auditor's copy keeps the AI's ids, so ids line up."""
    base_by_id = {item.get("id"): item for item in base_items}
    states: dict[Any, tuple[str, list[str]]] = {}
    seen = set()
    for item in items:
        ident = item.get("id")
        seen.add(ident)
        before = base_by_id.get(ident)
        if before is None:
            states[ident] = ("added", [])
        elif is_edited(before, item):
            states[ident] = ("changed", changed_fields(before, item))
    removed = [item for ident, item in base_by_id.items() if ident not in seen]
    return KindDiff(states, removed)


def changed_fields(before: dict, after: dict) -> list[str]:
    keys = (set(before) | set(after)) - {"confidence", "id"}
    return sorted(
        key for key in keys if normalize_value(before.get(key)) != normalize_value(after.get(key))
    )


def diff_summary(before: dict | None, after: dict | None) -> str:
    """One line such as "+1 people, ~2 events, −1 pair_bonds" for the revision history."""
    parts = []
    for kind in ENTITY_KINDS:
        diff = diff_kind(entity_items(before, kind), entity_items(after, kind))
        added = sum(1 for state, _ in diff.states.values() if state == "added")
        changed = sum(1 for state, _ in diff.states.values() if state == "changed")
        parts += [f"+{_count(added, kind)}"] if added else []
        parts += [f"~{_count(changed, kind)}"] if changed else []
        parts += [f"−{_count(len(diff.removed), kind)}"] if diff.removed else []
    before_deletes, after_deletes = (
        set((before or {}).get("delete") or []),
        set((after or {}).get("delete") or []),
    )
    if before_deletes != after_deletes:
        parts.append("deletes changed")
    return ", ".join(parts) or "no content change"


# --- field-level changes ------------------------------------------------------------------------

PERSON_FIELDS = frozenset(
    {"person", "spouse", "child", "person_a", "person_b", "parent_a", "parent_b"}
)
PEOPLE_LIST_FIELDS = frozenset({"relationshipTargets", "relationshipTriangles"})
TAGS = {"people": "Person", "events": "Event", "pair_bonds": "Pair bond"}
NOTHING = "—"


@dataclass(frozen=True)
class FieldChange:
    """One field of one item: old -> new. Added / removed items list their filled fields."""

    kind: str  # people / events / pair_bonds / delete
    item_id: Any
    item: str  # readable: "Person John Smith (#-1)"
    field: str
    old: str
    new: str
    change: str  # added / removed / changed

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "item_id": self.item_id,
            "item": self.item,
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "change": self.change,
        }


def field_changes(
    before: dict | None, after: dict | None, labels: Labels | None = None
) -> list[FieldChange]:
    """What changed from one payload to the next, field by field, with readable values.

    Items are matched by id; confidence counts as a field (it marks a human edit). `labels`
    names people from earlier statements; both payloads add their own names.
    """
    labels = (labels or Labels()).copy().feed(before).feed(after)
    changes: list[FieldChange] = []
    for kind in ENTITY_KINDS:
        old_items = {item.get("id"): item for item in entity_items(before, kind)}
        new_ids = set()
        for item in entity_items(after, kind):
            new_ids.add(item.get("id"))
            old = old_items.get(item.get("id"))
            changes += _item_changes(kind, old, item, labels)
        for ident, old in old_items.items():
            if ident not in new_ids:
                changes += _item_changes(kind, old, None, labels)
    old_deletes, new_deletes = _deletes(before), _deletes(after)
    for ident in new_deletes - old_deletes:
        changes.append(
            FieldChange("delete", ident, labels.any(ident), "delete", "", "deleted", "added")
        )
    for ident in old_deletes - new_deletes:
        changes.append(
            FieldChange("delete", ident, labels.any(ident), "delete", "deleted", "", "removed")
        )
    return changes


def _deletes(payload: dict | None) -> set:
    value = (payload or {}).get("delete")
    return {i for i in value if isinstance(i, (int, str))} if isinstance(value, list) else set()


def _item_changes(
    kind: str, old: dict | None, new: dict | None, labels: Labels
) -> list[FieldChange]:
    item = new if new is not None else (old or {})  # one of them is always given
    ident = item.get("id")
    title = f"{TAGS[kind]} {CARD_BUILDERS[kind](item, labels).title} (#{ident})"
    change = "added" if old is None else "removed" if new is None else "changed"
    fields = sorted((set(old or {}) | set(new or {})) - {"id"})
    rows = []
    for name in fields:
        before, after = (old or {}).get(name), (new or {}).get(name)
        if before == after or (old is None and after is None) or (new is None and before is None):
            continue
        rows.append(
            FieldChange(
                kind, ident, title, name,
                _value_text(name, before, labels), _value_text(name, after, labels), change,
            )
        )  # fmt: skip
    return rows


def _value_text(name: str, value: Any, labels: Labels) -> str:
    if value is None or value == "" or value == []:
        return NOTHING
    if name in PERSON_FIELDS:
        return labels.person(value)
    if name == "parents":
        return labels.bond(value)
    if name in PEOPLE_LIST_FIELDS and isinstance(value, list):
        return ", ".join(labels.person(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@dataclass(frozen=True)
class SubmitSummary:
    """What a submit sends, said plainly: the changes from the AI's extraction it started from
    (or from nothing, for a coding started empty) and the problems that will refuse it."""

    feedback_id: int
    changes: int
    text: str  # "1 event added, 2 people changed"
    from_ai: bool
    problems: int


def submit_summary(
    *, feedback_id: int, ai: dict | None, coded: dict, problems: int
) -> SubmitSummary:
    parts, total = [], 0
    for kind in ENTITY_KINDS:
        diff = diff_kind(entity_items(ai, kind), entity_items(coded, kind))
        added = sum(1 for state, _ in diff.states.values() if state == "added")
        changed = sum(1 for state, _ in diff.states.values() if state == "changed")
        for n, verb in ((added, "added"), (changed, "changed"), (len(diff.removed), "removed")):
            if n:
                parts.append(f"{_count(n, kind)} {verb}")
                total += n
    deletes = _deletes(ai) ^ _deletes(coded)
    if deletes:
        parts.append(
            f"{len(deletes)} earlier item{'s' if len(deletes) != 1 else ''} to delete changed"
        )
        total += len(deletes)
    return SubmitSummary(feedback_id, total, ", ".join(parts), ai is not None, problems)


def _count(n: int, kind: str) -> str:
    singular = {"people": "person", "events": "event", "pair_bonds": "pair bond"}[kind]
    return f"{n} {singular if n == 1 else KIND_TITLES[kind].lower()}"


# --- statement F1 ---------------------------------------------------------------------------


@dataclass
class F1Row:
    kind: str
    title: str
    f1: float | None
    tp: int
    fp: int
    fn: int
    matches: list[tuple[str, str, float | None]]
    spurious: list[str]
    missed: list[str]


def _payload_labels(payload: dict | None, fallback: Labels) -> dict[str, dict[Any, str]]:
    labels = fallback.copy().feed(payload)
    titles: dict[str, dict[Any, str]] = {}
    for kind in ENTITY_KINDS:
        named = [
            (item.get("id"), CARD_BUILDERS[kind](item, labels).title)
            for item in entity_items(payload, kind)
        ]
        titles[kind] = dict(distinct_names(named))
    return titles


def f1_rows(values: dict, ai: dict | None, gt: dict | None, labels: Labels) -> list[F1Row]:
    """Per-type rows naming which AI item matched which ground-truth item.

    `gt` is None when the viewer may not see the approved feedback: its items are not named.
    """
    ai_titles = _payload_labels(ai, labels)
    gt_titles = _payload_labels(gt, labels) if gt is not None else {k: {} for k in ENTITY_KINDS}
    return [_f1_row(kind, values, ai_titles[kind], gt_titles[kind]) for kind in ENTITY_KINDS]


def _f1_row(kind: str, values: dict, ai_t: dict, gt_t: dict) -> F1Row:
    def ai(ident: Any) -> str:
        return ai_t.get(ident, "an item not shown")

    def gt(ident: Any) -> str:
        return gt_t.get(ident, "an item not shown")

    return F1Row(
        kind=kind,
        title=KIND_TITLES[kind],
        f1=values.get(f"{kind}_f1"),
        tp=values.get(f"{kind}_tp", 0),
        fp=values.get(f"{kind}_fp", 0),
        fn=values.get(f"{kind}_fn", 0),
        matches=[
            (ai(m.get("ai_id")), gt(m.get("gt_id")), m.get("score"))
            for m in values.get(f"{kind}_matches") or []
        ],
        spurious=[ai(i) for i in values.get(f"{kind}_fp_ids") or []],
        missed=[gt(i) for i in values.get(f"{kind}_fn_ids") or []],
    )


def sarf_scores(values: dict) -> list[tuple[str, float | None]]:
    return [(name.title(), values.get(f"{name}_macro_f1")) for name, _ in SARF_LETTERS]


def f1_tone(value: float | None) -> str:
    """Badge colour: good from 0.8, warn from 0.5."""
    if value is None:
        return ""
    return "good" if value >= 0.8 else "warn" if value >= 0.5 else "bad"
