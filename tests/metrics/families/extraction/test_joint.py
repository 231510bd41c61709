"""The joint people assignment: the most matched items of the whole statement.

A generator of hard statements (typos, duplicate and near-duplicate people, namesakes,
shared and unshared ids, bonds to committed people, shuffled lists) drives property
tests against greedy in several list orders and against an exhaustive reference.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz import fuzz

from metrics.families.extraction import (
    MatchResult,
    MatchSettings,
    calculate_statement_f1,
    match_events,
    match_pair_bonds,
    match_people,
)
from metrics.families.extraction.joint import COMBINATION_LIMIT, JointSearch
from metrics.families.extraction.matching import (
    bond_listing,
    event_listing,
    people_listing,
)
from metrics.families.extraction.text import similar_pairs

OPTIMAL, GREEDY = MatchSettings(strategy="optimal"), MatchSettings(strategy="greedy")
# Statements per hypothesis example (a seed drives the generator; batches keep the
# hypothesis overhead low): each property checks 3,000 statements under the ci profile.
BATCH = 10


def total_matches(result) -> int:
    return result.people_tp + result.events_tp + result.pair_bonds_tp


# --- the worked case from the issue -----------------------------------------------


def michael_statement():
    """The AI lists a typo (Michaeu, -52) and Michael (-80); its event and bond name
    -52. The GT lists Michael (-3) with the same event and bond."""
    ai = {
        "people": [{"id": -52, "name": "Michaeu"}, {"id": -80, "name": "Michael"}],
        "events": [{"id": -1, "kind": "shift", "person": -52, "description": "lost his job"}],
        "pair_bonds": [{"id": -9, "person_a": -52, "person_b": 7}],
    }
    gt = {
        "people": [{"id": -3, "name": "Michael"}],
        "events": [{"id": -2, "kind": "shift", "person": -3, "description": "lost his job"}],
        "pair_bonds": [{"id": -8, "person_a": -3, "person_b": 7}],
    }
    return ai, gt


@pytest.mark.parametrize("strategy", [OPTIMAL, GREEDY], ids=lambda s: s.strategy)
def test_the_typo_that_carries_the_event_and_bond_takes_the_person(strategy):
    ai, gt = michael_statement()
    result = calculate_statement_f1(ai, gt, settings=strategy)
    assert result.people_matches == [{"ai_id": -52, "gt_id": -3, "score": 0.857143}]
    assert (result.events_tp, result.pair_bonds_tp) == (1, 1)
    assert result.aggregate_micro_f1 == pytest.approx(6 / 7)  # 0.857
    # The better name alone would have lost both: one person of seven items matched.
    people_only = match_people(ai["people"], gt["people"])
    assert [(p.ai_id, p.gt_id) for p in people_only.pairs] == [(-80, -3)]


def test_without_events_or_bonds_the_better_name_wins():
    ai, gt = michael_statement()
    for payload in (ai, gt):
        payload["events"], payload["pair_bonds"] = [], []
    result = calculate_statement_f1(ai, gt)
    assert result.people_matches == [{"ai_id": -80, "gt_id": -3, "score": 1.0}]


def test_ties_go_to_the_better_name_then_the_equal_id():
    # Two Michaels, either could be the GT's: no event decides, so the equal id does.
    ai = {"people": [{"id": -5, "name": "Michael"}, {"id": -3, "name": "Michael"}]}
    gt = {"people": [{"id": -3, "name": "Michael"}]}
    assert calculate_statement_f1(ai, gt).people_matches[0]["ai_id"] == -3
    # An event on the other Michael outweighs the equal id.
    ai["events"] = [{"id": -1, "kind": "shift", "person": -5, "description": "moved"}]
    gt["events"] = [{"id": -2, "kind": "shift", "person": -3, "description": "moved"}]
    result = calculate_statement_f1(ai, gt)
    assert result.people_matches[0]["ai_id"] == -5
    assert result.events_tp == 1


def test_past_the_combination_limit_groups_improve_one_at_a_time():
    # Nine independent Michael/Michaeu conflicts: 2**9 combinations > the limit.
    ai, gt = {"people": [], "events": []}, {"people": [], "events": []}
    surnames = ["Abbott", "Brown", "Clarke", "Dunn", "Evans", "Fitz", "Gray", "Hughes", "Irwin"]
    for k, last in enumerate(surnames):
        ai["people"] += [
            {"id": -100 - k, "name": "Michaeu", "last_name": last},
            {"id": -200 - k, "name": "Michael", "last_name": last},
        ]
        gt["people"].append({"id": -300 - k, "name": "Michael", "last_name": last})
        job = f"lost job number {k}"
        ai["events"].append(
            {"id": -400 - k, "kind": "shift", "person": -100 - k, "description": job}
        )
        gt["events"].append(
            {"id": -500 - k, "kind": "shift", "person": -300 - k, "description": job}
        )
    assert COMBINATION_LIMIT < 2**9
    result = calculate_statement_f1(ai, gt)
    assert (result.people_tp, result.events_tp) == (9, 9)
    assert all(-200 < m["ai_id"] <= -100 for m in result.people_matches)  # the Michaeus


# --- generator --------------------------------------------------------------------

FIRST_NAMES = ["Michael", "Michelle", "Mark", "Maria", "Mary", "Ann", "Anna", "Paul", "Paula"]
LAST_NAMES = [None, None, "Smith", "Smyth"]
KINDS = ["shift", "birth", "death"]
DESCRIPTIONS = ["lost his job", "lost her job", "moved away", "moved abroad", "fell ill"]


def typo(rng: random.Random, name: str) -> str:
    """The name with one letter replaced, dropped or doubled."""
    at = rng.randrange(len(name))
    how = rng.choice(["replace", "drop", "double"])
    if how == "replace":
        return name[:at] + rng.choice("aeiouy") + name[at + 1 :]
    if how == "drop" and len(name) > 3:
        return name[:at] + name[at + 1 :]
    return name[:at] + name[at] + name[at:]


def make_statement(rng: random.Random, with_parents: bool = False) -> tuple[dict, dict]:
    """(ai, gt) payloads for one statement of a few people with namesakes, typos,
    duplicates, spurious near-duplicates, events, pair bonds and shuffled lists."""
    gt_people = []
    for k in range(rng.randint(1, 4)):
        person = {"id": -(k + 1), "name": rng.choice(FIRST_NAMES)}  # namesakes too
        last = rng.choice(LAST_NAMES)
        if last:
            person["last_name"] = last
        gt_people.append(person)
    spare_ids = rng.sample(range(-1, -21, -1), 20)  # AI ids, which may collide with GT ids
    ai_people, counterpart = [], {}  # counterpart: GT id -> the AI ids standing for it

    def new_ai_id(wanted=None):
        taken = {p["id"] for p in ai_people}
        if wanted is not None and wanted not in taken:
            return wanted  # a shared id: the AI kept the GT's
        return next(i for i in spare_ids if i not in taken)

    for person in gt_people:
        for _ in range(rng.choice([0, 1, 1, 1, 2])):  # missed, found, duplicated
            name = typo(rng, person["name"]) if rng.random() < 0.5 else person["name"]
            ident = new_ai_id(person["id"] if rng.random() < 0.5 else None)
            ai_people.append({**person, "id": ident, "name": name})
            counterpart.setdefault(person["id"], []).append(ident)
    for _ in range(rng.randint(0, 2)):  # spurious near-duplicates
        base = rng.choice(gt_people)
        ai_people.append({**base, "id": new_ai_id(), "name": typo(rng, base["name"])})

    def ai_person(gt_id):
        """The AI's reference for a GT person: one of its copies, or (missed) another."""
        return rng.choice(counterpart.get(gt_id) or [p["id"] for p in ai_people] or [gt_id])

    gt_events, ai_events = [], []
    for k in range(rng.randint(0, 3)):
        owner = rng.choice(gt_people)["id"]
        kind, text = rng.choice(KINDS), rng.choice(DESCRIPTIONS)
        gt_events.append({"id": -20 - k, "kind": kind, "person": owner, "description": text})
        if rng.random() < 0.8:  # the AI mostly finds it
            text = rng.choice([text, text, *DESCRIPTIONS])
            ai_events.append(
                {"id": -40 - k, "kind": kind, "person": ai_person(owner), "description": text}
            )
    gt_bonds, ai_bonds = [], []
    for k in range(rng.randint(0, 2)):
        a = rng.choice(gt_people)["id"]
        b = rng.choice([p["id"] for p in gt_people if p["id"] != a] + [7])  # 7: committed
        gt_bonds.append({"id": -60 - k, "person_a": a, "person_b": b})
        if rng.random() < 0.8:
            b_ai = b if b == 7 else ai_person(b)
            ai_bonds.append({"id": -70 - k, "person_a": ai_person(a), "person_b": b_ai})
    if with_parents:
        for people, bonds in ((gt_people, gt_bonds), (ai_people, ai_bonds)):
            if people and bonds:
                rng.choice(people)["parents"] = rng.choice(bonds)["id"]
    ai = {"people": ai_people, "events": ai_events, "pair_bonds": ai_bonds}
    gt = {"people": gt_people, "events": gt_events, "pair_bonds": gt_bonds}
    return reordered(ai, rng.random()), reordered(gt, rng.random())


