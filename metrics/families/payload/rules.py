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

The ground floor of the project: pure Python (no Django), imported by audit, the API and
the metric library alike.
"""

from __future__ import annotations

import copy
import difflib
import functools
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from dateutil import parser as date_parser

ENTITY_KINDS: tuple[str, ...] = ("people", "events", "pair_bonds")
EDITED_CONFIDENCE = 1.0
PAIR_BOND_EVENT_KINDS = ("bonded", "married", "separated", "divorced")
BIRTH_EVENT_KINDS = ("birth", "adopted")
DATE_FIELDS = ("dateTime", "endDateTime")
DATE_EXAMPLES = "e.g. 1985, March 2003, 2003-03-12"

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


# --- reading a payload -----------------------------------------------------------------------


def entity_items(payload: Mapping[str, Any] | None, kind: str) -> list[dict[str, Any]]:
    """The dict items of one entity list.

    None (a statement without ground truth yet) reads as an empty payload, and a missing or
    malformed list as an empty one: readers never have to guard. Anything but a mapping or
    None is a caller bug and raises TypeError.
    """
    if payload is None:
        return []
    try:
        value = payload.get(kind)
    except AttributeError:  # cheaper than an isinstance check: the F1 library runs this a lot
        raise TypeError(f"a PDP payload must be a dict, not {type(payload).__name__}") from None
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def payload_items(payload: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The people, events and pair bonds of a payload, in that order."""
    return [item for kind in ENTITY_KINDS for item in entity_items(payload, kind)]


def as_payload(payload: Any) -> dict[str, Any]:
    """Accept None as an empty payload; anything but a dict is a caller bug."""
    if payload is None:
        return {}
    if not isinstance(payload, dict):
        raise TypeError(f"a PDP payload must be a dict, not {type(payload).__name__}")
    return payload


def as_id(value: Any) -> int | str | None:
    """An id usable as a dict key; bools and containers are not ids."""
    cls = value.__class__
    if cls is int or cls is str:  # the usual cases first: this runs for every link
        return value
    if value is None or isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    return value


def id_list(value: Any) -> list[int | str]:
    """relationshipTargets / relationshipTriangles: the valid ids, in order."""
    if not isinstance(value, list):
        return []
    return [ident for ident in map(as_id, value) if ident is not None]


def item_id(item: dict[str, Any]) -> int | str | None:
    return as_id(item.get("id"))


# --- the family accumulated over a discussion ----------------------------------------------

Item = dict[str, Any]


def cumulative(deltas_list: Iterable[dict[str, Any] | None]) -> dict[str, list[Item]]:
    """Apply statement deltas in order: upsert by id (a later item replaces the
    earlier one whole), then the delta's `delete` ids. A pair bond is dropped when
    a partner is missing or is an uncommitted person (not a positive id) that no
    delta lists, and when it repeats an earlier bond's two people. A partner that is
    a committed person (positive id) stays: it is stored outside the deltas.
    Items without an id cannot be upserted and are simply kept."""
    state: dict[str, dict[Any, Item]] = {key: {} for key in ENTITY_KINDS}
    anonymous: dict[str, list[Item]] = {key: [] for key in ENTITY_KINDS}
    for delta in deltas_list:
        payload = as_payload(delta)
        for key in ENTITY_KINDS:
            _upsert(state[key], anonymous[key], payload.get(key))
        for ident in id_list(payload.get("delete")):
            for key in ENTITY_KINDS:
                state[key].pop(ident, None)
    people = list(state["people"].values()) + anonymous["people"]
    bonds, replaced = _valid_pair_bonds(
        list(state["pair_bonds"].values()) + anonymous["pair_bonds"], people
    )
    return {
        "people": _repoint_parents(people, replaced),
        "events": list(state["events"].values()) + anonymous["events"],
        "pair_bonds": bonds,
    }


def _upsert(table: dict[Any, Item], anonymous: list[Item], items: Any) -> None:
    """Upserts the dict items of one list (as entity_list reads it) into table by
    item_id; items without an id go to anonymous. This runs for every item of every
    delta, so entity_list's filter and as_id's usual cases are inline."""
    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        ident = item.get("id")
        if ident.__class__ is not int and ident.__class__ is not str:
            ident = as_id(ident)
            if ident is None:
                anonymous.append(item)
                continue
        table[ident] = item


def _valid_pair_bonds(bonds: list[Item], people: list[Item]) -> tuple[list[Item], dict]:
    """Bonds between present or committed people, first of each couple kept;
    returns the kept bonds and {dropped duplicate id: kept id}."""
    present = {item_id(person) for person in people} - {None}
    kept: dict[frozenset, Item] = {}
    replaced: dict[Any, Any] = {}
    for bond in bonds:
        partners = (as_id(bond.get("person_a")), as_id(bond.get("person_b")))
        if not all(partner in present or is_committed(partner) for partner in partners):
            continue
        couple = frozenset(partners)
        if couple in kept:
            replaced[item_id(bond)] = item_id(kept[couple])
        else:
            kept[couple] = bond
    return list(kept.values()), replaced


