"""What changed between two payloads, field by field, in words (the revision history)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from audit.display.cards import CARD_BUILDERS
from audit.display.diffs import deletes_of
from audit.display.labels import Labels
from metrics.families.payload.items import ENTITY_KINDS, entity_items

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
    old_deletes, new_deletes = deletes_of(before), deletes_of(after)
    for ident in new_deletes - old_deletes:
        changes.append(
            FieldChange("delete", ident, labels.any(ident), "delete", "", "deleted", "added")
        )
    for ident in old_deletes - new_deletes:
        changes.append(
            FieldChange("delete", ident, labels.any(ident), "delete", "deleted", "", "removed")
        )
    return changes


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
