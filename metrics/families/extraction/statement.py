"""Comparing one AI payload with one GT payload."""

from __future__ import annotations

import sys
from typing import Any

from .joint import JointSearch
from .matching import (
    Matching,
    MatchResult,
    bond_listing,
    event_listing,
    match_listed_events,
    match_listed_pair_bonds,
    match_listed_people,
    people_listing,
    row_score,
)
from .normalize import normalize_for_exact_match
from .payload import as_payload, entity_list
from .results import ENTITY_TYPES, StatementF1Metrics
from .sarf import SARF_VARIABLES, macro_f1_from_columns, sarf_values
from .scores import f1_from_counts
from .settings import MatchSettings, resolve_settings
from .text import normalize_text

Item = dict[str, Any]


def calculate_statement_f1(
    ai: dict[str, Any] | None,
    gt: dict[str, Any] | None,
    *,
    settings: MatchSettings | None = None,
    statement_id: int | None = None,
    discussion_id: int | None = None,
) -> StatementF1Metrics:
    """F1 of one statement's AI delta against its GT delta (None reads as empty)."""
    fields = compare_payloads(ai, gt, settings=settings)
    return StatementF1Metrics(statement_id=statement_id, discussion_id=discussion_id, **fields)


def compare_payloads(
    ai: dict[str, Any] | None, gt: dict[str, Any] | None, *, settings: MatchSettings | None
) -> dict[str, Any]:
    """The ComparisonMetrics fields for two payloads."""
    settings = resolve_settings(settings)
    ai, gt = as_payload(ai), as_payload(gt)
    ai_side, gt_side = _Side(ai), _Side(gt)
    matchings = _match_sides(ai_side, gt_side, settings)
    fields: dict[str, Any] = {"settings": settings}
    tp = fp = fn = 0  # over every entity type
    for entity, matching in matchings.items():
        _entity_fields(fields, entity, matching)
        tp, fp, fn = tp + len(matching.pairs), fp + matching.fp, fn + matching.fn
    fields["aggregate_micro_f1"] = f1_from_counts(tp, fp, fn)
    events = matchings["events"]
    _sarf_fields(fields, events)
    fields["fn_event_kinds"] = [_kind_label(events.gt.items[j]) for j in events.unmatched_gt]
    fields["fp_event_kinds"] = [_kind_label(events.ai.items[i]) for i in events.unmatched_ai]
    fields["exact_match"] = _sides_equal(ai_side, gt_side)
    fields["trivial"] = ai_side.empty and gt_side.empty
    return fields


class _Side:
    """One payload's entity lists as matching listings, read once: matching and the
    exact-match check both use them."""

    __slots__ = ("events", "pair_bonds", "payload", "people")

    def __init__(self, payload: dict[str, Any]):
        self.payload = payload
        self.people = people_listing(entity_list(payload, "people"))
        self.events = event_listing(entity_list(payload, "events"))
        self.pair_bonds = bond_listing(entity_list(payload, "pair_bonds"))

    @property
    def empty(self) -> bool:
        return not (self.people.items or self.events.items or self.pair_bonds.items)


def match_payloads(
    ai: dict[str, list[Item]], gt: dict[str, list[Item]], settings: MatchSettings
) -> dict[str, MatchResult]:
    """People first; their id map then resolves the links of events and pair bonds.

    ai and gt hold the people, events and pair_bonds lists of each payload.
    """
    matchings = _match_sides(_Side(ai), _Side(gt), settings)
    return {entity: matching.result() for entity, matching in matchings.items()}


def _match_sides(ai: _Side, gt: _Side, settings: MatchSettings) -> dict[str, Matching]:
    """People first, then events and pair bonds through the people map. The optimal
    strategy chooses the people map that matches the most items overall (joint.py);
    greedy takes people in list order, as the reference implementation does."""
    if settings.strategy == "greedy":
        search = None
    else:
        search = JointSearch(
            ai.people, gt.people, settings, (ai.events, gt.events), (ai.pair_bonds, gt.pair_bonds)
        )
    people = match_listed_people(
        ai.people, gt.people, ai.pair_bonds.items, gt.pair_bonds.items, settings, search
    )
    if search is not None:
        events, pair_bonds = search.matchings(people.pairs)
    else:
        resolver = people.resolver()
        events = match_listed_events(ai.events, gt.events, resolver, settings)
        pair_bonds = match_listed_pair_bonds(ai.pair_bonds, gt.pair_bonds, resolver, settings)
    return {"people": people, "events": events, "pair_bonds": pair_bonds}