def is_committed(ident: Any) -> bool:
    """A committed person: a positive integer id. Negative ids are uncommitted
    people that exist only in some delta."""
    return ident.__class__ is int and ident > 0


def _repoint_parents(people: list[Item], replaced: dict[Any, Any]) -> list[Item]:
    """People whose `parents` named a dropped duplicate bond now name the kept one."""
    if not replaced:
        return people
    repointed = []
    for person in people:
        bond_id = as_id(person.get("parents"))
        if bond_id in replaced:
            person = {**person, "parents": replaced[bond_id]}
        repointed.append(person)
    return repointed


# --- content and the edited rule -----------------------------------------------------------


def normalize_value(value: Any) -> Any:
    """Text without surrounding or repeated spaces; "" and [] read as "not given" (None)."""
    if isinstance(value, str):
        value = " ".join(value.split())
        return value or None
    if isinstance(value, list):
        return [normalize_value(v) for v in value] or None
    return value


def item_content(item: dict) -> dict:
    """What an item asserts: every field but its confidence, normalised, unset fields left out."""
    normalized = {key: normalize_value(value) for key, value in item.items() if key != "confidence"}
    return {key: value for key, value in normalized.items() if value is not None}


def is_edited(source: dict | None, item: dict) -> bool:
    """An item is edited when it is new or its content differs from its source's."""
    return source is None or item_content(source) != item_content(item)


def mark_edited(before: dict, after: dict) -> dict:
    """Apply the edited rule to ``after``, a new version of the payload ``before``.

    - Untouched items are kept exactly as they were (``"May "`` stays ``"May "``); only a
      confidence the caller changed on purpose is taken over.
    - Edited and new items get confidence 1.0, unless the caller set a confidence of their
      own (the JSON editor and the API may).
    """
    sources = _by_kind_and_id(before)
    marked: dict[str, Any] = dict(after)
    for kind in ENTITY_KINDS:
        marked[kind] = [
            _marked_item(sources.get((kind, item_id(item))), item)
            if isinstance(item, dict)
            else item
            for item in after.get(kind) or []
        ]
    return marked


def _marked_item(source: dict | None, item: dict) -> dict:
    if is_edited(source, item):
        item = dict(item)
        if item.get("confidence") == (source or {}).get("confidence"):
            item["confidence"] = EDITED_CONFIDENCE
        return item
    assert source is not None  # is_edited: an item without a source is always edited
    kept = copy.deepcopy(source)
    if "confidence" in item and item["confidence"] != source.get("confidence"):
        kept["confidence"] = item["confidence"]
    return kept


def _by_kind_and_id(payload: dict) -> dict[tuple[str, Any], dict]:
    return {
        (kind, item_id(item)): item
        for kind in ENTITY_KINDS
        for item in payload.get(kind) or []
        if isinstance(item, dict)
    }


# --- semantic checks -------------------------------------------------------------------------


def payload_ids(payloads: Iterable[dict | None]) -> dict[str, set]:
    """Ids of the people, events and pair bonds in some payloads (earlier statements, say)."""
    ids: dict[str, set] = {kind: set() for kind in ENTITY_KINDS}
    for payload in payloads:
        for kind in ENTITY_KINDS:
            found = (item_id(item) for item in entity_items(payload, kind))
            ids[kind].update(ident for ident in found if ident is not None)
    return ids


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
        here = payload_ids([payload])
        self.ids = {kind: here[kind] | set(known.get(kind) or ()) for kind in ENTITY_KINDS}

    def exists(self, ident: Any, kinds: Iterable[str]) -> bool:
        if not isinstance(ident, (int, str)) or isinstance(ident, bool):
            return False  # not an id at all (the schema says so too)
        if isinstance(ident, int) and ident > 0:
            return True  # a committed item of the family diagram
        return any(ident in self.ids[kind] for kind in kinds)

    def missing(self, ident: Any, what: str) -> str:
        return (
            f"{ident!r} is not a {what} in this statement or an earlier one, "
            "nor a committed (positive) id"
        )

    def check(self, path: str, ident: Any, kind: str, what: str) -> list[PayloadIssue]:
        if ident is None or self.exists(ident, (kind,)):
            return []
        return [PayloadIssue(path, self.missing(ident, what))]


def _blank(value: Any) -> bool:
    return normalize_value(value) is None


