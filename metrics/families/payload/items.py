"""Reading a payload: its kinds, items and ids (a missing payload, list or item reads as
empty), and the family accumulated over a discussion's statement deltas (``cumulative``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ENTITY_KINDS: tuple[str, ...] = ("people", "events", "pair_bonds")


# --- reading a payload -----------------------------------------------------------------------


def entity_items(payload: Mapping[str, Any] | None, kind: str) -> list[dict[str, Any]]:
    """The dict items of one entity list.

    None (a statement without ground truth yet) reads as an empty payload, and a missing or
    malformed list as an empty one: readers never have to guard. Anything but a mapping or
    None is a caller bug and raises TypeError.
    """
    if payload is None:
        return []
    try:
        value = payload.get(kind)
    except AttributeError:  # cheaper than an isinstance check: the F1 library runs this a lot
        raise TypeError(f"a PDP payload must be a dict, not {type(payload).__name__}") from None
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def payload_items(payload: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The people, events and pair bonds of a payload, in that order."""
    return [item for kind in ENTITY_KINDS for item in entity_items(payload, kind)]


def as_payload(payload: Any) -> dict[str, Any]:
    """Accept None as an empty payload; anything but a dict is a caller bug."""
    if payload is None:
        return {}
    if not isinstance(payload, dict):
        raise TypeError(f"a PDP payload must be a dict, not {type(payload).__name__}")
    return payload


def as_id(value: Any) -> int | str | None:
    """An id usable as a dict key; bools and containers are not ids."""
    cls = value.__class__
    if cls is int or cls is str:  # the usual cases first: this runs for every link
        return value
    if value is None or isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    return value


def id_list(value: Any) -> list[int | str]:
    """relationshipTargets / relationshipTriangles: the valid ids, in order."""
    if not isinstance(value, list):
        return []
    return [ident for ident in map(as_id, value) if ident is not None]


def item_id(item: dict[str, Any]) -> int | str | None:
    return as_id(item.get("id"))


# --- the family accumulated over a discussion ----------------------------------------------

Item = dict[str, Any]


def cumulative(deltas_list: Iterable[dict[str, Any] | None]) -> dict[str, list[Item]]:
    """Apply statement deltas in order: upsert by id (a later item replaces the
    earlier one whole), then the delta's `delete` ids. A pair bond is dropped when
    a partner is missing or is an uncommitted person (not a positive id) that no
    delta lists, and when it repeats an earlier bond's two people. A partner that is
    a committed person (positive id) stays: it is stored outside the deltas.
    Items without an id cannot be upserted and are simply kept."""
    state: dict[str, dict[Any, Item]] = {key: {} for key in ENTITY_KINDS}
    anonymous: dict[str, list[Item]] = {key: [] for key in ENTITY_KINDS}
    for delta in deltas_list:
        payload = as_payload(delta)
        for key in ENTITY_KINDS:
            _upsert(state[key], anonymous[key], payload.get(key))
        for ident in id_list(payload.get("delete")):
            for key in ENTITY_KINDS:
                state[key].pop(ident, None)
    people = list(state["people"].values()) + anonymous["people"]
    bonds, replaced = _valid_pair_bonds(
        list(state["pair_bonds"].values()) + anonymous["pair_bonds"], people
    )
    return {
        "people": _repoint_parents(people, replaced),
        "events": list(state["events"].values()) + anonymous["events"],
        "pair_bonds": bonds,
    }


def _upsert(table: dict[Any, Item], anonymous: list[Item], items: Any) -> None:
    """Upserts the dict items of one list (as entity_list reads it) into table by
    item_id; items without an id go to anonymous. This runs for every item of every
    delta, so entity_list's filter and as_id's usual cases are inline."""
    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        ident = item.get("id")
        if ident.__class__ is not int and ident.__class__ is not str:
            ident = as_id(ident)
            if ident is None:
                anonymous.append(item)
                continue
        table[ident] = item


def _valid_pair_bonds(bonds: list[Item], people: list[Item]) -> tuple[list[Item], dict]:
    """Bonds between present or committed people, first of each couple kept;
    returns the kept bonds and {dropped duplicate id: kept id}."""
    present = {item_id(person) for person in people} - {None}
    kept: dict[frozenset, Item] = {}
    replaced: dict[Any, Any] = {}
    for bond in bonds:
        partners = (as_id(bond.get("person_a")), as_id(bond.get("person_b")))
        if not all(partner in present or is_committed(partner) for partner in partners):
            continue
        couple = frozenset(partners)
        if couple in kept:
            replaced[item_id(bond)] = item_id(kept[couple])
        else:
            kept[couple] = bond
    return list(kept.values()), replaced


def is_committed(ident: Any) -> bool:
    """A committed person: a positive integer id. Negative ids are uncommitted
    people that exist only in some delta."""
    return ident.__class__ is int and ident > 0


def _repoint_parents(people: list[Item], replaced: dict[Any, Any]) -> list[Item]:
    """People whose `parents` named a dropped duplicate bond now name the kept one."""
    if not replaced:
        return people
    repointed = []
    for person in people:
        bond_id = as_id(person.get("parents"))
        if bond_id in replaced:
            person = {**person, "parents": replaced[bond_id]}
        repointed.append(person)
    return repointed


# --- the ids a payload defines ----------------------------------------------------------------


def payload_ids(payloads: Iterable[dict | None]) -> dict[str, set]:
    """Ids of the people, events and pair bonds in some payloads (earlier statements, say)."""
    ids: dict[str, set] = {kind: set() for kind in ENTITY_KINDS}
    for payload in payloads:
        for kind in ENTITY_KINDS:
            found = (item_id(item) for item in entity_items(payload, kind))
            ids[kind].update(ident for ident in found if ident is not None)
    return ids
