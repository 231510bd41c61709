"""Matching AI items to GT items: people, then events and pair bonds via the people map.

Each matcher lists, per AI item, the GT items that pass every gate with the pair's
score (see assignment.Candidates) and lets the assignment pick one-to-one pairs.
A statement holds a handful of items of each kind, so plain Python loops beat
numpy's per-call overhead; gates that compare by equality (event kind and links,
bond partners) look the candidates up in a dict instead of testing every pair,
which keeps the comparison of accumulated PDPs (hundreds of events) near-linear.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sized
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .assignment import Candidates, KeyFunction, Pair, assign_candidates
from .dates import DateIndex, date_similarity, event_date
from .payload import as_id, bonds_by_id, clean_items, id_list, item_ids, parent_person_ids
from .resolution import IDENTITY, IdResolver
from .settings import MatchSettings, resolve_settings
from .text import normalized, pair_similarities, person_names, similar_pairs

Item = dict[str, Any]
_NO_IDS: frozenset[Any] = frozenset()
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
        return {"ai_id": self.ai_id, "gt_id": self.gt_id, "score": row_score(self.score)}


def row_score(score: float) -> float:
    """A pair's score as match rows report it: round(score, 6)."""
    # round(x, 6) goes through a decimal conversion (~5x a cache hit) and scores recur.
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


def _as_resolver(people: PeopleLinks) -> IdResolver:
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
        return IdResolver(_id_map(self.pairs, self.ai.ids, self.gt.ids), self.ai.ids)

    def result(self) -> MatchResult:
        ai, gt, scores = self.ai, self.gt, self.scores
        return MatchResult(
            pairs=[
                MatchedPair(ai.items[i], gt.items[j], scores[i][j], ai.ids[i], gt.ids[j])
                for i, j in self.pairs
            ],
            unmatched_ai=[ai.items[i] for i in self.unmatched_ai],
            unmatched_gt=[gt.items[j] for j in self.unmatched_gt],
            id_map=_id_map(self.pairs, ai.ids, gt.ids),
            ai_ids={ident for ident in ai.ids if ident is not None},
        )


def _unmatched(size: int, matched: list[int]) -> list[int]:
    """The indices below size that are not in matched (a list of distinct indices)."""
    if len(matched) == size:
        return []  # everything matched: the usual case
    taken = set(matched)
    return [index for index in range(size) if index not in taken]


def _id_map(pairs: list[Pair], ai_ids: list[Any], gt_ids: list[Any]) -> dict[Any, Any]:
    return {
        ai_ids[i]: gt_ids[j] for i, j in pairs if ai_ids[i] is not None and gt_ids[j] is not None
    }


def _assign(
    candidates: Candidates,
    ai: Listing,
    gt: Listing,
    keys: tuple[KeyFunction, KeyFunction],
    settings: MatchSettings,
) -> list[Pair]:
    """assign_candidates with the ids of both listings and keys = (ai key, gt key)."""
    ai_keys, gt_keys = keys
    return assign_candidates(candidates, settings.strategy, ai_keys, gt_keys, ai.ids, gt.ids)


def _sort_key(*parts: Any) -> tuple[str, ...]:
    return tuple(["" if part is None else str(part) for part in parts])


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
        return _assign(allowed, self.ai, self.gt, self.keys, self.settings)

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
        id_map = _id_map(pairs, self.ai_ids, gt_ids)
        if len(pairs) == len(gt_ids):
            return id_map, _NO_IDS  # every GT parent has a counterpart
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
    return match_listed_events(
        event_listing(clean_items(ai_events)),
        event_listing(clean_items(gt_events)),
        people,
        resolve_settings(settings),
    ).result()