def _person_problems(path: str, person: dict, refs: _References) -> list[PayloadIssue]:
    problems = []
    if _blank(person.get("name")) and _blank(person.get("last_name")):
        message = "a person without a name or a last name"
        problems.append(PayloadIssue(f"{path}.name", message, kind=WARNING))
    problems += refs.check(f"{path}.parents", person.get("parents"), "pair_bonds", "pair bond")
    for key in ("parent_a", "parent_b"):
        problems += refs.check(f"{path}.{key}", person.get(key), "people", "person")
    return problems


def _event_problems(path: str, event: dict, refs: _References) -> list[PayloadIssue]:
    kind_warnings = [replace(i, kind=WARNING) for i in _kind_problems(path, event)]
    problems = _date_problems(path, event) + kind_warnings
    for key in ("person", "spouse", "child"):
        problems += refs.check(f"{path}.{key}", event.get(key), "people", "person")
    for key in ("relationshipTargets", "relationshipTriangles"):
        targets = event.get(key)
        for index, ident in enumerate(targets if isinstance(targets, list) else []):
            problems += refs.check(f"{path}.{key}[{index}]", ident, "people", "person")
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
        problems += refs.check(f"{path}.{key}", bond.get(key), "people", "person")
    if bond.get("person_a") is not None and bond.get("person_a") == bond.get("person_b"):
        message = "a pair bond of one person with themself"
        problems.append(PayloadIssue(f"{path}.person_b", message, kind=WARNING))
    return problems


# --- dates -----------------------------------------------------------------------------------
# Dates are free text. Partial dates ("1985", "March 2003") are placed in the middle of the
# period they name and flagged partial, so the F1 library compares them with the approximate
# tolerance instead of borrowing today's month or day as a bare dateutil.parse would.

_ISO_DAY = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ t].*)?$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{1,2})$")
_YEAR = re.compile(r"^(\d{4})$")
_MONTH_YEAR = re.compile(r"^([a-z]+)\.? (\d{4})$")
_MONTH_DAY_YEAR = re.compile(r"^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$")
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)? ([a-z]+)\.?,? (\d{4})$")
# fmt: off
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
# fmt: on
_MONTHS = {
    name[:length]: number
    for number, name in enumerate(_MONTH_NAMES, start=1)
    for length in (3, len(name))
} | {"sept": 9}
# Two different defaults reveal which parts dateutil filled in by itself.
_DEFAULT_A = datetime(2000, 1, 1)
_DEFAULT_B = datetime(2001, 2, 2)
_MID_YEAR_MONTH, _MID_MONTH_DAY = 7, 15


@dataclass(frozen=True, slots=True)
class ParsedDate:
    ordinal: int  # date.toordinal(), so differences are day counts
    partial: bool  # month or day missing in the text
    precision: str = "day"  # what the text names: "year", "month" or "day"

    @property
    def reading(self) -> str:
        """What the metric compares, as a person reads it: "1957-12, month"."""
        day = date.fromordinal(self.ordinal)
        shown = {"year": f"{day.year}", "month": f"{day.year}-{day.month:02d}"}
        return f"{shown.get(self.precision, day.isoformat())}, {self.precision}"


def parse_date(value: Any) -> ParsedDate | None:
    """A free-text date, or None when missing, yearless or unparseable."""
    if not isinstance(value, str) or not value.strip():
        return None
    return _parse_text(" ".join(value.lower().split()))


def clear_parse_date_cache() -> None:
    """Forget cached parses (benchmarks time a cold start)."""
    _parse_text.cache_clear()


@lru_cache(maxsize=65536)
def _parse_text(text: str) -> ParsedDate | None:
    try:
        fast = _parse_fast(text)
    except ValueError:
        return None
    return fast if fast is not None else parse_with_dateutil(text)


def _parse_fast(text: str) -> ParsedDate | None:
    """The usual forms (ISO, "March 2003", "March 12, 2003"), every word read; None for any
    other text. dateutil is ~50x slower; the tests check they agree with it."""
    if match := _ISO_DAY.match(text):
        return _build(int(match[1]), int(match[2]), int(match[3]))
    if match := _ISO_MONTH.match(text):
        return _build(int(match[1]), int(match[2]), None)
    if match := _YEAR.match(text):
        return _build(int(match[1]), None, None)
    if (match := _MONTH_YEAR.match(text)) and match[1] in _MONTHS:
        return _build(int(match[2]), _MONTHS[match[1]], None)
    if (match := _MONTH_DAY_YEAR.match(text)) and match[1] in _MONTHS:
        return _build(int(match[3]), _MONTHS[match[1]], int(match[2]))
    if (match := _DAY_MONTH_YEAR.match(text)) and match[2] in _MONTHS:
        return _build(int(match[3]), _MONTHS[match[2]], int(match[1]))
    return None


