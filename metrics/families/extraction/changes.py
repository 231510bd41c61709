"""What changed in one statement between two configurations (pure: plain data in and out).

Each side is a list of replicates, each the statement's stored figures (``StatementF1Metrics``
as a dict: matched pairs, unmatched ids, SARF code pairs in the order of the matched events)
and the AI payload they were computed from. With replicates, a side "matches" a ground-truth
item when more than half its replicates match it, and "claims" a spurious item (known by its
content: a name, an event's kind and description, a pair's names) when more than half claim
it; a SARF code is the one most of its replicates gave.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from metrics.families.payload.items import ENTITY_KINDS, entity_items

from .sarf import SARF_VARIABLES
from .text import normalize_text

Replicate = tuple[Mapping[str, Any], Mapping[str, Any] | None]  # (stored values, AI payload)


def _person(item: Mapping[str, Any]) -> str:
    parts = (item.get("name"), item.get("last_name"))
    return " ".join(str(p) for p in parts if p) or f"person {item.get('id')}"


def item_text(kind: str, item: Mapping[str, Any], people: Mapping[Any, str]) -> str:
    """A short readable text of one item; ``people``: names by id, for its links."""
    if kind == "people":
        return _person(item)
    if kind == "pair_bonds":
        a, b = (people.get(item.get(k), f"person {item.get(k)}") for k in ("person_a", "person_b"))
        return " & ".join(sorted((a, b)))
    who = people.get(item.get("person"), "")
    text = f"{item.get('kind') or 'event'}: {item.get('description') or ''}".strip(": ")
    return f"{text} ({who})" if who else text


def people_names(payload: Mapping[str, Any] | None) -> dict[Any, str]:
    return {p.get("id"): _person(p) for p in entity_items(payload, "people")}


def _majority(votes: Counter, n: int) -> set:
    return {key for key, count in votes.items() if count * 2 > n}


def _matched(side: Sequence[Replicate], kind: str) -> set:
    votes: Counter = Counter()
    for values, _ in side:
        votes.update({row.get("gt_id") for row in values.get(f"{kind}_matches") or []})
    return _majority(votes, len(side))


def _spurious(side: Sequence[Replicate], kind: str) -> set[str]:
    votes: Counter = Counter()
    for values, payload in side:
        wrong = set(values.get(f"{kind}_fp_ids") or [])
        names = people_names(payload)
        texts = {
            normalize_text(item_text(kind, item, names)) or "?"
            for item in entity_items(payload, kind)
            if item.get("id") in wrong
        }
        votes.update(texts)
    return _majority(votes, len(side))


def _codes(side: Sequence[Replicate]) -> dict[tuple[Any, str], str]:
    """(GT event id, variable) -> the AI code most replicates gave (ties: the first seen)."""
    votes: dict[tuple[Any, str], Counter] = {}
    for values, _ in side:
        matches = values.get("events_matches") or []
        pairs = values.get("sarf_pairs") or {}
        for variable in SARF_VARIABLES:
            for match, pair in zip(matches, pairs.get(variable) or [], strict=False):
                votes.setdefault((match.get("gt_id"), variable), Counter())[pair[0]] += 1
    return {key: counter.most_common(1)[0][0] for key, counter in votes.items()}


def _gt_codes(side: Sequence[Replicate]) -> dict[tuple[Any, str], str]:
    codes = {}
    for values, _ in side:
        matches = values.get("events_matches") or []
        pairs = values.get("sarf_pairs") or {}
        for variable in SARF_VARIABLES:
            for match, pair in zip(matches, pairs.get(variable) or [], strict=False):
                codes[(match.get("gt_id"), variable)] = pair[1]
    return codes


def statement_changes(
    baseline: Sequence[Replicate], candidate: Sequence[Replicate]
) -> dict[str, Any]:
    """Per entity kind the ground-truth ids newly missed and newly matched, the spurious items
    newly claimed and no longer claimed (their texts); the SARF codes that changed on events
    both sides matched, each "fixed" (the candidate's is the ground truth's), "broke" (the
    baseline's was) or "changed"."""
    out: dict[str, Any] = {}
    for kind in ENTITY_KINDS:
        before, after = _matched(baseline, kind), _matched(candidate, kind)
        spurious_before, spurious_after = _spurious(baseline, kind), _spurious(candidate, kind)
        out[kind] = {
            "newly_missed": sorted(before - after, key=str),
            "newly_matched": sorted(after - before, key=str),
            "newly_spurious": sorted(spurious_after - spurious_before),
            "no_longer_spurious": sorted(spurious_before - spurious_after),
        }
    before_codes, after_codes = _codes(baseline), _codes(candidate)
    truth = {**_gt_codes(baseline), **_gt_codes(candidate)}
    flips = []
    for key in sorted(before_codes.keys() & after_codes.keys(), key=str):
        old, new = before_codes[key], after_codes[key]
        if old == new:
            continue
        gt = truth.get(key)
        change = "fixed" if new == gt else "broke" if old == gt else "changed"
        flips.append(
            {
                "event": key[0],
                "variable": key[1],
                "gt": gt,
                "baseline": old,
                "candidate": new,
                "change": change,
            }
        )
    out["sarf"] = flips
    return out
