"""Rules about a PDP-deltas payload's meaning, on top of its JSON Schema (metrics.families.payload.schema).

Pure Python over plain dicts, so the form editor, the JSON editor, the API and the
ground-truth import apply the same rules:

- ``pdp_problems``: what stops a payload from being ground truth (dates the F1 library cannot
  read, nameless people, a pair bond of one person, dangling references, an event kind whose
  links do not fit). Drafts may keep problems; submit and approve refuse them.
- ``mark_edited``: the one rule for "edited -> confidence 1.0". An item is edited only when
  its content differs from its source after the same normalisation on both sides.
- ``ENTITY_KINDS`` and ``entity_items``/``payload_items``: the one way to read a payload's
  people, events and pair bonds (a missing payload, list or item reads as empty).
- ``parse_date``: free-text dates, as the F1 library reads them; ``date_problem`` refuses a
  coded date the library would read as another date or period than a person does, and
  ``date_reading`` says what it compares ("1957-12, month").
- ``cumulative``: the family accumulated over a discussion's statement deltas (the editor's
  pickers, the "family so far" panel and the cumulative F1 all read it).

The problems are found here; the rest lives beside it, by topic: ``items`` (reading a payload,
``cumulative``), ``edits`` (``mark_edited``) and ``dates``. This module still answers for
their names.

The ground floor of the project: pure Python (no Django), imported by audit, the API and
the metric library alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, replace
from typing import Any

from metrics.families.payload.dates import (
    DATE_EXAMPLES,
    DATE_FIELDS,
    ParsedDate,
    clear_parse_date_cache,
    date_problem,
    date_reading,
    parse_date,
    parse_with_dateutil,
)
from metrics.families.payload.edits import (
    EDITED_CONFIDENCE,
    is_blank,
    is_edited,
    mark_edited,
    normalize_value,
)
from metrics.families.payload.items import (
    ENTITY_KINDS,
    as_id,
    as_payload,
    cumulative,
    entity_items,
    id_list,
    is_committed,
    item_id,
    payload_ids,
    payload_items,
)

PAIR_BOND_EVENT_KINDS = ("bonded", "married", "separated", "divorced")
BIRTH_EVENT_KINDS = ("birth", "adopted")

KnownIds = Mapping[str, Iterable[Any]]


@dataclass(frozen=True)
class PayloadIssue:
    """One problem of a payload: where (a path such as ``events[0].person``) and what."""

    path: str
    message: str
    kind: str = "malformed"  # one of ISSUE_KINDS: what is wrong, from gravest to mildest

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


# What a problem is, gravest first: the payload breaks its schema; it names an object that
# does not exist; it names one whose state refuses it; or it is well formed but breaks a rule
# between values that no schema states (a reference to a missing person, repeated ids).
MALFORMED, UNKNOWN, CONFLICT, RULE = "malformed", "unknown", "conflict", "rule"
ISSUE_KINDS = (MALFORMED, UNKNOWN, CONFLICT, RULE)
# A rule the spec does not state (docs/review.md, "Errors and warnings"): shown beside the
# field and in an import's summary, never a reason to refuse a coding or a file.
WARNING = "warning"


def pdp_problems(payload: dict, *, known: KnownIds | None = None) -> list[PayloadIssue]:
    """Every reason a schema-valid payload cannot be ground truth; empty when it can.

    ``known`` holds the ids of items coded in earlier statements of the same discussion,
    which a delta may refer to; positive ids are committed items and always resolve.
    """
    return [issue for issue in _findings(payload, known) if issue.kind != WARNING]


def pdp_warnings(payload: dict, *, known: KnownIds | None = None) -> list[PayloadIssue]:
    """What breaks a rule the spec does not state (an event kind without the link it usually
    has, a nameless person, a pair bond of one person, deleting an id nothing named): shown,
    never refused."""
    return [issue for issue in _findings(payload, known) if issue.kind == WARNING]


def pdp_findings(payload: dict, *, known: KnownIds | None = None) -> list[PayloadIssue]:
    """The problems and the warnings at once (a warning's kind is WARNING): one pass."""
    return _findings(payload, known)


def _findings(payload: dict, known: KnownIds | None) -> list[PayloadIssue]:
    refs = _References(payload, known or {})
    problems: list[PayloadIssue] = []
    for index, person in _entries(payload, "people"):
        problems += _person_problems(f"people[{index}]", person, refs)
    for index, event in _entries(payload, "events"):
        problems += _event_problems(f"events[{index}]", event, refs)
    for index, bond in _entries(payload, "pair_bonds"):
        problems += _bond_problems(f"pair_bonds[{index}]", bond, refs)
    for index, ident in enumerate(payload.get("delete") or []):
        if not refs.exists(ident, ENTITY_KINDS):
            message = refs.missing(ident, "item") + " (deleting it changes nothing)"
            problems.append(PayloadIssue(f"delete[{index}]", message, kind=WARNING))
    return problems


def _entries(payload: dict, kind: str) -> list[tuple[int, dict]]:
    """(index in the raw list, item) of the dict items, so paths name the right entry."""
    items = payload.get(kind)
    items = items if isinstance(items, list) else []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, dict)]