def parse_with_dateutil(text: str) -> ParsedDate | None:
    """The slow, general path of parse_date (public so tests can compare the fast paths)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            first = date_parser.parse(text, default=_DEFAULT_A, fuzzy=True)
            second = date_parser.parse(text, default=_DEFAULT_B, fuzzy=True)
    except (ValueError, OverflowError, TypeError):
        return None
    if first.year != second.year:
        return None  # no year: cannot be placed in time at all
    month = first.month if first.month == second.month else None
    day = first.day if first.day == second.day and month is not None else None
    try:
        return _build(first.year, month, day)
    except ValueError:
        return None


def _build(year: int, month: int | None, day: int | None) -> ParsedDate:
    if month is None:
        return ParsedDate(date(year, _MID_YEAR_MONTH, 1).toordinal(), True, "year")
    if day is None:
        return ParsedDate(date(year, month, _MID_MONTH_DAY).toordinal(), True, "month")
    return ParsedDate(date(year, month, day).toordinal(), False, "day")


# --- is a date read as a person reads it? -----------------------------------------------------
# parse_date reads what it can (dateutil skips words it does not know), which is right for the
# AI's free text but not for ground truth: "ecember 1957" (a lost first key) reads as the year
# 1957. A date a coder enters must mean to the metric what it means to a person: every word is
# part of the date, or one of these, which say "about" (the certainty's job) and change no
# period. A season or "early", "late" narrow the period the metric cannot compare.
DATE_FILLER_WORDS = frozenset(
    {"about", "around", "circa", "c", "ca", "approx", "approximately", "roughly", "in", "on",
     "of", "the"}
)  # fmt: skip
_WORD = re.compile(r"[^\W\d_]+")
_SLASHED = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$")


def date_problem(value: Any) -> str:
    """Why a coded date does not mean to the metric what it means to a person ("" when it
    does, or when it is empty: an unknown date is left empty)."""
    if not isinstance(value, str) or _blank(value):
        return ""
    return _text_date_problem(value)


@functools.lru_cache(maxsize=4096)
def _text_date_problem(value: str) -> str:
    """date_problem of a text: a file's dates repeat (an import checks thousands), each is
    read once."""
    text = " ".join(value.lower().split())
    parsed = parse_date(text)
    if parsed is None:
        return f"{value!r} is not a date with a year ({DATE_EXAMPLES}); leave it empty if the date is unknown"
    if (
        (slashed := _SLASHED.match(text))
        and slashed[1] != slashed[2]
        and int(slashed[1]) <= 12
        and int(slashed[2]) <= 12
    ):
        return (
            f"{value!r} could be read day first or month first; write it as year-month-day "
            f"(e.g. {slashed[3]}-{int(slashed[1]):02d}-{int(slashed[2]):02d})"
        )
    if any(char.isdigit() and not char.isascii() for char in text):
        return f"{value!r}: write the date with the digits 0-9"
    # The fast paths of parse_date read every word; dateutil may skip some.
    fast = _parse_fast(text) is not None
    unread = [] if fast else [
        word
        for word in _WORD.findall(value)
        if word.lower() not in DATE_FILLER_WORDS and not _names_month(word.lower(), parsed)
    ]  # fmt: skip
    if unread:
        return _unread_words_problem(value, unread, parsed)
    if not _year_written(text, parsed):
        return f"{value!r} needs the year written in full (four digits, e.g. 1957)"
    return ""


def _names_month(word: str, parsed: ParsedDate) -> bool:
    """A month name (or its abbreviation, or a day's ordinal suffix) the parse used."""
    return (word in _MONTHS and parsed.precision != "year") or word in ("st", "nd", "rd", "th")


def _year_written(text: str, parsed: ParsedDate) -> bool:
    year = str(date.fromordinal(parsed.ordinal).year)
    return bool(re.search(rf"(?<!\d){year}(?!\d)", text))


def _unread_words_problem(value: str, unread: list[str], parsed: ParsedDate) -> str:
    words = ", ".join(repr(word) for word in unread)
    guess = difflib.get_close_matches(unread[0].lower(), _MONTH_NAMES, n=1, cutoff=0.7)
    hint = f" Did you mean {guess[0].title()}?" if guess else ""
    return (
        f"{value!r} would count as the {parsed.precision} {parsed.reading.split(',')[0]} for "
        f"the metric, which does not read {words}: "
        f"write only a date (e.g. 1957, December 1957, 1957-12-03) and say how sure it is with "
        f"the certainty.{hint}"
    )


def date_reading(value: Any) -> str:
    """What the metric will compare for a coded date ("1957-12, month"), or "" when it reads
    none (empty, or a date_problem)."""
    if date_problem(value) or not isinstance(value, str) or _blank(value):
        return ""
    parsed = parse_date(value)
    return parsed.reading if parsed is not None else ""
