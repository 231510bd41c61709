"""Comparing one AI payload with one GT payload."""

from __future__ import annotations

from typing import Any

from .matching import MatchResult, match_events, match_pair_bonds, match_people
from .normalize import normalize_for_exact_match
from .payload import ENTITY_LISTS, as_payload, entity_lists, item_id
from .results import ENTITY_TYPES, StatementF1Metrics
from .sarf import SARF_VARIABLES, macro_f1_from_pairs, sarf_value
from .scores import f1_from_counts
from .settings import MatchSettings, resolve_settings
from .text import normalize_text, person_name

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
    ai_lists, gt_lists = entity_lists(ai), entity_lists(gt)
    results = match_payloads(ai_lists, gt_lists, settings)
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
    fields["exact_match"] = exactly_equal(ai, gt, ai_lists, gt_lists)
    fields["trivial"] = not any(ai_lists.values()) and not any(gt_lists.values())
    return fields


def match_payloads(
    ai: dict[str, list[Item]], gt: dict[str, list[Item]], settings: MatchSettings
) -> dict[str, MatchResult]:
    """People first; their id map then resolves the links of events and pair bonds.

    ai and gt hold the people, events and pair_bonds lists of each payload.
    """
    people = match_people(
        ai["people"], gt["people"], ai["pair_bonds"], gt["pair_bonds"], settings=settings
    )
    resolver = people.resolver()
    return {
        "people": people,
        "events": match_events(ai["events"], gt["events"], resolver, settings=settings),
        "pair_bonds": match_pair_bonds(
            ai["pair_bonds"], gt["pair_bonds"], resolver, settings=settings
        ),
    }


def _entity_fields(entity: str, result: MatchResult) -> dict[str, Any]:
    return {
        f"{entity}_tp": result.tp,
        f"{entity}_fp": result.fp,
        f"{entity}_fn": result.fn,
        f"{entity}_f1": f1_from_counts(result.tp, result.fp, result.fn),
        f"{entity}_matches": [pair.to_row() for pair in result.pairs],
        f"{entity}_fp_ids": [item_id(item) for item in result.unmatched_ai],
        f"{entity}_fn_ids": [item_id(item) for item in result.unmatched_gt],
    }


def _sarf_fields(events: MatchResult) -> dict[str, Any]:
    pairs = {
        variable: [[sarf_value(p.ai, variable), sarf_value(p.gt, variable)] for p in events.pairs]
        for variable in SARF_VARIABLES
    }
    fields: dict[str, Any] = {"sarf_pairs": pairs}
    for variable in SARF_VARIABLES:
        fields[f"{variable}_macro_f1"] = macro_f1_from_pairs(pairs[variable])
    return fields


def exactly_equal(ai: Item, gt: Item, ai_lists: dict, gt_lists: dict) -> bool:
    """normalize_for_exact_match(ai) == normalize_for_exact_match(gt), with cheap
    necessary conditions first: normalising is the costliest step per statement."""
    for key in ENTITY_LISTS:
        if len(ai_lists[key]) != len(gt_lists[key]):
            return False
    if _text_multiset(ai_lists) != _text_multiset(gt_lists):
        return False
    return normalize_for_exact_match(ai) == normalize_for_exact_match(gt)


def _text_multiset(lists: dict[str, list[Item]]) -> list[str]:
    names = [person_name(p) for p in lists["people"]]
    texts = [normalize_text(e.get("description")) for e in lists["events"]]
    return sorted(names) + sorted(texts)


def _kind_label(event: dict[str, Any]) -> str:
    return normalize_text(event.get("kind")) or "none"
