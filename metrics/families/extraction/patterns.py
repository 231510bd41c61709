"""Error patterns of extraction results, for the failure packets: what a pattern key names,
which SARF confusion cells it takes, and, for one statement, the AI's and the ground truth's
items the pattern is about, side by side. Pure: stored statement values and payloads in.

Patterns (``pattern_parse``):
- ``people_fn``, ``events_fp``, … : people, events or pair bonds missed (``_fn``) or spurious
  (``_fp``), as the statement results count them;
- ``events_fn:<kind>``, ``events_fp:<kind>``: events of one kind missed or spurious;
- ``sarf_high:<variable>``, ``sarf_low:<variable>``: a direction variable (symptom, anxiety,
  functioning) of a matched event coded higher or lower than the ground truth, on the scale
  down < same = not coded < up; ``sarf_wrong:<variable>``: coded differently at all (the one
  pattern of the relationship codes, which have no order);
- ``parent_links``: a matched person whose parents differ from the ground truth's (missing,
  spurious or other people), read through the people the matcher paired. F1 does not score
  this directly (the matcher leaves pairs whose parents disagree unmatched, which counts as a
  missed and a spurious person); the pattern finds the links the matched people got wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .payload import as_id, bonds_by_id, entity_list, parent_person_ids
from .results import ENTITY_TYPES
from .sarf import SARF_VARIABLES, sarf_value
from .text import normalize_text

DIRECTIONAL: tuple[str, ...] = ("symptom", "anxiety", "functioning")
DIRECTION_RANK = {"down": -1, "same": 0, "none": 0, "up": 1}
ENTITY_WORDS = {"people": "people", "events": "events", "pair_bonds": "pair bonds"}
PARENT_LINKS = "parent_links"
KIND_CHARS = 64
# The keys pattern_parse takes, as a regular expression (an API's schema states it).
PATTERN_REGEX = (
    r"^((people|events|pair_bonds)_(fn|fp)|events_(fn|fp):[^\x00]*[^\x00\s][^\x00]*|sarf_(high|low):"
    r"(symptom|anxiety|functioning)|sarf_wrong:(symptom|anxiety|relationship|functioning)"
    r"|parent_links)\Z"
)
Item = dict[str, Any]


@dataclass(frozen=True)
class Pattern:
    key: str
    kind: str  # "entity", "event_kind", "sarf" or "parents"
    entity: str = ""  # people / events / pair_bonds
    missed: bool = True
    event_kind: str = ""
    variable: str = ""
    direction: str = ""  # high / low / wrong

    @property
    def label(self) -> str:
        """The pattern in words: "missed pair bonds", "anxiety coded too high"."""
        if self.kind == "entity":
            return f"{'missed' if self.missed else 'spurious'} {ENTITY_WORDS[self.entity]}"
        if self.kind == "event_kind":
            return f"{'missed' if self.missed else 'spurious'} {self.event_kind} events"
        if self.kind == "sarf":
            words = {"high": "coded too high", "low": "coded too low", "wrong": "coded wrong"}
            return f"{self.variable} {words[self.direction]}"
        return "wrong parent links"

    def cell(self, ai: str, gt: str) -> bool:
        """Whether a SARF confusion cell (the AI's value, the ground truth's) is this
        pattern's."""
        if self.kind != "sarf" or ai == gt:
            return False
        if self.direction == "wrong":
            return True
        low, high = DIRECTION_RANK.get(gt), DIRECTION_RANK.get(ai)
        if low is None or high is None:
            return False
        return high > low if self.direction == "high" else high < low


