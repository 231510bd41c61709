"""The accumulated PDP at the end of a discussion, and its AI vs GT comparison."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .payload import ENTITY_LISTS, as_id, as_payload, id_list, item_id
from .results import CumulativeF1Metrics
from .settings import MatchSettings
from .statement import compare_payloads

Item = dict[str, Any]


def cumulative(deltas_list: Iterable[dict[str, Any] | None]) -> dict[str, list[Item]]:
    """Apply statement deltas in order: upsert by id (a later item replaces the
    earlier one whole), then the delta's `delete` ids. A pair bond is dropped when
    a partner is missing or is an uncommitted person (not a positive id) that no
    delta lists, and when it repeats an earlier bond's two people. A partner that is
    a committed person (positive id) stays: it is stored outside the deltas.
    Items without an id cannot be upserted and are simply kept."""
    state: dict[str, dict[Any, Item]] = {key: {} for key in ENTITY_LISTS}
    anonymous: dict[str, list[Item]] = {key: [] for key in ENTITY_LISTS}
    for delta in deltas_list:
        payload = as_payload(delta)
        for key in ENTITY_LISTS:
            _upsert(state[key], anonymous[key], payload.get(key))
        for ident in id_list(payload.get("delete")):
            for key in ENTITY_LISTS:
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


def calculate_cumulative_f1(
    ai_deltas_list: Iterable[dict[str, Any] | None],
    gt_deltas_list: Iterable[dict[str, Any] | None],
    *,
    settings: MatchSettings | None = None,
    discussion_id: int | None = None,
) -> CumulativeF1Metrics:
    """Match the end states of the AI's and the GT's accumulated PDPs.

    Both lists are the discussion's subject statements, in order.
    """
    ai_deltas, gt_deltas = list(ai_deltas_list), list(gt_deltas_list)
    fields = compare_payloads(cumulative(ai_deltas), cumulative(gt_deltas), settings=settings)
    return CumulativeF1Metrics(
        discussion_id=discussion_id,
        statement_count=max(len(ai_deltas), len(gt_deltas)),
        **fields,
    )
