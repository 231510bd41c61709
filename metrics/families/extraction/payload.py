"""Robust reading of PDP delta payloads: missing lists are empty, missing fields are None."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from metrics.families.payload.items import ENTITY_KINDS as ENTITY_LISTS
from metrics.families.payload.items import as_id as as_id
from metrics.families.payload.items import as_payload as as_payload
from metrics.families.payload.items import entity_items as entity_list
from metrics.families.payload.items import id_list as id_list
from metrics.families.payload.items import item_id as item_id


def entity_lists(payload: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """people, events and pair_bonds of a payload, each read once."""
    return {key: entity_list(payload, key) for key in ENTITY_LISTS}


def clean_items(items: Iterable[Any] | None) -> list[dict[str, Any]]:
    if items is None:
        return []
    return [item for item in items if isinstance(item, dict)]


def item_ids(items: Iterable[dict[str, Any]]) -> list[int | str | None]:
    """item_id of every item (one call per list: every matcher needs them)."""
    ids = [item.get("id") for item in items]
    # as_id, with its usual cases inline: this runs for every item of every statement.
    return [i if i.__class__ is int or i.__class__ is str else as_id(i) for i in ids]


def defined_ids(items: Iterable[dict[str, Any]]) -> set[int | str]:
    return {ident for ident in (item_id(item) for item in items) if ident is not None}


def is_empty(payload: dict[str, Any]) -> bool:
    """No people, events or pair bonds (a bare delete list is not an extraction)."""
    return not any(entity_lists(payload).values())


def parent_person_ids(
    person: dict[str, Any], bonds_by_id: dict[int | str, dict[str, Any]]
) -> frozenset | tuple[str, int | str] | None:
    """Who a person's parents are, as far as this payload can tell.

    Returns the set of parent person ids when `parents` names a pair bond of the
    same payload (or the legacy parent_a/parent_b form is used), ("bond", id) when
    the bond lies outside the payload, and None when no parents are recorded.
    """
    parents = person.get("parents")
    if parents is None:  # no bond named: the legacy parent_a/parent_b form, if any
        return _two_ids(person.get("parent_a"), person.get("parent_b"))
    if isinstance(parents, list):  # an older form: the parent people themselves
        return _non_null(parents)
    bond_id = as_id(parents)
    if bond_id is not None:
        bond = bonds_by_id.get(bond_id)
        if bond is None:
            return ("bond", bond_id)
        return _two_ids(bond.get("person_a"), bond.get("person_b"))
    return _two_ids(person.get("parent_a"), person.get("parent_b"))


def _non_null(values: list[Any]) -> frozenset | None:
    ids = frozenset(map(as_id, values))
    if None in ids:
        ids = ids - _NONE
    return ids or None


def _two_ids(first: Any, second: Any) -> frozenset | None:
    """_non_null([first, second]), for the usual two parents without building a list."""
    if first is None and second is None:
        return None
    first, second = as_id(first), as_id(second)
    if first is None:
        return None if second is None else frozenset((second,))
    return frozenset((first,)) if second is None else frozenset((first, second))


_NONE = frozenset([None])


def bonds_by_id(bonds: Iterable[dict[str, Any]]) -> dict[int | str, dict[str, Any]]:
    lookup: dict[int | str, dict[str, Any]] = {}
    for bond in bonds:
        ident = item_id(bond)
        if ident is not None:
            lookup[ident] = bond  # a repeated id: the last bond wins
    return lookup