def statements(size: int = BATCH, with_parents: bool = False):
    """A batch of generated statements per example: hypothesis draws the seed (and
    reports it on failure), the generator above builds the statements."""
    return st.integers(0, 2**63).map(
        lambda seed: [
            make_statement(random.Random(seed * 1000 + k), with_parents) for k in range(size)
        ]
    )


def reordered(payload, seed):
    """The payload with each list shuffled."""
    shuffle = random.Random(seed)
    copy = {key: list(items) for key, items in payload.items()}
    for items in copy.values():
        shuffle.shuffle(items)
    return copy


# --- exhaustive reference -----------------------------------------------------------


def candidate_pairs(ai_people, gt_people):
    """Every (ai index, gt index, score) whose full names are more than 0.8 alike (the
    rapidfuzz ratio of the lowercased 'first last' names, as the specification defines)."""

    def name(person):
        return " ".join(filter(None, [person.get("name"), person.get("last_name")])).lower()

    return [
        (i, j, fuzz.ratio(name(a), name(g)) / 100)
        for i, a in enumerate(ai_people)
        for j, g in enumerate(gt_people)
        if fuzz.ratio(name(a), name(g)) / 100 > 0.8
    ]


def all_matchings(pairs):
    """Every one-to-one subset of pairs (including the empty one), row by row."""
    rows = sorted({i for i, _, _ in pairs})

    def extend(index, used, chosen):
        if index == len(rows):
            yield tuple(chosen)
            return
        yield from extend(index + 1, used, chosen)  # this row left unmatched
        for pair in pairs:
            if pair[0] == rows[index] and pair[1] not in used:
                yield from extend(index + 1, used | {pair[1]}, [*chosen, pair])

    return extend(0, frozenset(), [])


