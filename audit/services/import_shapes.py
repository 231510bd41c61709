"""The shapes of file an import takes, each read into the one shape the import checks and writes.

- evalsite's own export: ``{"schema_version", "exported_at", "guidelines", "discussions": [...]}``
  (discussions flat, or nested as ``{"discussion": {...}, "statements": [...]}``);
- the spec's single-discussion example: ``{"discussion": {...}, "statements": [...]}``;
- the origin's admin export: ``{"discussions": [{..., "speakers": [...], "statements":
  [{"speaker_id", "ground_truth", "approved", ...}]}]}``: a statement's speaker and its type
  come from the discussion's ``speakers`` by ``speaker_id``; ground truth with
  ``"approved": false`` is not ground truth (counted, not imported);
- the origin's case list: ``[{"statement_text", "ai_extraction", "gt_extraction", "comment"}]``,
  one discussion per file, or one per value of a ``discussion`` key when the cases have one;
  read a case at a time like the others' discussions (``case_discussions``).

Keys the import does not use are ignored and named in the summary (``ImportNotes``), as is
everything in a file that is not imported (an expert statement's extraction, ground truth that
was never approved). Only ``statements``, a statement's ``text`` and its speaker type (or a
speaker that gives one) are required: no key that only evalsite's export writes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from metrics.families.payload.rules import PayloadIssue

EVALSITE = "evalsite export"
SINGLE = "single discussion"
ORIGIN = "admin export with speakers"
CASES = "case list"

TOP_KEYS = {"schema_version", "exported_at", "guidelines", "discussions", "discussion"}
DISCUSSION_KEYS = {
    "id",
    "external_id",
    "summary",
    "date",
    "created_at",
    "statements",
    "discussion_extraction",
}
STATEMENT_KEYS = {
    "id",
    "order",
    "text",
    "speaker_type",
    "speaker",
    "pdp_deltas",
    "extraction_run",
    "ground_truth",
    "approved_feedback",
}
# Known, not imported: provisional ground truth is not human ground truth; a run's F1 figures
# are computed again from what is imported.
STATEMENT_READ = {"provisional_ground_truth", "f1"}
ORIGIN_DISCUSSION_KEYS = {"speakers"}
ORIGIN_STATEMENT_KEYS = {"speaker_id", "approved"}
CASE_KEYS = {"statement_text", "ai_extraction", "gt_extraction", "comment", "discussion"}
CASE_DISCUSSION_KEYS = ("discussion", "discussion_id")
INDEX = re.compile(r"\[\d+\]")
NUMBER = re.compile(r"-?\d+")
QUOTED = re.compile(r"'[^']*'")
STATEMENT_PREFIX = re.compile(r"^.*?statements\[\d+\]")
LOCATIONS_SHOWN = 3


class IssueGroups:
    """Problems as one line per distinct problem (the same message at the same place of a
    statement), with how often and the first few statements it is in: a file with one mistake
    in every statement gets one line, not thousands."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], list[Any]] = {}

    def add(self, issue: PayloadIssue) -> None:
        key = (INDEX.sub("[]", issue.path), QUOTED.sub("'…'", NUMBER.sub("N", issue.message)))
        group = self._groups.get(key)
        if group is None:
            self._groups[key] = [1, [issue.path], issue]
            return
        group[0] += 1
        if len(group[1]) < LOCATIONS_SHOWN:
            group[1].append(issue.path)

    def __bool__(self) -> bool:
        return bool(self._groups)

    def issues(self) -> list[PayloadIssue]:
        grouped = []
        for (pattern, _), (count, paths, first) in self._groups.items():
            if count == 1:
                grouped.append(first)
                continue
            where = ", ".join(_location(path) for path in paths)
            message = f"{first.message} — {count} times, first at {where}"
            grouped.append(PayloadIssue(pattern, message, kind=first.kind))
        return grouped

    def lines(self) -> list[str]:
        return [str(issue) for issue in self.issues()]


