"""What changed between two payloads, item by item: per kind, in a line of the revision
history, and what a submit sends.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from audit.display.labels import KIND_TITLES
from metrics.families.payload.edits import is_edited, normalize_value
from metrics.families.payload.items import ENTITY_KINDS, entity_items


@dataclass
class KindDiff:
    states: dict[Any, tuple[str, list[str]]]  # id -> (state, changed fields)
    removed: list[dict]


def diff_kind(base_items: Iterable[dict], items: Iterable[dict]) -> KindDiff:
    """Match items by id: the auditor's copy keeps the AI's ids, so ids line up."""
    base_by_id = {item.get("id"): item for item in base_items}
    states: dict[Any, tuple[str, list[str]]] = {}
    seen = set()
    for item in items:
        ident = item.get("id")
        seen.add(ident)
        before = base_by_id.get(ident)
        if before is None:
            states[ident] = ("added", [])
        elif is_edited(before, item):
            states[ident] = ("changed", changed_fields(before, item))
    removed = [item for ident, item in base_by_id.items() if ident not in seen]
    return KindDiff(states, removed)


def changed_fields(before: dict, after: dict) -> list[str]:
    keys = (set(before) | set(after)) - {"confidence", "id"}
    return sorted(
        key for key in keys if normalize_value(before.get(key)) != normalize_value(after.get(key))
    )


def diff_summary(before: dict | None, after: dict | None) -> str:
    """One line such as "+1 people, ~2 events, −1 pair_bonds" for the revision history."""
    parts = []
    for kind in ENTITY_KINDS:
        diff = diff_kind(entity_items(before, kind), entity_items(after, kind))
        added = sum(1 for state, _ in diff.states.values() if state == "added")
        changed = sum(1 for state, _ in diff.states.values() if state == "changed")
        parts += [f"+{_count(added, kind)}"] if added else []
        parts += [f"~{_count(changed, kind)}"] if changed else []
        parts += [f"−{_count(len(diff.removed), kind)}"] if diff.removed else []
    before_deletes, after_deletes = (
        set((before or {}).get("delete") or []),
        set((after or {}).get("delete") or []),
    )
    if before_deletes != after_deletes:
        parts.append("deletes changed")
    return ", ".join(parts) or "no content change"


def deletes_of(payload: dict | None) -> set:
    value = (payload or {}).get("delete")
    return {i for i in value if isinstance(i, (int, str))} if isinstance(value, list) else set()


@dataclass(frozen=True)
class SubmitSummary:
    """What a submit sends, said plainly: the changes from the AI's extraction it started from
    (or from nothing, for a coding started empty) and the problems that will refuse it."""

    feedback_id: int
    changes: int
    text: str  # "1 event added, 2 people changed"
    from_ai: bool
    problems: int


def submit_summary(
    *, feedback_id: int, ai: dict | None, coded: dict, problems: int
) -> SubmitSummary:
    parts, total = [], 0
    for kind in ENTITY_KINDS:
        diff = diff_kind(entity_items(ai, kind), entity_items(coded, kind))
        added = sum(1 for state, _ in diff.states.values() if state == "added")
        changed = sum(1 for state, _ in diff.states.values() if state == "changed")
        for n, verb in ((added, "added"), (changed, "changed"), (len(diff.removed), "removed")):
            if n:
                parts.append(f"{_count(n, kind)} {verb}")
                total += n
    deletes = deletes_of(ai) ^ deletes_of(coded)
    if deletes:
        parts.append(
            f"{len(deletes)} earlier item{'s' if len(deletes) != 1 else ''} to delete changed"
        )
        total += len(deletes)
    return SubmitSummary(feedback_id, total, ", ".join(parts), ai is not None, problems)


def _count(n: int, kind: str) -> str:
    singular = {"people": "person", "events": "event", "pair_bonds": "pair bond"}[kind]
    return f"{n} {singular if n == 1 else KIND_TITLES[kind].lower()}"
