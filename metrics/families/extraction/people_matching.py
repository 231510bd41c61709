"""Matching AI people to GT people: by name, then again as their parents get resolved."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from .assignment import Candidates, KeyFunction, Pair
from .matches import (
    NO_IDS,
    Item,
    Listing,
    Matching,
    MatchResult,
    assign_pairs,
    pairs_id_map,
    people_listing,
)
from .payload import as_id, bonds_by_id, clean_items, parent_person_ids
from .settings import MatchSettings, resolve_settings
from .text import similar_pairs

# Rounds of re-matching people as their parents get resolved; three generations
# settle in two or three, the cap only guards against a map that oscillates.
_PARENT_ROUNDS = 5


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
    return match_listed_people(
        people_listing(clean_items(ai_people)),
        people_listing(clean_items(gt_people)),
        clean_items(ai_pair_bonds),
        clean_items(gt_pair_bonds),
        resolve_settings(settings),
    ).result()


class PeopleSearch:
    """How match_listed_people picks among candidate pairs: the people-only objective
    (most people matched, then total name score, then equal ids). The joint search in
    joint.py swaps in the objective of the whole statement."""

    def __init__(self, ai: Listing, gt: Listing, settings: MatchSettings):
        self.ai, self.gt, self.settings = ai, gt, settings
        self.keys = _people_key(ai), _people_key(gt)

    def solve(self, allowed: Candidates) -> list[Pair]:
        return assign_pairs(allowed, self.ai, self.gt, self.keys, self.settings)

    def use_parent_gate(self, gate: ParentGate) -> None:
        """The people-only search leaves parents to the re-matching rounds."""

    def rank(self, pairs: list[Pair], scores: Candidates) -> tuple:
        """Larger is better: (people matched, name score, pairs with equal ids)."""
        return (len(pairs), *name_score_and_same_ids(pairs, scores, self.ai.ids, self.gt.ids))


def name_score_and_same_ids(
    pairs: list[Pair], scores: Candidates, ai_ids: list[Any], gt_ids: list[Any]
) -> tuple[int, int]:
    """The total score of pairs in millionths (as the assignment compares scores), and
    how many pairs join items with the same id."""
    units = sum(round(min(max(scores[i][j], 0.0), 1.0) * 1_000_000) for i, j in pairs)
    same = sum(1 for i, j in pairs if ai_ids[i] is not None and ai_ids[i] == gt_ids[j])
    return units, same


def match_listed_people(
    ai: Listing,
    gt: Listing,
    ai_bonds: list[Item],
    gt_bonds: list[Item],
    settings: MatchSettings,
    search: PeopleSearch | None = None,
) -> Matching:
    """match_people on listings (and dict-only pair bond lists); `search` decides
    among the candidates (PeopleSearch by default)."""
    named = similar_pairs(ai.texts, gt.texts, settings.name_similarity_threshold)
    if search is None:
        search = PeopleSearch(ai, gt, settings)
    gate = None
    ai_parents = _parent_refs(ai.items, ai_bonds)
    if any(ai_parents):
        gt_parents = _parent_refs(gt.items, gt_bonds)
        if any(gt_parents):
            gate = ParentGate(named, ai_parents, gt_parents, ai, gt, ai_bonds)
            search.use_parent_gate(gate)
    pairs = search.solve(named)
    if gate is not None:
        pairs = _rematch_by_parents(pairs, named, search, gate)
    return Matching(ai, gt, pairs, named)


def _parent_refs(people: list[Item], bonds: list[Item]) -> list:
    lookup = bonds_by_id(bonds)
    return [parent_person_ids(person, lookup) for person in people]


class ParentGate:
    """The named candidates whose parents agree under the people map of some pairs.

    Parents without a counterpart (an AI parent left unmatched, or a GT parent no AI
    person matched) say nothing about the child and are left out on their side; what
    remains on both sides must be the same set.
    """

    def __init__(self, named, ai_parents, gt_parents, ai: Listing, gt: Listing, ai_bonds):
        self.named, self.ai_parents, self.gt_parents = named, ai_parents, gt_parents
        self.ai_ids, self.gt_ids = ai.ids, gt.ids
        self.ai_defined = set(ai.ids)
        self._ai_bonds = ai_bonds
        self._ai_unlisted: set[Any] | None = None
        # Only AI people who record parents can lose a candidate to the gate.
        self.with_parents = [i for i, ref in enumerate(ai_parents) if ref]

    def __call__(self, pairs: list[Pair]) -> list[dict[int, float]]:
        id_map, gt_unmatched = self._maps(pairs)
        allowed = list(self.named)  # rows left whole are the named rows themselves
        for i in self.with_parents:
            ai_ref = _known_ai_parents(self.ai_parents[i], id_map, self.ai_defined)
            if ai_ref:
                row = allowed[i]
                agreeing = [j for j in row if self._agree(ai_ref, j, gt_unmatched)]
                if len(agreeing) < len(row):
                    allowed[i] = {j: row[j] for j in agreeing}
        return allowed

    def consistent(self, pairs: list[Pair]) -> list[Pair]:
        """pairs without those whose parents disagree under the map of the rest,
        repeated until every pair left passes."""
        while True:
            kept = self._passing(pairs)
            if len(kept) == len(pairs):
                return pairs
            pairs = kept

    def _passing(self, pairs: list[Pair]) -> list[Pair]:
        """The pairs whose candidate passes the gate of these pairs' own map (only the
        pairs' own rows are checked, not every candidate of every row)."""
        id_map, gt_unmatched = self._maps(pairs)
        ai_parents, ai_defined = self.ai_parents, self.ai_defined
        kept = []
        for i, j in pairs:
            ref = ai_parents[i]
            if ref:
                ai_ref = _known_ai_parents(ref, id_map, ai_defined)
                if ai_ref and not self._agree(ai_ref, j, gt_unmatched):
                    continue
            kept.append((i, j))
        return kept

    def _maps(self, pairs: list[Pair]) -> tuple[dict[Any, Any], AbstractSet[Any]]:
        """The AI -> GT id map of pairs, and the GT ids no AI person matched that the
        AI does not name either (GT parents without a counterpart)."""
        gt_ids = self.gt_ids
        id_map = pairs_id_map(pairs, self.ai_ids, gt_ids)
        if len(pairs) == len(gt_ids):
            return id_map, NO_IDS  # every GT parent has a counterpart
        return id_map, set(gt_ids) - {gt_ids[j] for _, j in pairs} - self.ai_unlisted

    @property
    def ai_unlisted(self) -> set[Any]:
        """Ids the AI refers to without listing them: they stand for the same person on
        both sides (read on first use: only a GT person left unmatched needs them)."""
        if self._ai_unlisted is None:
            referenced = _referenced_ids(self.ai_parents, self._ai_bonds)
            self._ai_unlisted = referenced - self.ai_defined
        return self._ai_unlisted

    def _agree(self, ai_ref: Any, j: int, gt_unmatched: AbstractSet[Any]) -> bool:
        """Whether the known AI parents agree with GT person j's known parents."""
        gt_ref = self.gt_parents[j]
        if gt_unmatched and isinstance(gt_ref, frozenset):
            gt_ref = gt_ref - gt_unmatched
        return _parent_refs_agree(ai_ref, gt_ref)