def _location(path: str) -> str:
    """Where a problem is, to the statement: what a person opens to fix it."""
    found = STATEMENT_PREFIX.match(path)
    return found.group(0) if found else path


@dataclass
class ImportNotes:
    """What the summary says about a file besides what it created: its shape, the keys it
    ignored, and what it holds that is not imported (each with a count)."""

    shape: str = ""
    ignored_keys: Counter[str] = field(default_factory=Counter)
    not_imported: Counter[str] = field(default_factory=Counter)
    # A case list's: how many cases, the first that is not an object, the list's digest.
    cases: int = 0
    bad_case: int | None = None
    case_digest: str = ""

    def ignore(self, path: str, keys: set[str]) -> None:
        pattern = INDEX.sub("[]", path)
        for key in sorted(keys):
            self.ignored_keys[f"{pattern}.{key}" if pattern else key] += 1

    def lines(self) -> list[str]:
        lines = [f"read as: {self.shape}"] if self.shape else []
        lines += [f"not imported: {what} ({n})" for what, n in self.not_imported.items()]
        if self.ignored_keys:
            keys = ", ".join(f"{key} ({n})" for key, n in sorted(self.ignored_keys.items()))
            lines.append(f"ignored keys: {keys}")
        return lines


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- the shapes ------------------------------------------------------------------------------


def shape_of(top: Any, members: dict[str, Any], has_list: bool) -> str:
    if isinstance(top, list):
        return CASES
    if not has_list and "discussion" in members:
        return SINGLE
    return EVALSITE  # told apart from ORIGIN per discussion (its "speakers")


def discussion_item(item: Any, path: str, notes: ImportNotes) -> Any:
    """A discussion of the discussions list in the flat evalsite shape (an origin discussion
    mapped: speakers to speaker types); anything that is not an object is left for the check
    to name."""
    if not isinstance(item, dict):
        return item
    if isinstance(item.get("discussion"), dict):  # nested: {"discussion": {...}, "statements"}
        fields = item["discussion"]
        notes.ignore(f"{path}.discussion", set(fields) - DISCUSSION_KEYS)
        notes.ignore(path, set(item) - {"discussion", "statements"})
        return {**fields, "statements": _statements(item.get("statements", []), path, {}, notes)}
    speakers = _speakers(item.get("speakers"))
    if speakers is not None:
        notes.shape = ORIGIN
    known = DISCUSSION_KEYS | (ORIGIN_DISCUSSION_KEYS if speakers is not None else set())
    notes.ignore(path, set(item) - known)
    fields = {key: value for key, value in item.items() if key in DISCUSSION_KEYS}
    fields["statements"] = _statements(item.get("statements", []), path, speakers or {}, notes)
    return fields


def _speakers(value: Any) -> dict[Any, dict] | None:
    """The origin's speakers by id: {id: {"name", "type"}}; None when the file has none."""
    if not isinstance(value, list):
        return None
    return {s.get("id"): s for s in value if isinstance(s, dict) and "id" in s}


def _statements(value: Any, path: str, speakers: dict[Any, dict], notes: ImportNotes) -> Any:
    if not isinstance(value, list):
        return value
    return [
        _statement(item, f"{path}.statements[{index}]", speakers, notes)
        for index, item in enumerate(value)
    ]


def _statement(item: Any, path: str, speakers: dict[Any, dict], notes: ImportNotes) -> Any:
    if not isinstance(item, dict):
        return item
    known = STATEMENT_KEYS | STATEMENT_READ | (ORIGIN_STATEMENT_KEYS if speakers else set())
    notes.ignore(path, set(item) - known)
    statement = {key: value for key, value in item.items() if key in STATEMENT_KEYS}
    if speakers and "speaker_id" in item:
        speaker = speakers.get(item["speaker_id"])
        if speaker is not None:
            statement.setdefault("speaker", _text(speaker.get("name")) or None)
            statement.setdefault("speaker_type", speaker.get("type"))
    if item.get("approved") is False and statement.get("ground_truth") is not None:
        statement.pop("ground_truth")
        notes.not_imported["ground truth marked not approved"] += 1
    return statement


