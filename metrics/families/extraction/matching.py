"""Matching AI items to GT items: people, then events and pair bonds via the people map.

Each matcher lists, per AI item, the GT items that pass every gate with the pair's
score (see assignment.Candidates) and lets the assignment pick one-to-one pairs.
A statement holds a handful of items of each kind, so plain Python loops beat
numpy's per-call overhead; gates that compare by equality (event kind and links,
bond partners) look the candidates up in a dict instead of testing every pair,
which keeps the comparison of accumulated PDPs (hundreds of events) near-linear.

This module is the matchers' front: what they share is in ``matches``, each kind's matcher in
``people_matching``, ``event_matching`` and ``bond_matching``.
"""

from .bond_matching import match_listed_pair_bonds, match_pair_bonds
from .event_matching import match_events, match_listed_events
from .matches import (
    Item,
    Listing,
    MatchedPair,
    Matching,
    MatchResult,
    bond_listing,
    clear_score_cache,
    event_listing,
    people_listing,
    row_score,
)
from .people_matching import (
    ParentGate,
    PeopleSearch,
    match_listed_people,
    match_people,
    name_score_and_same_ids,
)

__all__ = [
    "Item",
    "Listing",
    "MatchResult",
    "MatchedPair",
    "Matching",
    "ParentGate",
    "PeopleSearch",
    "bond_listing",
    "clear_score_cache",
    "event_listing",
    "match_events",
    "match_listed_events",
    "match_listed_pair_bonds",
    "match_listed_people",
    "match_pair_bonds",
    "match_people",
    "name_score_and_same_ids",
    "people_listing",
    "row_score",
]