def _entity_fields(fields: dict[str, Any], entity: str, matching: Matching) -> None:
    """Adds one entity type's counts, F1, matched rows and unmatched ids to fields."""
    ai_ids, gt_ids, scores = matching.ai.ids, matching.gt.ids, matching.scores
    tp, fp, fn = len(matching.pairs), matching.fp, matching.fn
    tp_name, fp_name, fn_name, f1_name, matches_name, fp_ids_name, fn_ids_name = _FIELD_NAMES[
        entity
    ]
    fields[tp_name], fields[fp_name], fields[fn_name] = tp, fp, fn
    fields[f1_name] = f1_from_counts(tp, fp, fn)
    # The rows MatchedPair.to_row() gives.
    fields[matches_name] = [
        {"ai_id": ai_ids[i], "gt_id": gt_ids[j], "score": row_score(scores[i][j])}
        for i, j in matching.pairs
    ]
    fields[fp_ids_name] = [ai_ids[i] for i in matching.unmatched_ai]
    fields[fn_ids_name] = [gt_ids[j] for j in matching.unmatched_gt]


# Interned: the fields become keyword arguments of the result's __init__, and CPython
# matches keywords by identity first (a built string costs a slow comparison per field).
_FIELD_NAMES = {
    entity: tuple(
        sys.intern(f"{entity}_{suffix}")
        for suffix in ("tp", "fp", "fn", "f1", "matches", "fp_ids", "fn_ids")
    )
    for entity in ENTITY_TYPES
}


def _sarf_fields(fields: dict[str, Any], events: Matching) -> None:
    """Adds the SARF code pairs of the matched events and their macro-F1s to fields."""
    ai_items, gt_items = events.ai.items, events.gt.items
    # Per variable, the AI's and the GT's codes of every matched pair.
    ai_columns = _columns([sarf_values(ai_items[i]) for i, _ in events.pairs])
    gt_columns = _columns([sarf_values(gt_items[j]) for _, j in events.pairs])
    pairs: dict[str, list[list[str]]] = {}
    fields["sarf_pairs"] = pairs
    for variable, name, ai_column, gt_column in zip(
        SARF_VARIABLES, _MACRO_F1_NAMES, ai_columns, gt_columns, strict=True
    ):
        pairs[variable] = list(map(list, zip(ai_column, gt_column, strict=True)))
        fields[name] = macro_f1_from_columns(ai_column, gt_column)


_MACRO_F1_NAMES = tuple(sys.intern(f"{variable}_macro_f1") for variable in SARF_VARIABLES)


def _columns(rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The transpose of rows of SARF codes (one empty column per variable if no rows)."""
    return list(zip(*rows, strict=True)) if rows else [() for _ in SARF_VARIABLES]


def exactly_equal(ai: Item, gt: Item, ai_lists: dict, gt_lists: dict) -> bool:
    """normalize_for_exact_match(ai) == normalize_for_exact_match(gt), with cheap
    necessary conditions first: normalising is the costliest step per statement."""
    return _sides_equal(_Side(ai), _Side(gt))


def _sides_equal(ai: _Side, gt: _Side) -> bool:
    for ai_listing, gt_listing in (
        (ai.people, gt.people),
        (ai.events, gt.events),
        (ai.pair_bonds, gt.pair_bonds),
    ):
        if len(ai_listing.items) != len(gt_listing.items):
            return False
    for ai_listing, gt_listing in ((ai.people, gt.people), (ai.events, gt.events)):
        if sorted(ai_listing.texts) != sorted(gt_listing.texts):
            return False  # names or descriptions differ: normalised forms would too
    return normalize_for_exact_match(ai.payload) == normalize_for_exact_match(gt.payload)


def _kind_label(event: dict[str, Any]) -> str:
    return normalize_text(event.get("kind")) or "none"