def match_listed_events(
    ai: Listing,
    gt: Listing,
    people: PeopleLinks,
    settings: MatchSettings,
    memo: dict | None = None,
) -> Matching:
    """match_events on listings. `memo` (a dict kept by the caller across calls on
    the same two listings and settings) keeps each AI event's candidates per resolved
    links, and the GT side's groups: the joint people search matches the same events
    through many people maps that differ in a few links."""
    if memo is None:
        memo = {}
    kinds = memo.get(_KINDS)
    if kinds is None:
        kinds = memo[_KINDS] = (
            normalized([event.get("kind") for event in ai.items]),
            normalized([event.get("kind") for event in gt.items]),
        )
    ai_kinds, gt_kinds = kinds
    candidates = _event_candidates(ai, gt, ai_kinds, gt_kinds, people, settings, memo)
    keys = _event_key(ai, ai_kinds), _event_key(gt, gt_kinds)
    return Matching(ai, gt, _assign(candidates, ai, gt, keys, settings), candidates)


# Memo keys that no (index, links) key equals.
_KINDS, _GT_SIDE, _AI_LINKS = object(), object(), object()


def _event_candidates(
    ai: Listing,
    gt: Listing,
    ai_kinds: list[str],
    gt_kinds: list[str],
    people: PeopleLinks,
    settings: MatchSettings,
    memo: dict,
) -> list[dict[int, float]]:
    """Per AI event, {GT index: score} of the GT events passing every gate.

    Kind and links must be equal, so GT events are grouped by both and each AI
    event only looks at its own group; dates and descriptions are then checked
    pair by pair (dates first: an integer comparison is cheaper than a ratio).
    """
    rows: list[dict[int, float]] = [{} for _ in ai_kinds]
    shared = set(ai_kinds).intersection(gt_kinds)
    if not shared:
        return rows  # no kind in common: no links or dates to look at
    gated, fresh = _linked_and_dated(
        ai, gt, ai_kinds, gt_kinds, shared, people, settings, memo, rows
    )
    text_scores = pair_similarities(
        [ai.texts[i] for i, _, _ in gated], [gt.texts[j] for _, j, _ in gated]
    )
    threshold = settings.description_similarity_threshold
    text_weight, date_weight = settings.description_weight, settings.date_weight
    for (i, j, date_score), text_score in zip(gated, text_scores, strict=True):
        if text_score >= threshold:
            rows[i][j] = text_weight * text_score + date_weight * date_score
    for i, key in fresh:
        memo[i, key] = rows[i]  # never mutated from here on (the assignment only reads)
    return rows


def _gt_event_side(gt: Listing, gt_kinds: list[str], memo: dict) -> tuple:
    """The GT events grouped by (kind, links), then per group its members' dates and,
    for a large group, its DateIndex, both filled in on first use (read once per memo)."""
    side = memo.get(_GT_SIDE)
    if side is None:
        groups: dict[tuple, list[int]] = {}
        for index, (kind, event) in enumerate(zip(gt_kinds, gt.items, strict=True)):
            groups.setdefault((kind, _event_links(event, as_id)), []).append(index)
        side = memo[_GT_SIDE] = (groups, {}, {})
    return side


def _linked_and_dated(
    ai: Listing,
    gt: Listing,
    ai_kinds: list[str],
    gt_kinds: list[str],
    shared: set[str],
    people: PeopleLinks,
    settings: MatchSettings,
    memo: dict,
    rows: list[dict[int, float]],
) -> tuple[list[tuple[int, int, float]], list[tuple[int, tuple[Any, ...] | None]]]:
    """(AI index, GT index, date similarity) of the pairs with equal kind and links
    whose dates are compatible, and the (index, links) of their AI events. An AI
    event whose candidates under its links are in the memo gets them in rows instead."""
    groups, dated, indexes = _gt_event_side(gt, gt_kinds, memo)  # indexes: large groups
    resolve = _as_resolver(people)
    gated: list[tuple[int, int, float]] = []
    fresh: list[tuple[int, tuple[Any, ...] | None]] = []
    ai_links = memo.get(_AI_LINKS)
    if ai_links is None:
        ai_links = memo[_AI_LINKS] = [_event_links(event, as_id) for event in ai.items]
    for i, (kind, event) in enumerate(zip(ai_kinds, ai.items, strict=True)):
        key = (kind, _resolved_links(ai_links[i], resolve)) if kind in shared else None
        group = groups.get(key)
        if not group:
            continue
        remembered = memo.get((i, key))
        if remembered is not None:
            rows[i] = remembered
            continue
        fresh.append((i, key))
        ai_date = event_date(event)
        # Only the GT events some AI event could match are dated.
        gt_dates = dated.get(key)
        if gt_dates is None:
            gt_dates = dated[key] = [event_date(gt.items[j]) for j in group]
        if len(group) >= DateIndex.MIN_SIZE:
            index = indexes.get(key)
            if index is None:
                index = indexes[key] = DateIndex(list(zip(group, gt_dates, strict=True)))
            gated += [(i, j, score) for j, score in index.compatible(ai_date, settings)]
            continue
        for j, gt_date in zip(group, gt_dates, strict=True):
            score = date_similarity(ai_date, gt_date, settings)
            if score is not None:
                gated.append((i, j, score))
    return gated, fresh


