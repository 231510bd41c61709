"""The people assignment that matches the most items of the whole statement.

Events and pair bonds are matched through the people map, so which AI person takes
a contested GT person decides whether their events and bonds can match. The joint
search picks, among the people assignments, the one with the most matched items
(people + events + pair bonds); for a fixed statement F1 = 2·TP / (N_ai + N_gt), so
that is the assignment with the best F1. Ties go to the higher total name score,
then to more pairs with equal ids, then to the first in content order (then list
order), as the people-only assignment settles them.

How: a pair with no rival is in every maximal assignment and is fixed. The contested
people split into groups that share no candidate. A group none of whose AI people
is named by an AI event or pair bond cannot change those matches, so it is solved
for people alone (unless the statement records parents: then a pair whose parents
disagree under the assignment's own map is dropped before scoring, and every group
is scored). The other groups list their maximal assignments (taking another
pair never loses an event or bond match: it only turns an unresolved link into a
resolved one), and every combination of them is scored by running the event and
pair-bond matchers. Past COMBINATION_LIMIT combinations the groups are improved one
at a time, starting from the people-only optimum, until no group changes (each group
then tries every one of its assignments); a group with more than GROUP_LIMIT maximal
assignments keeps its people-only optimum.

Cost: a statement where no person has a rival (most of them) takes its only
assignment without a search. Otherwise the matchers run once for the first
combination; a later one is matched only if it could still win, that is if its people
count plus every event and bond matched would rank above the best so far (name score
and equal ids break that tie), so a statement whose best assignment matches every
event and bond runs them about once. Each AI event's candidates are cached per
resolved links across combinations.
"""

from __future__ import annotations

from itertools import product
from math import prod
from typing import Any

from .assignment import Candidates, Pair, assign_candidates, uncontested, without_rivals
from .matching import (
    Item,
    Listing,
    Matching,
    ParentGate,
    PeopleSearch,
    match_listed_events,
    match_listed_pair_bonds,
    name_score_and_same_ids,
)
from .payload import as_id, id_list
from .resolution import IdResolver
from .settings import MatchSettings

# Combinations scored exhaustively; beyond, one group at a time.
COMBINATION_LIMIT = 256
# The most maximal assignments listed for one group (a group of eight namesakes
# for four GT people has about 1,700); beyond, the group keeps its people-only optimum.
GROUP_LIMIT = 4096
# Passes over the groups when improving one at a time (each pass that changes
# nothing ends the search; the rank only grows, so it cannot cycle).
_IMPROVEMENT_PASSES = 8
_LINKS = ("person", "spouse", "child")