def pattern_parse(key: str) -> Pattern:
    """The pattern a key names; ValueError saying what is expected."""
    key = str(key).strip()
    head, _, rest = key.partition(":")
    if not rest:
        entity, _, which = key.rpartition("_")
        if entity in ENTITY_TYPES and which in ("fn", "fp"):
            return Pattern(key, "entity", entity=entity, missed=which == "fn")
        if key == PARENT_LINKS:
            return Pattern(key, "parents")
    elif (
        head in ("events_fn", "events_fp")
        and normalize_text(rest)
        and len(rest) <= KIND_CHARS
        and "\x00" not in rest
    ):
        kind = normalize_text(rest)  # as the results name kinds
        return Pattern(
            f"{head}:{kind}",
            "event_kind",
            entity="events",
            missed=head == "events_fn",
            event_kind=kind,
        )
    elif head.startswith("sarf_") and rest in SARF_VARIABLES:
        direction = head.removeprefix("sarf_")
        if direction == "wrong" or (direction in ("high", "low") and rest in DIRECTIONAL):
            return Pattern(key, "sarf", variable=rest, direction=direction)
    raise ValueError(
        "expected people_fn, events_fp, pair_bonds_fn (…_fn missed, …_fp spurious), "
        "events_fn:<kind>, sarf_high:<variable> or sarf_low:<variable> (symptom, anxiety, "
        "functioning), sarf_wrong:<variable>, or parent_links"
    )


def sarf_patterns() -> list[Pattern]:
    """Every SARF pattern: too high and too low per direction variable, wrong relationship."""
    patterns = [
        pattern_parse(f"sarf_{direction}:{variable}")
        for variable in DIRECTIONAL
        for direction in ("high", "low")
    ]
    return [*patterns, pattern_parse("sarf_wrong:relationship")]


def pattern_cells(pattern: Pattern, confusion: Mapping[str, Mapping[str, int]]) -> int:
    """How many matched events of one confusion table ({ai: {gt: n}}) are the pattern's."""
    return sum(
        n for ai, cells in confusion.items() for gt, n in cells.items() if pattern.cell(ai, gt)
    )


# --- one statement -----------------------------------------------------------------------------


def _by_id(items: Iterable[Item]) -> dict[Any, Item]:
    return {as_id(item.get("id")): item for item in items}


def _kind(event: Item) -> str:
    return normalize_text(event.get("kind")) or "none"


@dataclass(frozen=True)
class ParentLinkError:
    ai_id: Any
    gt_id: Any
    ai_parents: list[Any] | None  # as ground-truth ids where the AI's parent was matched
    gt_parents: list[Any] | None


def parent_link_errors(
    ai: Mapping[str, Any] | None, gt: Mapping[str, Any] | None, people_matches: Iterable[Item]
) -> list[ParentLinkError]:
    """The matched people (``people_matches``: {ai_id, gt_id}) whose parents differ: the AI's
    parent ids read through the people map (an AI person left unmatched maps to nobody, an id
    the AI payload does not list is that same person on both sides) against the ground
    truth's. A parents bond outside the payload compares by its id."""
    ai, gt = dict(ai or {}), dict(gt or {})
    ai_people, gt_people = _by_id(entity_list(ai, "people")), _by_id(entity_list(gt, "people"))
    ai_bonds = bonds_by_id(entity_list(ai, "pair_bonds"))
    gt_bonds = bonds_by_id(entity_list(gt, "pair_bonds"))
    pairs = [(as_id(m.get("ai_id")), as_id(m.get("gt_id"))) for m in people_matches]
    id_map = dict(pairs)

    def mapped(ident: Any) -> Any:
        return id_map.get(ident) if ident in ai_people else ident

    errors = []
    for ai_id, gt_id in pairs:
        if ai_id not in ai_people or gt_id not in gt_people:
            continue
        ai_parents = parent_person_ids(ai_people[ai_id], ai_bonds)
        gt_parents = parent_person_ids(gt_people[gt_id], gt_bonds)
        if isinstance(ai_parents, frozenset):
            ai_parents = frozenset(mapped(ident) for ident in ai_parents)
        if ai_parents != gt_parents:
            errors.append(ParentLinkError(ai_id, gt_id, _listed(ai_parents), _listed(gt_parents)))
    return errors


