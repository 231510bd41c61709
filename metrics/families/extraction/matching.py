"""Matching AI items to GT items: people, then events and pair bonds via the people map."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .assignment import Pair, assign, equal_by_code
from .dates import date_similarity_matrix, event_date
from .payload import bonds_by_id, clean_items, id_list, item_id, parent_person_ids
from .resolution import IDENTITY, IdResolver, Unresolved
from .settings import MatchSettings, resolve_settings
from .text import normalize_text, person_name, similarity_matrix

Item = dict[str, Any]
# rapidfuzz scores pass through float division; rounding keeps boundary cases exact.
_SCORE_DECIMALS = 10
_NO_IDS: frozenset = frozenset()
# Rounds of re-matching people as their parents get resolved; three generations
# settle in two or three, the cap only guards against a map that oscillates.
_PARENT_ROUNDS = 5


@dataclass(slots=True)
class MatchedPair:
    ai: Item
    gt: Item
    score: float
    ai_id: Any = None
    gt_id: Any = None

    def to_row(self) -> dict[str, Any]:
        return {"ai_id": self.ai_id, "gt_id": self.gt_id, "score": round(self.score, 6)}


@dataclass
class MatchResult:
    pairs: list[MatchedPair] = field(default_factory=list)
    unmatched_ai: list[Item] = field(default_factory=list)  # false positives
    unmatched_gt: list[Item] = field(default_factory=list)  # false negatives
    id_map: dict[Any, Any] = field(default_factory=dict)  # AI id -> GT id
    ai_ids: set[Any] = field(default_factory=set)  # every id the AI list defines

    @property
    def tp(self) -> int:
        return len(self.pairs)

    @property
    def fp(self) -> int:
        return len(self.unmatched_ai)

    @property
    def fn(self) -> int:
        return len(self.unmatched_gt)

    def resolver(self) -> IdResolver:
        """Resolves ids through this result's map (meaningful for people)."""
        return IdResolver(self.id_map, self.ai_ids)


PeopleLinks = MatchResult | IdResolver | Mapping[Any, Any] | None


def _as_resolver(people: PeopleLinks) -> IdResolver:
    if people is None:
        return IDENTITY
    if isinstance(people, IdResolver):
        return people
    if isinstance(people, MatchResult):
        return people.resolver()
    return IdResolver(people, people.keys())


def _build_result(
    ai: list[Item], gt: list[Item], pairs: list[Pair], scores: np.ndarray, ids: tuple
) -> MatchResult:
    ai_ids, gt_ids = ids
    matched_ai = {ai_index for ai_index, _ in pairs}
    matched_gt = {gt_index for _, gt_index in pairs}
    pair_scores = scores[[i for i, _ in pairs], [j for _, j in pairs]].tolist() if pairs else []
    return MatchResult(
        pairs=[
            MatchedPair(ai[i], gt[j], score, ai_ids[i], gt_ids[j])
            for (i, j), score in zip(pairs, pair_scores, strict=True)
        ],
        unmatched_ai=[item for index, item in enumerate(ai) if index not in matched_ai],
        unmatched_gt=[item for index, item in enumerate(gt) if index not in matched_gt],
        id_map=_id_map(pairs, ai_ids, gt_ids),
        ai_ids={ident for ident in ai_ids if ident is not None},
    )


def _ids(ai: list[Item], gt: list[Item]) -> tuple[list[Any], list[Any]]:
    return [item_id(item) for item in ai], [item_id(item) for item in gt]


def _id_map(pairs: list[Pair], ai_ids: list[Any], gt_ids: list[Any]) -> dict[Any, Any]:
    return {
        ai_ids[i]: gt_ids[j] for i, j in pairs if ai_ids[i] is not None and gt_ids[j] is not None
    }


def _sort_key(*parts: Any) -> tuple[str, ...]:
    return tuple("" if part is None else str(part) for part in parts)


# --- people -----------------------------------------------------------------


