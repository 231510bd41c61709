"""A payload's problems (schema, references, JSON syntax) as sentences a person reads."""

from __future__ import annotations

import contextlib
import re
from typing import Any

from audit.display.labels import Labels, is_plain, item_words, ordinal
from metrics.families.payload.items import entity_items

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
    owner = f"The {ordinal(index + 1)} {SINGULAR[kind]}"
    if isinstance(item, dict) and (kind != "people" or is_plain(item.get("name"))):
        # an id that is a list or an object has no name to look up
        with contextlib.suppress(TypeError):
            owner = item_words(kind, item, labels)
    if not is_plain(owner):
        owner = f"The {ordinal(index + 1)} {SINGULAR[kind]}"
    field_words = FIELD_WORDS.get(name, name)
    said = f"{owner}, {field_words}: {message}" if field_words else f"{owner}: {message}"
    return f"{said} (at {path})"