def _listed(parents: Any) -> list[Any] | None:
    if parents is None:
        return None
    if isinstance(parents, tuple):  # ("bond", id): a bond outside the payload
        return [f"pair bond {parents[1]}"]
    return sorted(parents, key=lambda ident: (ident is None, str(ident)))


@dataclass(frozen=True)
class PatternItems:
    """One statement's items for a pattern: the AI's and the ground truth's, and for SARF and
    parent patterns the pairs in question ({ai_id, gt_id, ai, gt})."""

    ai: list[Item]
    gt: list[Item]
    pairs: list[dict[str, Any]]
    count: int  # instances of the pattern in this statement


def pattern_items(
    pattern: Pattern,
    values: Mapping[str, Any],
    ai: Mapping[str, Any] | None,
    gt: Mapping[str, Any] | None,
) -> PatternItems:
    """The items of one statement the pattern is about, from its stored result (``values``:
    the ids of its matched, missed and spurious items) and the two payloads. Missed items are
    shown beside the AI's unmatched ones of the same type (what it gave instead), spurious
    ones beside the ground truth's unmatched ones."""
    ai, gt = dict(ai or {}), dict(gt or {})
    if pattern.kind == "parents":
        errors = parent_link_errors(ai, gt, values.get("people_matches") or [])
        ai_people = _by_id(entity_list(ai, "people"))
        gt_people = _by_id(entity_list(gt, "people"))
        pairs = [
            {"ai_id": e.ai_id, "gt_id": e.gt_id, "ai": e.ai_parents, "gt": e.gt_parents}
            for e in errors
        ]
        return PatternItems(
            [ai_people[e.ai_id] for e in errors],
            [gt_people[e.gt_id] for e in errors],
            pairs,
            len(errors),
        )
    entity = "events" if pattern.kind == "sarf" else pattern.entity
    ai_items, gt_items = _by_id(entity_list(ai, entity)), _by_id(entity_list(gt, entity))
    if pattern.kind == "sarf":
        return _sarf_items(pattern, values, ai_items, gt_items)
    missed = [
        gt_items[i] for i in map(as_id, values.get(f"{entity}_fn_ids") or []) if i in gt_items
    ]
    spurious = [
        ai_items[i] for i in map(as_id, values.get(f"{entity}_fp_ids") or []) if i in ai_items
    ]
    if pattern.kind == "event_kind":
        if pattern.missed:
            missed = [e for e in missed if _kind(e) == pattern.event_kind]
        else:
            spurious = [e for e in spurious if _kind(e) == pattern.event_kind]
    count = len(missed) if pattern.missed else len(spurious)
    return PatternItems(spurious, missed, [], count)


def _sarf_items(
    pattern: Pattern, values: Mapping[str, Any], ai_items: dict, gt_items: dict
) -> PatternItems:
    """The matched events whose codes of the variable are the pattern's: the stored SARF
    pairs are in the order of the stored event matches."""
    matches = values.get("events_matches") or []
    codes = (values.get("sarf_pairs") or {}).get(pattern.variable) or []
    pairs, ai_out, gt_out = [], [], []
    for match, (ai_code, gt_code) in zip(matches, codes, strict=False):
        if not pattern.cell(ai_code, gt_code):
            continue
        ai_id, gt_id = as_id(match.get("ai_id")), as_id(match.get("gt_id"))
        ai_event, gt_event = ai_items.get(ai_id), gt_items.get(gt_id)
        if ai_event is None or gt_event is None:
            continue
        # As stored, each side's value read the way the metric reads it.
        ai_value = sarf_value(ai_event, pattern.variable)
        gt_value = sarf_value(gt_event, pattern.variable)
        pairs.append({"ai_id": ai_id, "gt_id": gt_id, "ai": ai_value, "gt": gt_value})
        ai_out.append(ai_event)
        gt_out.append(gt_event)
    return PatternItems(ai_out, gt_out, pairs, len(pairs))