def _rematch_by_parents(pairs, named, search, gate: ParentGate) -> list[Pair]:
    """Re-assign with the parent gate the current map implies, until it stops changing.

    Each round's assignment is a candidate; the best by the search's rank wins, among
    those whose pairs all pass the gate their own map implies (consistent ones) if
    any. A later round wins a tie: it has seen more of the parents.
    """
    used = named
    best: _Round | None = None
    for round_number in range(_PARENT_ROUNDS + 1):
        allowed = gate(pairs)
        candidate = _Round(all(j in allowed[i] for i, j in pairs), pairs, search, named)
        if best is None or candidate.beats(best):
            best = candidate
        if allowed == used or round_number == _PARENT_ROUNDS:
            break  # the same gates would give the same assignment: settled
        pairs, used = search.solve(allowed), allowed
    assert best is not None  # the first round always sets it
    return best.pairs


class _Round:
    """One re-matching round's assignment. Its rank is computed only when two rounds
    differ in pairs but not in consistency (ranking costs the joint search an event
    and bond matching, and most statements settle in their first round)."""

    __slots__ = ("_rank", "consistent", "named", "pairs", "search")

    def __init__(self, consistent: bool, pairs: list[Pair], search, named: Candidates):
        self.consistent, self.pairs, self.search, self.named = consistent, pairs, search, named
        self._rank: tuple | None = None

    def rank(self) -> tuple:
        if self._rank is None:
            self._rank = self.search.rank(self.pairs, self.named)
        return self._rank

    def beats(self, earlier: _Round) -> bool:
        """(consistent, rank) at least as high as the earlier round's: a later round
        wins ties, and equal pairs rank equally."""
        if self.consistent != earlier.consistent:
            return self.consistent
        return self.pairs == earlier.pairs or self.rank() >= earlier.rank()


def _referenced_ids(parent_refs: list, bonds: list[Item]) -> set[Any]:
    """Every person id named as a parent or as a pair-bond partner."""
    ids = {ident for ref in parent_refs if isinstance(ref, frozenset) for ident in ref}
    for bond in bonds:
        ids.add(as_id(bond.get("person_a")))
        ids.add(as_id(bond.get("person_b")))
    ids.discard(None)
    return ids


def _people_key(people: Listing) -> KeyFunction:
    return lambda index: (people.texts[index], repr(people.ids[index]))


def _known_ai_parents(ref: Any, id_map: dict[Any, Any], ai_defined: set[Any]) -> Any:
    """An AI person's parents as the GT sees them: matched parents become their GT
    ids, parents the AI payload does not define keep theirs (both sides refer to the
    same stored person), and parents the AI defined but left unmatched drop out.
    (What IdResolver(id_map, ai_defined) resolves them to, minus the Unresolved markers.)"""
    if not isinstance(ref, frozenset):
        return ref  # None, or a bond outside the payload: compared as it is
    return frozenset([id_map.get(p, p) for p in ref if p in id_map or p not in ai_defined])


def _parent_refs_agree(ai_ref: Any, gt_ref: Any) -> bool:
    """Nothing known on either side is no evidence; so is a bond only one side can
    see into. Two parent sets must be equal; two outside bonds must be the same one."""
    if not ai_ref or not gt_ref or type(ai_ref) is not type(gt_ref):
        return True
    return ai_ref == gt_ref
