"""Adjudication: two or more codings of one statement aligned item by item, merged where
every coder agrees.

The codings are aligned with the F1 matcher and its settings (people first, then events and
pair bonds through the people map): the first coding is the pivot, each further coding is
matched against everything aligned so far, and an item nobody before it had opens a new row.
Every version is rewritten into one id space (the merged payload's), so that two coders'
events about the same person compare equal although their person ids differ.

An aligned item is unanimous when every coder has it with the same content after
normalisation (text lowercased, whitespace collapsed, confidence ignored, lists as sets);
the merge takes those as they are and leaves the others to the reviewer, who picks one coder's
version (a coder who left the item out votes for leaving it out) or edits it.

Pure Python: plain dicts in, dataclasses out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .dates import normalize_certainty
from .payload import as_id, as_payload, entity_list, id_list
from .settings import MatchSettings, resolve_settings
from .statement import _match_sides, _Side
from .text import normalize_text

Item = dict[str, Any]
KINDS = ("people", "events", "pair_bonds")
DELETE_KEY = "delete"
# Fields holding one person reference, and lists of them, per kind.
_PERSON_REFS = {
    "people": ("parent_a", "parent_b"),
    "events": ("person", "spouse", "child"),
    "pair_bonds": ("person_a", "person_b"),
}
_PERSON_LISTS = ("relationshipTargets", "relationshipTriangles")


@dataclass
class AlignedItem:
    """One row of the alignment: every coder's version of one item (None: left out)."""

    key: str  # stable while the codings stay: "<kind>:<coder>:<id of that coder's item>"
    kind: str  # people, events, pair_bonds or delete
    merged_id: Any
    versions: list[Any]
    unanimous: bool = False

    @property
    def agreed(self) -> Any:
        """The merged version of a unanimous item (the first coder's wording)."""
        return self.versions[0] if self.unanimous else None

    def holders(self) -> list[int]:
        """Indices of the coders who have the item."""
        return [index for index, version in enumerate(self.versions) if version is not None]


class BadChoice(ValueError):
    """A choice that names no disputed item, no coder, or is not an item."""


