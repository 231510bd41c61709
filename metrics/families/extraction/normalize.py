"""Canonical form of a payload for the exact-match comparison.

Entities are sorted by content, ids renumbered 1..n per entity type and every
reference rewritten accordingly; confidence is dropped; text is lowercased with
whitespace collapsed; `parents` (a pair-bond id) and legacy parent_a/parent_b
both become the sorted list of parent person references. References to ids the
payload does not define (committed entities) become "#<id>" strings so they can
never collide with a renumbered id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dates import normalize_certainty
from .payload import (
    as_id,
    as_payload,
    bonds_by_id,
    entity_list,
    id_list,
    item_id,
    parent_person_ids,
)
from .sarf import SARF_VARIABLES
from .text import normalize_text

Ref = int | str | None
EVENT_TEXT_FIELDS: tuple[str, ...] = ("description", "notes", "location", "dateTime", "endDateTime")


def normalize_for_exact_match(pdp: dict[str, Any] | None) -> dict[str, Any]:
    payload = as_payload(pdp)
    people = entity_list(payload, "people")
    bonds = entity_list(payload, "pair_bonds")
    people = sorted(people, key=_person_sort_key)  # stable: ties keep list order
    person_ref = _renumbering([item_id(p) for p in people])
    normal_bonds = sorted((_normal_bond(bond, person_ref) for bond in bonds), key=_ref_sort_key)
    normal_events = sorted(
        (_normal_event(event, person_ref) for event in entity_list(payload, "events")),
        key=_event_sort_key,
    )
    bond_lookup = bonds_by_id(bonds)
    return {
        "people": _numbered([_normal_person(p, person_ref, bond_lookup) for p in people]),
        "events": _numbered(normal_events),
        "pair_bonds": _numbered(normal_bonds),
        "delete": sorted(id_list(payload.get("delete")), key=_ref_sort_key),
    }


def _person_sort_key(person: dict[str, Any]) -> tuple[str, str, str]:
    return (
        normalize_text(person.get("name")),
        normalize_text(person.get("last_name")),
        normalize_text(person.get("gender")),
    )


def _renumbering(ids: list[Any]) -> Callable[[Any], Ref]:
    numbers: dict[Any, int] = {}
    for ident in ids:
        if ident is not None and ident not in numbers:
            numbers[ident] = len(numbers) + 1

    def reference(value: Any) -> Ref:
        ident = as_id(value)
        if ident is None:
            return None
        return numbers.get(ident, f"#{ident}")

    return reference


def _normal_person(person, person_ref, bond_lookup) -> dict[str, Any]:
    parents = parent_person_ids(person, bond_lookup)
    if isinstance(parents, tuple):  # a pair bond outside the payload
        parents_value: Any = f"#bond:{parents[1]}"
    elif parents:
        parents_value = sorted((person_ref(p) for p in parents), key=_ref_sort_key)
    else:
        parents_value = None
    return {
        "name": normalize_text(person.get("name")) or None,
        "last_name": normalize_text(person.get("last_name")) or None,
        "gender": normalize_text(person.get("gender")) or None,
        "parents": parents_value,
    }


def _normal_bond(bond, person_ref) -> dict[str, Any]:
    partners = sorted(
        (person_ref(bond.get("person_a")), person_ref(bond.get("person_b"))), key=_ref_sort_key
    )
    return {"person_a": partners[0], "person_b": partners[1], "married": bond.get("married")}


def _normal_event(event, person_ref) -> dict[str, Any]:
    normal: dict[str, Any] = {"kind": normalize_text(event.get("kind")) or None}
    for name in ("person", "spouse", "child"):
        normal[name] = person_ref(event.get(name))
    for name in ("relationshipTargets", "relationshipTriangles"):
        refs = {person_ref(ident) for ident in id_list(event.get(name))}
        normal[name] = sorted(refs, key=_ref_sort_key)
    for name in EVENT_TEXT_FIELDS:
        normal[name] = normalize_text(event.get(name)) or None
    normal["dateCertainty"] = normalize_certainty(event.get("dateCertainty"))
    for name in SARF_VARIABLES:
        normal[name] = normalize_text(event.get(name)) or None
    return normal


def _event_sort_key(event: dict[str, Any]) -> tuple[str, str, str, str]:
    kind, description, date_time = (
        event[name] or "" for name in ("kind", "description", "dateTime")
    )
    return kind, description, date_time, _ref_sort_key(event)


def _ref_sort_key(value: Any) -> str:
    """One total order over mixed ints, strings, None and dicts."""
    return repr(value) if not isinstance(value, dict) else repr(sorted(value.items()))


def _numbered(entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": number, **entity} for number, entity in enumerate(entities, start=1)]