def single_discussion(members: dict[str, Any], notes: ImportNotes) -> Any:
    """The spec's example: ``{"discussion": {...}, "statements": [...]}``."""
    notes.shape = SINGLE
    notes.ignore("", set(members) - TOP_KEYS - {"statements"})
    return discussion_item(
        {"discussion": members["discussion"], "statements": members.get("statements", [])},
        "",
        notes,
    )


# Consecutive cases of one discussion read and written together: a discussion's statements
# come in parts of at most this many, each part adding to the discussion the earlier made.
CASES_PER_PART = 200
# Marks a part that adds to a discussion an earlier part of the same file made.
CONTINUED = "_continued"


def case_discussions(
    cases: Iterable[Any], notes: ImportNotes, *, digest: str = ""
) -> Iterator[tuple[str, Any]]:
    """The case list as discussions, read a case at a time: one discussion for the file, or
    one per ``discussion`` value, each in parts of consecutive cases (CASES_PER_PART at most;
    a discussion whose cases are apart gets a part for each run of them). Its external id is
    the list's digest (and the group): ``digest``, what the check found (notes.case_digest, the
    digest of the list as ``json.dumps(cases, sort_keys=True)`` writes it), so importing the
    same list again finds the discussions."""
    notes.shape = CASES
    sha = hashlib.sha256(b"[")
    orders: dict[str, int] = {}  # the statements each discussion has so far
    part: list[tuple[int, dict]] = []
    for index, case in enumerate(cases):
        sha.update(b", " if index else b"")
        sha.update(json.dumps(case, sort_keys=True).encode())
        notes.cases += 1
        if not isinstance(case, dict):
            if notes.bad_case is None:
                notes.bad_case = index
            continue
        if part and (_case_group(case) != _case_group(part[0][1]) or len(part) >= CASES_PER_PART):
            yield _case_part(part, orders, notes, digest)
            part = []
        part.append((index, case))
    if part:
        yield _case_part(part, orders, notes, digest)
    sha.update(b"]")
    notes.case_digest = sha.hexdigest()[:12]


def _case_part(
    part: list[tuple[int, dict]], orders: dict[str, int], notes: ImportNotes, digest: str
) -> tuple[str, dict]:
    group = _case_group(part[0][1])
    start = orders.get(group, 0)
    orders[group] = start + len(part)
    statements = [
        {**_case_statement(case, f"[{index}]", notes), "order": start + n}
        for n, (index, case) in enumerate(part)
    ]
    external_id = f"cases-{digest or '0' * 12}" + (f"-{group}" if group else "")
    summary = f"Imported cases{f' ({group})' if group else ''}"
    fields: dict[str, Any] = {
        "external_id": external_id[:200],
        "summary": summary,
        "statements": statements,
    }
    if start:
        fields[CONTINUED] = True
    return f"[{part[0][0]}]", fields


def _case_group(case: Any) -> str:
    if not isinstance(case, dict):
        return ""
    for key in CASE_DISCUSSION_KEYS:
        value = case.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return str(value)[:100]
    return ""


def _case_statement(case: dict, path: str, notes: ImportNotes) -> dict:
    notes.ignore(path, set(case) - CASE_KEYS - set(CASE_DISCUSSION_KEYS))
    statement: dict[str, Any] = {"text": case.get("statement_text"), "speaker_type": "subject"}
    if case.get("ai_extraction") is not None:
        statement["pdp_deltas"] = case["ai_extraction"]
    if case.get("gt_extraction") is not None:
        comment = case.get("comment")
        statement["approved_feedback"] = {
            "auditor": "imported",
            "approved": True,
            "edited_extraction": case["gt_extraction"],
            **({"comment": comment} if isinstance(comment, str) and comment else {}),
        }
    return statement