@dataclass
class Alignment:
    coders: int
    items: list[AlignedItem] = field(default_factory=list)

    @property
    def unanimous_count(self) -> int:
        return sum(1 for item in self.items if item.unanimous)

    @property
    def disputed(self) -> list[AlignedItem]:
        return [item for item in self.items if not item.unanimous]

    @property
    def disputed_count(self) -> int:
        return len(self.disputed)

    def item(self, key: str) -> AlignedItem:
        for item in self.items:
            if item.key == key:
                return item
        raise BadChoice(f"No aligned item {key!r} on this statement.")

    def check_choice(self, key: str, choice: Any) -> Any:
        """A valid choice for a disputed item: {"coder": n} (0-based) or {"edit": item}.
        Returns it normalised; raises BadChoice naming what is wrong."""
        item = self.item(key)
        if item.unanimous:
            raise BadChoice(f"Item {key!r} is unanimous: there is nothing to choose.")
        if not isinstance(choice, Mapping) or len(choice) != 1:
            raise BadChoice('A choice is {"coder": n} or {"edit": item}.')
        if "coder" in choice:
            coder = choice["coder"]
            if coder.__class__ is not int or not 0 <= coder < self.coders:
                raise BadChoice(f"coder must be 0..{self.coders - 1}, not {coder!r}.")
            return {"coder": coder}
        if "edit" in choice:
            return {"edit": _checked_edit(item, choice["edit"])}
        raise BadChoice('A choice is {"coder": n} or {"edit": item}.')

    def unresolved(self, choices: Mapping[str, Any]) -> list[str]:
        """Keys of the disputed items without a choice yet."""
        return [item.key for item in self.disputed if item.key not in choices]

    def merge(self, choices: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The merged payload: unanimous items, and the chosen version of each disputed one.
        A disputed item without a choice is left out (unresolved() lists them)."""
        choices = choices or {}
        merged: dict[str, Any] = {kind: [] for kind in KINDS}
        merged[DELETE_KEY] = []
        for item in self.items:
            if item.unanimous:
                version = item.agreed
            elif item.key in choices:
                version = chosen_version(item, choices[item.key])
            else:
                continue
            if version is None:
                continue
            if item.kind == DELETE_KEY:
                merged[DELETE_KEY] = copy.deepcopy(version)
            else:
                merged[item.kind].append(copy.deepcopy(version))
        return merged


def chosen_version(item: AlignedItem, choice: Mapping[str, Any]) -> Any:
    if "edit" in choice:
        return choice["edit"]
    coder = choice.get("coder")
    if isinstance(coder, int) and 0 <= coder < len(item.versions):
        return item.versions[coder]
    return None  # a stale choice (the codings changed) reads as no choice


def _checked_edit(item: AlignedItem, edit: Any) -> Any:
    if item.kind == DELETE_KEY:
        if not isinstance(edit, list) or any(as_id(v) is None for v in edit):
            raise BadChoice("An edited delete list is a list of ids.")
        return list(edit)
    if not isinstance(edit, Mapping):
        raise BadChoice(f"An edited {item.kind} item is a JSON object.")
    # The item keeps its row's id: the other items refer to it by that id.
    return {**edit, "id": item.merged_id}


def align_codings(
    payloads: Sequence[Mapping[str, Any] | None], *, settings: MatchSettings | None = None
) -> Alignment:
    """Align the codings item by item (see the module's docstring)."""
    settings = resolve_settings(settings)
    alignment = Alignment(coders=len(payloads))
    rows: dict[str, list[AlignedItem]] = {kind: [] for kind in KINDS}
    ids = _IdSpace(payloads)
    for coder, raw in enumerate(payloads):
        payload = as_payload(raw)
        lists = {kind: entity_list(payload, kind) for kind in KINDS}
        pivot = {kind: [row.versions[_first(row)] for row in rows[kind]] for kind in KINDS}
        matchings = _match_sides(_Side(lists), _Side(pivot), settings) if coder else None
        # coder's item index -> row, per kind; new rows for what no row matched.
        placed: dict[str, dict[int, AlignedItem]] = {}
        for kind in KINDS:
            placed[kind] = {}
            if matchings is not None:
                for i, j in matchings[kind].pairs:
                    placed[kind][i] = rows[kind][j]
            for i, item in enumerate(lists[kind]):
                if i not in placed[kind]:
                    row = AlignedItem(
                        key=f"{kind}:{coder}:{as_id(item.get('id'))}",
                        kind=kind,
                        merged_id=ids.claim(as_id(item.get("id"))),
                        versions=[None] * len(payloads),
                    )
                    rows[kind].append(row)
                    placed[kind][i] = row
        rename = _Renaming(lists, placed)
        for kind in KINDS:
            for i, item in enumerate(lists[kind]):
                placed[kind][i].versions[coder] = rename.item(kind, item)
    for kind in KINDS:
        alignment.items.extend(rows[kind])
    deletes = [sorted(id_list(as_payload(p).get(DELETE_KEY)), key=repr) for p in payloads]
    if any(deletes):
        alignment.items.append(AlignedItem(DELETE_KEY, DELETE_KEY, None, list(deletes)))
    for row in alignment.items:
        row.unanimous = _unanimous(row)
    return alignment


def _first(row: AlignedItem) -> int:
    return row.holders()[0]


class _IdSpace:
    """Ids of the merged payload: an item keeps its own id unless an earlier row took it;
    then it gets a fresh negative (uncommitted) id below every id the codings use."""

    def __init__(self, payloads: Sequence[Mapping[str, Any] | None]):
        self.used: set[Any] = set()
        numbers: list[int] = [
            ident
            for payload in payloads
            for kind in KINDS
            for ident in (as_id(item.get("id")) for item in entity_list(as_payload(payload), kind))
            if isinstance(ident, int)
        ]
        self.next_fresh = min([0, *numbers]) - 1

    def claim(self, ident: Any) -> Any:
        if ident is None or ident in self.used:
            ident = self.next_fresh
            self.next_fresh -= 1
        self.used.add(ident)
        return ident


class _Renaming:
    """One coder's ids -> the merged ids of the rows their items sit in. An id the coding
    does not define (an item of an earlier statement) stays as it is."""

    def __init__(self, lists: dict[str, list[Item]], placed: dict[str, dict[int, AlignedItem]]):
        self.maps: dict[str, dict[Any, Any]] = {}
        for kind in KINDS:
            mapping: dict[Any, Any] = {}
            for i, item in enumerate(lists[kind]):
                ident = as_id(item.get("id"))
                if ident is not None:
                    mapping.setdefault(ident, placed[kind][i].merged_id)
            self.maps[kind] = mapping

    def ref(self, kind: str, value: Any) -> Any:
        ident = as_id(value)
        if ident is None:
            return value
        return self.maps[kind].get(ident, ident)

    def item(self, kind: str, item: Item) -> Item:
        renamed = copy.deepcopy(item)
        renamed["id"] = self.ref(kind, item.get("id"))
        for name in _PERSON_REFS[kind]:
            if name in renamed:
                renamed[name] = self.ref("people", renamed[name])
        if kind == "people" and renamed.get("parents") is not None:
            parents = renamed["parents"]
            if isinstance(parents, list):
                renamed["parents"] = [self.ref("people", p) for p in parents]
            else:
                renamed["parents"] = self.ref("pair_bonds", parents)
        if kind == "events":
            for name in _PERSON_LISTS:
                if isinstance(renamed.get(name), list):
                    renamed[name] = [self.ref("people", p) for p in renamed[name]]
        return renamed


def normal_content(value: Any) -> Any:
    """What an item asserts, for the agreement test: confidence dropped, text lowercased with
    whitespace collapsed, lists compared as sets, unset fields ("", [], None) left out."""
    if isinstance(value, Mapping):
        normal = {}
        for key, field_value in value.items():
            if key == "confidence":
                continue
            if key == "dateCertainty":
                normal[key] = normalize_certainty(field_value)
                continue
            field_normal = normal_content(field_value)
            if field_normal not in (None, "", ()):
                normal[key] = field_normal
        return tuple(sorted(normal.items()))
    if isinstance(value, list):
        return tuple(sorted({repr(normal_content(v)) for v in value}))
    if isinstance(value, str):
        return normalize_text(value)
    return value


def _unanimous(row: AlignedItem) -> bool:
    if any(version is None for version in row.versions):
        return False
    first = _agreement_form(row.kind, row.versions[0])
    return all(_agreement_form(row.kind, version) == first for version in row.versions[1:])


def _agreement_form(kind: str, version: Any) -> Any:
    """normal_content, with the two partners of a bond unordered (as the matcher reads them)."""
    if kind == "pair_bonds":
        version = _unordered(version, "person_a", "person_b")
    return normal_content(version)


def _unordered(item: Item, first: str, second: str) -> Item:
    pair = sorted((item.get(first), item.get(second)), key=repr)
    return {**item, first: pair[0], second: pair[1]}