def match_people(
    ai_people: Iterable[Item],
    gt_people: Iterable[Item],
    ai_pair_bonds: Iterable[Item] = (),
    gt_pair_bonds: Iterable[Item] = (),
    *,
    settings: MatchSettings | None = None,
) -> MatchResult:
    """Match by name similarity (> threshold) among people whose parents agree.

    Parent links need a people map, which is what is being built: people are first
    matched on names alone, and that map resolves the AI parents for the next
    round, until the assignment stops changing. (Two people with the same name
    would otherwise be settled by a coin toss that the parents never revisit.)
    Parents with no counterpart on the other side are left out of the comparison.
    """
    settings = resolve_settings(settings)
    ai, gt = clean_items(ai_people), clean_items(gt_people)
    ai_names, gt_names = [person_name(p) for p in ai], [person_name(p) for p in gt]
    names = np.round(similarity_matrix(ai_names, gt_names), _SCORE_DECIMALS)
    named = names > settings.name_similarity_threshold
    ids = _ids(ai, gt)
    keys = (lambda: _people_keys(ai, ai_names)), (lambda: _people_keys(gt, gt_names))

    def solve(allowed: np.ndarray) -> list[Pair]:
        return assign(names, allowed, settings.strategy, *keys, *ids)

    pairs = solve(named)
    ai_parents, gt_parents = _parent_refs(ai, ai_pair_bonds), _parent_refs(gt, gt_pair_bonds)
    if any(ai_parents) and any(gt_parents):
        pairs = _rematch_by_parents(pairs, named, solve, ai_parents, gt_parents, ids)
    return _build_result(ai, gt, pairs, names, ids)


def _parent_refs(people: list[Item], pair_bonds: Iterable[Item]) -> list:
    bonds = bonds_by_id(clean_items(pair_bonds))
    return [parent_person_ids(person, bonds) for person in people]


def _rematch_by_parents(pairs, named, solve, ai_parents, gt_parents, ids) -> list[Pair]:
    """Re-assign with the parent gate the current map implies, until it stops changing."""
    ai_ids, gt_ids = ids
    used = named
    for _ in range(_PARENT_ROUNDS):
        resolve = IdResolver(_id_map(pairs, ai_ids, gt_ids), ai_ids)
        gt_unmatched = set(gt_ids) - {gt_ids[j] for _, j in pairs}
        allowed = named & _parents_agree(ai_parents, gt_parents, resolve, gt_unmatched)
        if np.array_equal(allowed, used):
            break  # the same gates would give the same assignment: settled
        pairs, used = solve(allowed), allowed
    return pairs


def _people_keys(people: list[Item], names: list[str]) -> list[tuple[str, str]]:
    return [(name, repr(item_id(p))) for p, name in zip(people, names, strict=True)]


def _parents_agree(
    ai_parents: list, gt_parents: list, resolve: IdResolver, gt_unmatched: set
) -> np.ndarray:
    """Whether each (AI, GT) person pair names the same parents, as far as known.

    Parents without a counterpart (an AI parent left unmatched, or a GT parent no
    AI person matched) say nothing about the child and are left out on their side;
    what remains on both sides must be the same set.
    """
    ai_known = [_known_ai_parents(ref, resolve) for ref in ai_parents]
    gt_known = [ref - gt_unmatched if isinstance(ref, frozenset) else ref for ref in gt_parents]
    rows = [[_parent_refs_agree(a, g) for g in gt_known] for a in ai_known]
    return np.array(rows, dtype=bool).reshape(len(ai_parents), len(gt_parents))


def _known_ai_parents(ref: Any, resolve: IdResolver) -> Any:
    if not isinstance(ref, frozenset):
        return ref
    return frozenset(p for p in resolve.many(ref) if not isinstance(p, Unresolved))


def _parent_refs_agree(ai_ref: Any, gt_ref: Any) -> bool:
    """Nothing known on either side is no evidence; so is a bond only one side can
    see into. Two parent sets must be equal; two outside bonds must be the same one."""
    if not ai_ref or not gt_ref or type(ai_ref) is not type(gt_ref):
        return True
    return ai_ref == gt_ref


# --- events -----------------------------------------------------------------


