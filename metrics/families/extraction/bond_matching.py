"""Matching AI pair bonds to GT pair bonds through the people map (same partners)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .assignment import KeyFunction
from .matches import (
    Item,
    Listing,
    Matching,
    MatchResult,
    PeopleLinks,
    as_resolver,
    assign_pairs,
    bond_listing,
    sort_key,
)
from .payload import as_id, clean_items
from .settings import MatchSettings, resolve_settings


def match_pair_bonds(
    ai_pair_bonds: Iterable[Item],
    gt_pair_bonds: Iterable[Item],
    people: PeopleLinks = None,
    *,
    settings: MatchSettings | None = None,
) -> MatchResult:
    """Match when both partners resolve to the same GT people, in either order."""
    return match_listed_pair_bonds(
        bond_listing(clean_items(ai_pair_bonds)),
        bond_listing(clean_items(gt_pair_bonds)),
        people,
        resolve_settings(settings),
    ).result()


def match_listed_pair_bonds(
    ai: Listing, gt: Listing, people: PeopleLinks, settings: MatchSettings
) -> Matching:
    """match_pair_bonds on listings."""
    resolve = as_resolver(people)
    ai_partners = [_partners(bond, resolve) for bond in ai.items]
    gt_partners = [_partners(bond, as_id) for bond in gt.items]
    groups: dict[frozenset, list[int]] = {}
    for index, partners in enumerate(gt_partners):
        groups.setdefault(partners, []).append(index)
    # Every pair with the same partners is an equally good match: score 1.0.
    candidates = [dict.fromkeys(groups.get(partners, ()), 1.0) for partners in ai_partners]
    keys = _bond_key(ai, ai_partners), _bond_key(gt, gt_partners)
    return Matching(ai, gt, assign_pairs(candidates, ai, gt, keys, settings), candidates)


def _partners(bond: Item, resolve: Callable[[Any], Any]) -> frozenset:
    return frozenset((resolve(bond.get("person_a")), resolve(bond.get("person_b"))))


def _bond_key(bonds: Listing, partners: list[frozenset]) -> KeyFunction:
    return lambda index: sort_key(sorted(map(str, partners[index])), bonds.ids[index])
