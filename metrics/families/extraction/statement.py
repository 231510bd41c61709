"""Comparing one AI payload with one GT payload."""

from __future__ import annotations

from typing import Any

from .matching import (
    MatchResult,
    bond_listing,
    event_listing,
    match_listed_events,
    match_listed_pair_bonds,
    match_listed_people,
    people_listing,
)
from .normalize import normalize_for_exact_match
from .payload import as_payload, entity_list, item_id
from .results import ENTITY_TYPES, StatementF1Metrics
from .sarf import SARF_VARIABLES, macro_f1_from_pairs, sarf_values
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
    results = _match_sides(ai_side, gt_side, settings)
    fields: dict[str, Any] = {"settings": settings}
    for entity, result in results.items():
        fields.update(_entity_fields(entity, result))
    fields["aggregate_micro_f1"] = f1_from_counts(
        *(
            sum(fields[f"{entity}_{count}"] for entity in ENTITY_TYPES)
            for count in ("tp", "fp", "fn")
        )
    )
    fields.update(_sarf_fields(results["events"]))
    fields["fn_event_kinds"] = [_kind_label(e) for e in results["events"].unmatched_gt]
    fields["fp_event_kinds"] = [_kind_label(e) for e in results["events"].unmatched_ai]
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
    return _match_sides(_Side(ai), _Side(gt), settings)


def _match_sides(ai: _Side, gt: _Side, settings: MatchSettings) -> dict[str, MatchResult]:
    people = match_listed_people(
        ai.people, gt.people, ai.pair_bonds.items, gt.pair_bonds.items, settings
    )
    resolver = people.resolver()
    return {
        "people": people,
        "events": match_listed_events(ai.events, gt.events, resolver, settings),
        "pair_bonds": match_listed_pair_bonds(ai.pair_bonds, gt.pair_bonds, resolver, settings),
    }


def _entity_fields(entity: str, result: MatchResult) -> dict[str, Any]:
    tp, fp, fn, f1, matches, fp_ids, fn_ids = _FIELD_NAMES[entity]
    return {
        tp: result.tp,
        fp: result.fp,
        fn: result.fn,
        f1: f1_from_counts(result.tp, result.fp, result.fn),
        matches: [pair.to_row() for pair in result.pairs],
        fp_ids: [item_id(item) for item in result.unmatched_ai],
        fn_ids: [item_id(item) for item in result.unmatched_gt],
    }


_FIELD_NAMES = {
    entity: tuple(
        f"{entity}_{suffix}" for suffix in ("tp", "fp", "fn", "f1", "matches", "fp_ids", "fn_ids")
    )
    for entity in ENTITY_TYPES
}


def _sarf_fields(events: MatchResult) -> dict[str, Any]:
    ai_codes = [sarf_values(pair.ai) for pair in events.pairs]
    gt_codes = [sarf_values(pair.gt) for pair in events.pairs]
    pairs: dict[str, list[list[str]]] = {}
    fields: dict[str, Any] = {"sarf_pairs": pairs}
    for index, variable in enumerate(SARF_VARIABLES):
        ai_column = [codes[index] for codes in ai_codes]
        gt_column = [codes[index] for codes in gt_codes]
        pairs[variable] = list(map(list, zip(ai_column, gt_column, strict=True)))
        # Full agreement scores 1.0 whatever the classes (see macro_f1_from_pairs).
        agree = ai_column and ai_column == gt_column
        fields[f"{variable}_macro_f1"] = 1.0 if agree else macro_f1_from_pairs(pairs[variable])
    return fields


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