def match_events(
    ai_events: Iterable[Item],
    gt_events: Iterable[Item],
    people: PeopleLinks = None,
    *,
    settings: MatchSettings | None = None,
) -> MatchResult:
    """Match by kind, description (>= threshold), date tolerance and resolved links.

    `people` is the people MatchResult (or an AI->GT id map) used to resolve links.
    Score = description_weight * description similarity + date_weight * date similarity.
    """
    settings = resolve_settings(settings)
    ai, gt = clean_items(ai_events), clean_items(gt_events)
    ai_texts = [normalize_text(e.get("description")) for e in ai]
    gt_texts = [normalize_text(e.get("description")) for e in gt]
    descriptions = np.round(similarity_matrix(ai_texts, gt_texts), _SCORE_DECIMALS)
    allowed = equal_by_code([_kind(e) for e in ai], [_kind(e) for e in gt])
    allowed &= descriptions >= settings.description_similarity_threshold
    scores = settings.description_weight * descriptions
    if allowed.any():
        dates, within = date_similarity_matrix(
            [event_date(e) for e in ai], [event_date(e) for e in gt], settings
        )
        resolve = _as_resolver(people)
        allowed &= within & equal_by_code(
            [_event_links(e, resolve) for e in ai], [_event_links(e, IDENTITY) for e in gt]
        )
        scores = scores + settings.date_weight * dates
    keys = (lambda: _event_keys(ai, ai_texts)), (lambda: _event_keys(gt, gt_texts))
    ids = _ids(ai, gt)
    pairs = assign(scores, allowed, settings.strategy, *keys, *ids)
    return _build_result(ai, gt, pairs, scores, ids)


def _kind(event: Item) -> str:
    return normalize_text(event.get("kind"))


def _event_links(event: Item, resolve: IdResolver) -> tuple:
    targets, triangles = event.get("relationshipTargets"), event.get("relationshipTriangles")
    return (
        resolve(event.get("person")),
        resolve(event.get("spouse")),
        resolve(event.get("child")),
        resolve.many(id_list(targets)) if targets else _NO_IDS,
        resolve.many(id_list(triangles)) if triangles else _NO_IDS,
    )


def _event_keys(events: list[Item], texts: list[str]) -> list[tuple[str, ...]]:
    return [
        _sort_key(_kind(e), text, e.get("dateTime"), item_id(e))
        for e, text in zip(events, texts, strict=True)
    ]


# --- pair bonds -------------------------------------------------------------


def match_pair_bonds(
    ai_pair_bonds: Iterable[Item],
    gt_pair_bonds: Iterable[Item],
    people: PeopleLinks = None,
    *,
    settings: MatchSettings | None = None,
) -> MatchResult:
    """Match when both partners resolve to the same GT people, in either order."""
    settings = resolve_settings(settings)
    ai, gt = clean_items(ai_pair_bonds), clean_items(gt_pair_bonds)
    resolve = _as_resolver(people)
    ai_partners = [_partners(bond, resolve) for bond in ai]
    gt_partners = [_partners(bond, IDENTITY) for bond in gt]
    allowed = equal_by_code(ai_partners, gt_partners)
    scores = allowed.astype(float)
    keys = (lambda: _bond_keys(ai, ai_partners)), (lambda: _bond_keys(gt, gt_partners))
    ids = _ids(ai, gt)
    pairs = assign(scores, allowed, settings.strategy, *keys, *ids)
    return _build_result(ai, gt, pairs, scores, ids)


def _partners(bond: Item, resolve: IdResolver) -> frozenset:
    return frozenset((resolve(bond.get("person_a")), resolve(bond.get("person_b"))))


def _bond_keys(bonds: list[Item], partners: list[frozenset]) -> list[tuple[str, ...]]:
    return [
        _sort_key(sorted(map(str, pair)), item_id(bond))
        for bond, pair in zip(bonds, partners, strict=True)
    ]


__all__ = [
    "MatchResult",
    "MatchedPair",
    "match_events",
    "match_pair_bonds",
    "match_people",
]