class JointSearch(PeopleSearch):
    """PeopleSearch whose objective is every matched item of the statement."""

    def __init__(
        self,
        ai: Listing,
        gt: Listing,
        settings: MatchSettings,
        events: tuple[Listing, Listing],
        pair_bonds: tuple[Listing, Listing],
    ):
        super().__init__(ai, gt, settings)
        self.events, self.pair_bonds = events, pair_bonds
        self._linked: set[Any] | None = None  # read only when a contest needs it
        # (events, pair bonds) matchings per people assignment already scored.
        self._scored: dict[tuple[Pair, ...], tuple[Matching, Matching]] = {}
        self._event_memo: dict = {}  # see match_listed_events
        self._gate: ParentGate | None = None

    def use_parent_gate(self, gate: ParentGate) -> None:
        """Score each assignment without the pairs whose parents disagree under its
        own map: the parents' assignment decides whether their children match."""
        self._gate = gate  # every group is then scored: a pair's parents can rule it out

    @property
    def linked(self) -> set[Any]:
        """Every person id an AI event or pair bond names (read on first use: most
        statements have no contest to settle)."""
        if self._linked is None:
            self._linked = _linked_people(self.events[0].items, self.pair_bonds[0].items)
        return self._linked

    def matchings(self, pairs: list[Pair]) -> tuple[Matching, Matching]:
        """The event and pair-bond matchings through the map of these people pairs."""
        key = tuple(pairs)
        found = self._scored.get(key)
        if found is None:
            ai_ids, gt_ids = self.ai.ids, self.gt.ids
            id_map = {
                ai_ids[i]: gt_ids[j]
                for i, j in pairs
                if ai_ids[i] is not None and gt_ids[j] is not None
            }
            resolver = IdResolver(id_map, ai_ids)
            found = self._scored[key] = (
                match_listed_events(*self.events, resolver, self.settings, self._event_memo),
                match_listed_pair_bonds(*self.pair_bonds, resolver, self.settings),
            )
        return found

    def rank(self, pairs: list[Pair], scores: Candidates) -> tuple:
        """Larger is better: (items matched, name score, pairs with equal ids)."""
        events, bonds = self.matchings(pairs)
        total = len(pairs) + len(events.pairs) + len(bonds.pairs)
        return (total, *name_score_and_same_ids(pairs, scores, self.ai.ids, self.gt.ids))

    def solve(self, allowed: Candidates) -> list[Pair]:
        alone = without_rivals(allowed)
        if alone is not None:
            return alone  # the usual case: one assignment, nothing to search
        fixed, contested = uncontested(allowed)
        if not contested:
            return fixed
        free, groups = [], []
        for group in _groups(allowed, contested):
            if self._gate is not None or any(self.ai.ids[i] in self.linked for i in group):
                groups.append(group)
            else:
                free += group  # its choice changes no event or bond: people alone decide
        base = fixed + (self._people_only(allowed, free) if free else [])
        if not groups:
            return sorted(base)
        options = [self._options(allowed, group) for group in groups]
        return self._best_combination(allowed, base, options)

    def _people_only(self, allowed: Candidates, rows: list[int]) -> list[Pair]:
        """The people-only optimum of these rows (and every column they reach)."""
        wanted = set(rows)
        only = [row if i in wanted else {} for i, row in enumerate(allowed)]
        return assign_candidates(only, "optimal", *self.keys, self.ai.ids, self.gt.ids)

    def _options(self, allowed: Candidates, rows: list[int]) -> list[list[Pair]]:
        """A group's maximal assignments in content order, the people-only optimum
        alone if there are more than GROUP_LIMIT."""
        ai_key, gt_key = self.keys
        ordered = [(i, sorted(allowed[i], key=gt_key)) for i in sorted(rows, key=ai_key)]
        listed = _maximal_assignments(ordered, GROUP_LIMIT)
        return [self._people_only(allowed, rows)] if listed is None else listed

    def _best_combination(
        self, allowed: Candidates, base: list[Pair], options: list[list[list[Pair]]]
    ) -> list[Pair]:
        def combined(choice: tuple[list[Pair], ...]) -> list[Pair]:
            pairs = sorted(base + [pair for chosen in choice for pair in chosen])
            return pairs if self._gate is None else self._gate.consistent(pairs)

        if prod(map(len, options)) <= COMBINATION_LIMIT:
            best_rank, best_pairs = (), base
            for choice in product(*options):  # in content order: the first best wins ties
                pairs = combined(choice)
                rank = self._rank_above(pairs, allowed, best_rank)
                if rank is not None:
                    best_rank, best_pairs = rank, pairs
            return best_pairs
        return self._improve_each_group(allowed, options, combined)

    def _improve_each_group(self, allowed, options, combined) -> list[Pair]:
        """Start from the people-only optimum; in turn, give each group the option
        that ranks best with the others held, until a pass changes nothing."""
        rows = [i for group in options for i, _ in group[0]]
        start = set(self._people_only(allowed, rows))
        choice = [next((o for o in group if start.issuperset(o)), group[0]) for group in options]
        best_pairs = combined(tuple(choice))
        best_rank = self.rank(best_pairs, allowed)
        for _ in range(_IMPROVEMENT_PASSES):
            changed = False
            for index, group in enumerate(options):
                for option in group:
                    pairs = combined((*choice[:index], option, *choice[index + 1 :]))
                    rank = self._rank_above(pairs, allowed, best_rank)
                    if rank is not None:
                        best_rank, best_pairs, choice[index], changed = rank, pairs, option, True
            if not changed:
                break
        return best_pairs

    def _rank_above(self, pairs: list[Pair], scores: Candidates, floor: tuple) -> tuple | None:
        """rank(pairs) if it is above floor, else None. The event and bond matching is
        skipped when even every event and bond matched could not lift the pairs above
        floor (most combinations, once one matches them all)."""
        if floor:
            ceiling = len(pairs) + self._most_linked_matches()
            if ceiling < floor[0]:
                return None
            if ceiling == floor[0]:
                ai_ids, gt_ids = self.ai.ids, self.gt.ids
                if (ceiling, *name_score_and_same_ids(pairs, scores, ai_ids, gt_ids)) <= floor:
                    return None
        rank = self.rank(pairs, scores)
        return rank if rank > floor else None

    def _most_linked_matches(self) -> int:
        """The most events plus pair bonds any people assignment could match."""
        (ai_events, gt_events), (ai_bonds, gt_bonds) = self.events, self.pair_bonds
        return min(len(ai_events.items), len(gt_events.items)) + min(
            len(ai_bonds.items), len(gt_bonds.items)
        )


def _linked_people(events: list[Item], bonds: list[Item]) -> set[Any]:
    """Every person id an AI event or pair bond names."""
    linked: set[Any] = set()
    for event in events:
        linked.update(as_id(event.get(link)) for link in _LINKS)
        linked.update(id_list(event.get("relationshipTargets")))
        linked.update(id_list(event.get("relationshipTriangles")))
    for bond in bonds:
        linked.add(as_id(bond.get("person_a")))
        linked.add(as_id(bond.get("person_b")))
    linked.discard(None)
    return linked


def _groups(allowed: Candidates, rows: list[int]) -> list[list[int]]:
    """The rows split into connected groups of the candidate graph (rows joined by a
    shared column), each ascending, in the order of their first row."""
    parent = {i: i for i in rows}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[int, int] = {}
    for i in rows:
        for j in allowed[i]:
            if j in owner:
                parent[root(i)] = root(owner[j])
            else:
                owner[j] = i
    groups: dict[int, list[int]] = {}
    for i in rows:
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _maximal_assignments(rows: list[tuple[int, list[int]]], limit: int) -> list[list[Pair]] | None:
    """Every one-to-one assignment of rows (row, its columns in order) to columns that
    no further pair could extend; each row tries its columns in order, then none.
    None past `limit` assignments (or after visiting 16 × limit partial ones)."""
    taken: set[int] = set()
    chosen: list[Pair] = []
    skipped: list[list[int]] = []  # the columns of each row left without a pair so far
    found: list[list[Pair]] = []
    budget = [16 * limit]

    def extend(index: int) -> bool:
        """False once a limit is passed."""
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if index == len(rows):
            # Maximal: every column of a row left out is taken by another row.
            if all(j in taken for cols in skipped for j in cols):
                found.append(list(chosen))
            return len(found) <= limit
        row, cols = rows[index]
        for col in cols:
            if col not in taken:
                taken.add(col)
                chosen.append((row, col))
                going = extend(index + 1)
                chosen.pop()
                taken.discard(col)
                if not going:
                    return False
        skipped.append(cols)
        going = extend(index + 1)
        skipped.pop()
        return going

    return found if extend(0) else None
