"""What the matchers take and give: one side's items listed once (``Listing``), the pairs
chosen between two listings (``Matching``, ``MatchResult``), and the steps every matcher shares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .assignment import Candidates, KeyFunction, Pair, assign_candidates
from .payload import item_ids
from .resolution import IDENTITY, IdResolver
from .settings import MatchSettings
from .text import normalized, person_names

Item = dict[str, Any]
NO_IDS: frozenset[Any] = frozenset()


@dataclass(slots=True)
class MatchedPair:
    ai: Item
    gt: Item
    score: float
    ai_id: Any = None
    gt_id: Any = None

    def to_row(self) -> dict[str, Any]:
        return {"ai_id": self.ai_id, "gt_id": self.gt_id, "score": row_score(self.score)}


def row_score(score: float) -> float:
    """A pair's score as match rows report it: round(score, 6)."""
    # round(x, 6) goes through a decimal conversion (dearer than a cache hit) and scores recur.
    # Only non-zero floats are cached: 0.0 and -0.0, or 1 and 1.0, are equal keys
    # that round to different results.
    if score.__class__ is float and score:
        return _cached_round6(score)
    return round(score, 6)


@lru_cache(maxsize=1 << 14)
def _cached_round6(score: float) -> float:
    return round(score, 6)


def clear_score_cache() -> None:
    _cached_round6.cache_clear()


class _Unmatched:
    """False positives and false negatives: how many items each side leaves unmatched."""

    __slots__ = ()
    unmatched_ai: Sized
    unmatched_gt: Sized

    @property
    def fp(self) -> int:
        return len(self.unmatched_ai)

    @property
    def fn(self) -> int:
        return len(self.unmatched_gt)


@dataclass
class MatchResult(_Unmatched):
    pairs: list[MatchedPair] = field(default_factory=list)
    unmatched_ai: list[Item] = field(default_factory=list)  # false positives
    unmatched_gt: list[Item] = field(default_factory=list)  # false negatives
    id_map: dict[Any, Any] = field(default_factory=dict)  # AI id -> GT id
    ai_ids: set[Any] = field(default_factory=set)  # every id the AI list defines

    @property
    def tp(self) -> int:
        return len(self.pairs)

    def resolver(self) -> IdResolver:
        """Resolves ids through this result's map (meaningful for people)."""
        return IdResolver(self.id_map, self.ai_ids)


@dataclass(slots=True)
class Listing:
    """One side's dict items of one entity type, with what the matchers need of every
    item read once: its id and its normalised text (person name, event description)."""

    items: list[Item]
    ids: list[Any]
    texts: list[str]


def people_listing(people: list[Item]) -> Listing:
    return Listing(people, item_ids(people), person_names(people))


def event_listing(events: list[Item]) -> Listing:
    return Listing(events, item_ids(events), normalized([e.get("description") for e in events]))


def bond_listing(bonds: list[Item]) -> Listing:
    return Listing(bonds, item_ids(bonds), [])


PeopleLinks = MatchResult | IdResolver | Mapping[Any, Any] | None


def as_resolver(people: PeopleLinks) -> IdResolver:
    if people is None:
        return IDENTITY
    if isinstance(people, IdResolver):
        return people
    if isinstance(people, MatchResult):
        return people.resolver()
    return IdResolver(people, people.keys())


class Matching(_Unmatched):
    """The pairs chosen between two listings, by index: what a MatchResult holds,
    without building one (compare_payloads reads the indices directly)."""

    __slots__ = ("ai", "gt", "pairs", "scores", "unmatched_ai", "unmatched_gt")
    unmatched_ai: list[int]
    unmatched_gt: list[int]

    def __init__(self, ai: Listing, gt: Listing, pairs: list[Pair], scores: Candidates):
        self.ai, self.gt = ai, gt
        self.pairs = pairs  # (ai index, gt index), sorted by ai index
        self.scores = scores  # scores[i][j] of every pair
        # Indices of the items left without a partner: false positives, false negatives.
        self.unmatched_ai = _unmatched(len(ai.items), [i for i, _ in pairs])
        self.unmatched_gt = _unmatched(len(gt.items), [j for _, j in pairs])

    def resolver(self) -> IdResolver:
        """As MatchResult.resolver() (None among the AI ids changes nothing: None
        never reaches the lookup)."""
        return IdResolver(pairs_id_map(self.pairs, self.ai.ids, self.gt.ids), self.ai.ids)

    def result(self) -> MatchResult:
        ai, gt, scores = self.ai, self.gt, self.scores
        return MatchResult(
            pairs=[
                MatchedPair(ai.items[i], gt.items[j], scores[i][j], ai.ids[i], gt.ids[j])
                for i, j in self.pairs
            ],
            unmatched_ai=[ai.items[i] for i in self.unmatched_ai],
            unmatched_gt=[gt.items[j] for j in self.unmatched_gt],
            id_map=pairs_id_map(self.pairs, ai.ids, gt.ids),
            ai_ids={ident for ident in ai.ids if ident is not None},
        )


def _unmatched(size: int, matched: list[int]) -> list[int]:
    """The indices below size that are not in matched (a list of distinct indices)."""
    if len(matched) == size:
        return []  # everything matched: the usual case
    taken = set(matched)
    return [index for index in range(size) if index not in taken]


def pairs_id_map(pairs: list[Pair], ai_ids: list[Any], gt_ids: list[Any]) -> dict[Any, Any]:
    return {
        ai_ids[i]: gt_ids[j] for i, j in pairs if ai_ids[i] is not None and gt_ids[j] is not None
    }


def assign_pairs(
    candidates: Candidates,
    ai: Listing,
    gt: Listing,
    keys: tuple[KeyFunction, KeyFunction],
    settings: MatchSettings,
) -> list[Pair]:
    """assign_candidates with the ids of both listings and keys = (ai key, gt key)."""
    ai_keys, gt_keys = keys
    return assign_candidates(candidates, settings.strategy, ai_keys, gt_keys, ai.ids, gt.ids)


def sort_key(*parts: Any) -> tuple[str, ...]:
    return tuple(["" if part is None else str(part) for part in parts])