def exhaustive_best(ai, gt, limit=4096):
    """(most matched items, best name score among those) over every people assignment,
    or None when there are more than `limit` to try."""
    pairs = candidate_pairs(ai["people"], gt["people"])
    if sum(1 for _ in zip(range(limit + 1), all_matchings(pairs), strict=False)) > limit:
        return None
    ai_ids = {p["id"] for p in ai["people"]}
    best = None
    for matching in all_matchings(pairs):
        id_map = {ai["people"][i]["id"]: gt["people"][j]["id"] for i, j, _ in matching}
        people = MatchResult(id_map=id_map, ai_ids=ai_ids)
        events = match_events(ai["events"], gt["events"], people)
        bonds = match_pair_bonds(ai["pair_bonds"], gt["pair_bonds"], people)
        rank = (
            len(matching) + events.tp + bonds.tp,
            sum(round(score * 1_000_000) for _, _, score in matching),
        )
        best = rank if best is None else max(best, rank)
    return best


def name_units(result) -> int:
    return sum(round(m["score"] * 1_000_000) for m in result.people_matches)


# --- properties ---------------------------------------------------------------------


@given(statements(), st.integers(0, 2**16))
def test_optimal_never_matches_fewer_items_than_greedy_in_any_order(batch, seed):
    for ai, gt in batch:
        optimal = total_matches(calculate_statement_f1(ai, gt))
        for order in range(3):
            ai_order, gt_order = reordered(ai, seed + order), reordered(gt, seed - order)
            greedy = calculate_statement_f1(ai_order, gt_order, settings=GREEDY)
            assert optimal >= total_matches(greedy), (ai_order, gt_order)
            # The joint optimum does not depend on the list order either.
            assert total_matches(calculate_statement_f1(ai_order, gt_order)) == optimal


@given(statements(with_parents=True))
def test_with_parents_optimal_never_matches_fewer_items_than_greedy(batch):
    for ai, gt in batch:
        optimal = total_matches(calculate_statement_f1(ai, gt))
        for seed in range(3):
            ai_order, gt_order = reordered(ai, seed), reordered(gt, seed + 7)
            greedy = calculate_statement_f1(ai_order, gt_order, settings=GREEDY)
            assert optimal >= total_matches(greedy), (ai_order, gt_order)


@given(statements())
def test_optimal_equals_the_exhaustive_best(batch):
    for ai, gt in batch:
        best = exhaustive_best(ai, gt)
        if best is None:
            continue  # too many assignments to enumerate
        result = calculate_statement_f1(ai, gt)
        assert (total_matches(result), name_units(result)) == best, (ai, gt)


def test_the_reference_names_the_same_candidates_as_the_engine():
    # The exhaustive reference's own name rule gives the engine's candidate pairs.
    ai, gt = michael_statement()
    ai["people"].append({"id": -81, "name": "Michel", "last_name": "Smith"})
    gt["people"].append({"id": -4, "name": "michael", "last_name": "smith"})
    engine = similar_pairs(
        people_listing(ai["people"]).texts, people_listing(gt["people"]).texts, 0.8
    )
    reference = candidate_pairs(ai["people"], gt["people"])
    assert {(i, j) for i, row in enumerate(engine) for j in row} == {
        (i, j) for i, j, _ in reference
    }


def test_the_search_remembers_each_people_map_it_scored():
    ai, gt = michael_statement()
    search = JointSearch(
        people_listing(ai["people"]),
        people_listing(gt["people"]),
        OPTIMAL,
        (event_listing(ai["events"]), event_listing(gt["events"])),
        (bond_listing(ai["pair_bonds"]), bond_listing(gt["pair_bonds"])),
    )
    first = search.matchings([(0, 0)])
    assert search.matchings([(0, 0)]) is first
    assert [len(m.pairs) for m in first] == [1, 1]
    assert [len(m.pairs) for m in search.matchings([(1, 0)])] == [0, 0]
