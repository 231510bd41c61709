"""Matching AI events to GT events through the people map: same kind, linked people and dates
that agree, then the closest description.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .assignment import KeyFunction
from .dates import DateIndex, date_similarity, event_date
from .matches import (
    NO_IDS,
    Item,
    Listing,
    Matching,
    MatchResult,
    PeopleLinks,
    as_resolver,
    assign_pairs,
    event_listing,
)
from .payload import as_id, clean_items, id_list
from .settings import MatchSettings, resolve_settings
from .text import normalized, pair_similarities


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
    return Matching(ai, gt, assign_pairs(candidates, ai, gt, keys, settings), candidates)


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
    resolve = as_resolver(people)
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
        frozenset(map(resolve, id_list(targets))) if targets else NO_IDS,
        frozenset(map(resolve, id_list(triangles))) if triangles else NO_IDS,
    )


def _resolved_links(links: tuple, resolve: Callable[[Any], Any]) -> tuple:
    """_event_links(event, resolve) from the event's _event_links(event, as_id): the ids
    are read once per memo, and only resolved per people map."""
    person, spouse, child, targets, triangles = links
    return (
        None if person is None else resolve(person),
        None if spouse is None else resolve(spouse),
        None if child is None else resolve(child),
        frozenset(map(resolve, targets)) if targets else NO_IDS,
        frozenset(map(resolve, triangles)) if triangles else NO_IDS,
    )


def _event_key(events: Listing, kinds: list[str]) -> KeyFunction:
    """sort_key(kind, description, dateTime, id); kind and description are strings
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