def _event_links(event: Item, resolve: Callable[[Any], Any]) -> tuple:
    """The people an event refers to, through resolve (as_id on the GT side, which is
    what the identity resolver amounts to; both keep None and never map an id to None)."""
    get = event.get
    person, spouse, child = get("person"), get("spouse"), get("child")
    targets, triangles = get("relationshipTargets"), get("relationshipTriangles")
    return (
        None if person is None else resolve(person),  # most links are empty: skip the call
        None if spouse is None else resolve(spouse),
        None if child is None else resolve(child),
        frozenset(map(resolve, id_list(targets))) if targets else _NO_IDS,
        frozenset(map(resolve, id_list(triangles))) if triangles else _NO_IDS,
    )


def _resolved_links(links: tuple, resolve: Callable[[Any], Any]) -> tuple:
    """_event_links(event, resolve) from the event's _event_links(event, as_id): the ids
    are read once per memo, and only resolved per people map."""
    person, spouse, child, targets, triangles = links
    return (
        None if person is None else resolve(person),
        None if spouse is None else resolve(spouse),
        None if child is None else resolve(child),
        frozenset(map(resolve, targets)) if targets else _NO_IDS,
        frozenset(map(resolve, triangles)) if triangles else _NO_IDS,
    )


def _event_key(events: Listing, kinds: list[str]) -> KeyFunction:
    """_sort_key(kind, description, dateTime, id); kind and description are strings
    already, so only the last two need converting (this runs for every contested event)."""

    def key(index: int) -> tuple[str, ...]:
        date_text, ident = events.items[index].get("dateTime"), events.ids[index]
        return (
            kinds[index],
            events.texts[index],
            "" if date_text is None else str(date_text),
            "" if ident is None else str(ident),
        )

    return key


# --- pair bonds -------------------------------------------------------------


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
    resolve = _as_resolver(people)
    ai_partners = [_partners(bond, resolve) for bond in ai.items]
    gt_partners = [_partners(bond, as_id) for bond in gt.items]
    groups: dict[frozenset, list[int]] = {}
    for index, partners in enumerate(gt_partners):
        groups.setdefault(partners, []).append(index)
    # Every pair with the same partners is an equally good match: score 1.0.
    candidates = [dict.fromkeys(groups.get(partners, ()), 1.0) for partners in ai_partners]
    keys = _bond_key(ai, ai_partners), _bond_key(gt, gt_partners)
    return Matching(ai, gt, _assign(candidates, ai, gt, keys, settings), candidates)


def _partners(bond: Item, resolve: Callable[[Any], Any]) -> frozenset:
    return frozenset((resolve(bond.get("person_a")), resolve(bond.get("person_b"))))


def _bond_key(bonds: Listing, partners: list[frozenset]) -> KeyFunction:
    return lambda index: _sort_key(sorted(map(str, partners[index])), bonds.ids[index])


__all__ = [
    "MatchResult",
    "MatchedPair",
    "match_events",
    "match_pair_bonds",
    "match_people",
]