class _References:
    """Which ids a reference may name: this payload's, earlier statements', committed ones."""

    def __init__(self, payload: dict, known: KnownIds):
        # Looked up in both, not merged: an import's earlier ids grow along a discussion.
        self.here = payload_ids([payload])
        self.known = {kind: _as_set(known.get(kind)) for kind in ENTITY_KINDS}

    def exists(self, ident: Any, kinds: Iterable[str]) -> bool:
        if not isinstance(ident, (int, str)) or isinstance(ident, bool):
            return False  # not an id at all (the schema says so too)
        if isinstance(ident, int) and ident > 0:
            return True  # a committed item of the family diagram
        return any(ident in self.here[kind] or ident in self.known[kind] for kind in kinds)

    def resolves(self, ident: Any, kind: str) -> bool:
        """A reference to a ``kind`` item that is absent or names one (the usual cases
        first: a link is checked for every field of every item)."""
        if ident is None:
            return True
        if ident.__class__ is int:
            return ident > 0 or ident in self.here[kind] or ident in self.known[kind]
        return self.exists(ident, (kind,))

    def missing(self, ident: Any, what: str) -> str:
        return (
            f"{ident!r} is not a {what} in this statement or an earlier one, "
            "nor a committed (positive) id"
        )

    def missing_issue(self, path: str, ident: Any, what: str) -> PayloadIssue:
        return PayloadIssue(path, self.missing(ident, what))


def _as_set(ids: Iterable[Any] | None) -> Set[Any]:
    return ids if isinstance(ids, (set, frozenset)) else set(ids or ())


def _person_problems(path: str, person: dict, refs: _References) -> list[PayloadIssue]:
    problems = []
    if is_blank(person.get("name")) and is_blank(person.get("last_name")):
        message = "a person without a name or a last name"
        problems.append(PayloadIssue(f"{path}.name", message, kind=WARNING))
    if not refs.resolves(person.get("parents"), "pair_bonds"):
        problems.append(refs.missing_issue(f"{path}.parents", person.get("parents"), "pair bond"))
    for key in ("parent_a", "parent_b"):
        if not refs.resolves(person.get(key), "people"):
            problems.append(refs.missing_issue(f"{path}.{key}", person.get(key), "person"))
    return problems


def _event_problems(path: str, event: dict, refs: _References) -> list[PayloadIssue]:
    kind_warnings = [replace(i, kind=WARNING) for i in _kind_problems(path, event)]
    problems = _date_problems(path, event) + kind_warnings
    for key in ("person", "spouse", "child"):
        if not refs.resolves(event.get(key), "people"):
            problems.append(refs.missing_issue(f"{path}.{key}", event.get(key), "person"))
    for key in ("relationshipTargets", "relationshipTriangles"):
        targets = event.get(key)
        if not targets or not isinstance(targets, list):
            continue
        for index, ident in enumerate(targets):
            if not refs.resolves(ident, "people"):
                problems.append(refs.missing_issue(f"{path}.{key}[{index}]", ident, "person"))
    return problems


def _date_problems(path: str, event: dict) -> list[PayloadIssue]:
    problems = []
    for key in DATE_FIELDS:
        problem = date_problem(event.get(key))
        if problem:
            problems.append(PayloadIssue(f"{path}.{key}", problem))
    return problems


def _kind_problems(path: str, event: dict) -> list[PayloadIssue]:
    """The links an event's kind needs: see docs/review.md, "Validation"."""
    kind, person, spouse = event.get("kind"), event.get("person"), event.get("spouse")
    if kind in PAIR_BOND_EVENT_KINDS:
        if person is None:
            return [PayloadIssue(f"{path}.person", f"a {kind} event needs a person")]
        if spouse is None:
            return [PayloadIssue(f"{path}.spouse", f"a {kind} event needs a spouse")]
        if spouse == person:
            return [PayloadIssue(f"{path}.spouse", "the spouse must be another person")]
        return []
    if kind in BIRTH_EVENT_KINDS:
        if person is None and event.get("child") is None:
            return [PayloadIssue(f"{path}.child", f"a {kind} event needs a child or a person")]
        return []
    if kind is not None and person is None:
        return [PayloadIssue(f"{path}.person", f"a {kind} event needs a person")]
    return []


def _bond_problems(path: str, bond: dict, refs: _References) -> list[PayloadIssue]:
    problems = []
    for key in ("person_a", "person_b"):
        if not refs.resolves(bond.get(key), "people"):
            problems.append(refs.missing_issue(f"{path}.{key}", bond.get(key), "person"))
    if bond.get("person_a") is not None and bond.get("person_a") == bond.get("person_b"):
        message = "a pair bond of one person with themself"
        problems.append(PayloadIssue(f"{path}.person_b", message, kind=WARNING))
    return problems


__all__ = [
    "BIRTH_EVENT_KINDS",
    "CONFLICT",
    "DATE_EXAMPLES",
    "DATE_FIELDS",
    "EDITED_CONFIDENCE",
    "ENTITY_KINDS",
    "ISSUE_KINDS",
    "MALFORMED",
    "PAIR_BOND_EVENT_KINDS",
    "RULE",
    "UNKNOWN",
    "WARNING",
    "KnownIds",
    "ParsedDate",
    "PayloadIssue",
    "as_id",
    "as_payload",
    "clear_parse_date_cache",
    "cumulative",
    "date_problem",
    "date_reading",
    "entity_items",
    "id_list",
    "is_committed",
    "is_edited",
    "item_id",
    "mark_edited",
    "normalize_value",
    "parse_date",
    "parse_with_dateutil",
    "payload_ids",
    "payload_items",
    "pdp_findings",
    "pdp_problems",
    "pdp_warnings",
]
