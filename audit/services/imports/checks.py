"""Every discussion of a file checked as it is read, before it is written (nothing is written
once a problem is found, and the import rolls back); one line per distinct problem (an error)
or per distinct warning."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.utils.dateparse import parse_date, parse_datetime

from audit.models import Speaker
from audit.services.import_shapes import ImportNotes, IssueGroups
from audit.services.imports.limits import (
    MAX_EXTERNAL_ID,
    MAX_IMPORT_ID,
    MAX_ORDER,
    MAX_SPEAKER,
    MAX_USERNAME,
)
from audit.services.imports.reading import (
    Reading,
    canonical,
    gt_entry,
    join,
    prefixed,
    split_discussion,
    top_level_problem,
)
from audit.services.runs import discussion_extraction_issues, run_info_issues
from metrics.families.json_input import JsonListReader
from metrics.families.payload.rules import RULE, WARNING, payload_ids, pdp_findings
from metrics.families.payload.schema import PayloadError, PayloadIssue, excerpt, pdp_issues


def _statement_issues(statement: Any, path: str, checked: _Checked) -> list[PayloadIssue]:
    if not isinstance(statement, dict):
        return [PayloadIssue(path, "expected a statement object")]
    issues = []
    if not isinstance(statement.get("text"), str):
        issues.append(PayloadIssue(join(path, "text"), "missing or not a string"))
    speaker_type = str(statement.get("speaker_type", "")).lower()
    if speaker_type not in SPEAKER_TYPES:
        issues.append(
            PayloadIssue(
                join(path, "speaker_type"),
                f"{excerpt(statement.get('speaker_type'))} is not one of: Subject, Expert "
                "(or a speaker_id naming one of the discussion's speakers)",
            )
        )
    if "order" in statement and not _is_order(statement["order"]):
        issues.append(
            PayloadIssue(join(path, "order"), f"expected an integer from 0 to {MAX_ORDER}")
        )
    issues += _text_issues(statement, path, {"speaker": MAX_SPEAKER})
    issues += run_info_issues(statement.get("extraction_run"), join(path, "extraction_run"))
    approved = statement.get("approved_feedback")
    if isinstance(approved, dict):
        issues += _username_issues(approved, join(path, "approved_feedback"))
        names = dict.fromkeys(("auditor", "auditor_id", "approved_by"), MAX_USERNAME)
        issues += _text_issues(approved, join(path, "approved_feedback"), names)
        issues += _date_issues(
            approved.get("approved_at"),
            join(path, "approved_feedback.approved_at"),
            parse_datetime,
            "an ISO 8601 date-time",
        )
    for key, payload in (("pdp_deltas", statement.get("pdp_deltas")), gt_entry(statement)):
        if payload is not None:
            issues += prefixed(checked(payload), join(path, key))
    return issues


USERNAME = UnicodeUsernameValidator()
SPEAKER_TYPES = frozenset(Speaker.Type.values)  # the enum builds its list at each call


def _username_issues(approved: dict, path: str) -> list[PayloadIssue]:
    """Names the import may create as users must be Django usernames, exactly as given.

    ``auditor`` names the coder (required); ``auditor_id`` and ``approved_by`` are informational
    and may be empty (imported ground truth is approved by the importing admin).
    """
    issues = []
    for key, may_be_empty in (("auditor", False), ("auditor_id", True), ("approved_by", True)):
        name = approved.get(key)
        if name is None or (may_be_empty and name == ""):
            continue
        if not isinstance(name, str) or not 0 < len(name) <= MAX_USERNAME:
            issues.append(PayloadIssue(join(path, key), "expected a username of 1-150 characters"))
            continue
        try:
            USERNAME(name)
        except ValidationError:
            issues.append(
                PayloadIssue(
                    join(path, key),
                    f"{name!r} is not a valid username (letters, digits and @/./+/-/_ only)",
                )
            )
    return issues


def _is_order(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_ORDER


def _text_issues(data: dict, path: str, limits: dict[str, int]) -> list[PayloadIssue]:
    """Optional text fields: a string (or null) no longer than the column allows."""
    issues = []
    for key, limit in limits.items():
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            issues.append(PayloadIssue(join(path, key), "expected a string or null"))
        elif len(value) > limit:
            issues.append(PayloadIssue(join(path, key), f"longer than {limit} characters"))
    return issues


def _discussion_issues(
    fields_path: str, fields: dict, statements: Any, warnings: IssueGroups, *, texts_checked: bool
) -> list[PayloadIssue]:
    issues = []
    if not isinstance(fields.get("summary", ""), str):
        issues.append(PayloadIssue(join(fields_path, "summary"), "expected a string"))
    for key in ("external_id", "id"):
        if not _is_identifier(fields.get(key)):
            issues.append(
                PayloadIssue(
                    join(fields_path, key), f"expected a text of 1 to {MAX_EXTERNAL_ID} characters"
                )
            )
    date_path = join(fields_path, "date")
    issues += _date_issues(fields.get("date"), date_path, parse_date, "YYYY-MM-DD")
    issues += discussion_extraction_issues(
        fields.get("discussion_extraction"), join(fields_path, "discussion_extraction")
    )
    # Statements sit beside the "discussion" object, not inside it.
    path = fields_path.removesuffix("discussion").rstrip(".")
    if not isinstance(statements, list):
        return [*issues, PayloadIssue(join(path, "statements"), "expected a list")]
    orders = [s.get("order", i) for i, s in enumerate(statements) if isinstance(s, dict)]
    orders = [order for order in orders if _is_order(order)]
    if len(set(orders)) != len(orders):
        issues.append(PayloadIssue(join(path, "statements"), "statement orders repeat", kind=RULE))
    earlier: dict[str, set] = payload_ids([])  # ids of the discussion's payloads so far
    for index, statement in enumerate(statements):
        statement_path = join(join(path, "statements"), index)
        checked = _Checked(texts_checked=texts_checked)
        issues += _statement_issues(statement, statement_path, checked)
        for warning in _ground_truth_problems(statement, statement_path, earlier, checked):
            warnings.add(warning)
    return issues


class _Checked:
    """pdp_issues of each payload of a statement once: its checks ask up to five times.
    ``texts_checked``: the file's reader checked the texts and depth already."""

    def __init__(self, *, texts_checked: bool) -> None:
        # The payload is kept beside its issues, so its id is not reused while this lives.
        self._found: dict[int, tuple[Any, list[PayloadIssue]]] = {}
        self.texts_checked = texts_checked

    def __call__(self, payload: Any) -> list[PayloadIssue]:
        found = self._found.get(id(payload))
        if found is None:
            issues = pdp_issues(payload, texts_checked=self.texts_checked)
            found = self._found[id(payload)] = (payload, issues)
        return found[1]


def _ground_truth_problems(
    statement: Any, path: str, earlier: dict[str, set], checked: _Checked
) -> list[PayloadIssue]:
    """Imported ground truth was approved where it comes from: what breaks a rule of approved
    coding here (metrics.families.payload.rules, rules and warnings alike) is a warning naming
    it, never a refusal. The statement's payloads' ids then join ``earlier`` (kept as the
    discussion is read, not gathered again for each statement), which later deltas may name."""
    if not isinstance(statement, dict):
        return []
    key, payload = gt_entry(statement)
    problems = []
    if isinstance(payload, dict) and not checked(payload):  # else the schema said why
        problems = [replace(p, kind=WARNING) for p in pdp_findings(payload, known=earlier)]
    for candidate in (statement.get("pdp_deltas"), payload):
        if isinstance(candidate, dict) and not checked(candidate):
            for kind, ids in payload_ids([candidate]).items():
                earlier[kind] |= ids
    return prefixed(problems, join(path, key))


def _date_issues(value: Any, path: str, parser, expected: str) -> list[PayloadIssue]:
    """A date field that is present must parse; Django's parsers raise on impossible dates."""
    if value is None:
        return []
    try:
        parsed = parser(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        return [PayloadIssue(path, f"{value!r} is not a valid date (expected {expected})")]
    return []


def _is_identifier(value: Any) -> bool:
    """An external id as given: absent, a short text, or an integer (an exported ``id``)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value is None or abs(value) <= MAX_IMPORT_ID
    return isinstance(value, str) and 0 < len(value) <= MAX_EXTERNAL_ID


class FileCheck:
    """A file's check, a discussion at a time as it is read (``discussion``), then of the file
    as a whole (``finish``): one line per distinct problem (an error) or distinct warning."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.notes, self.errors, self.warnings = ImportNotes(), IssueGroups(), IssueGroups()
        self.count = 0
        self.texts_checked = isinstance(reading, JsonListReader)

    def discussions(self) -> Iterator[tuple[str, Any]]:
        """(path, discussion) of each discussion of the file as it is read (notes taken)."""
        return canonical(self.reading, self.notes)

    def discussion(self, path: str, item: Any) -> tuple[dict, list] | None:
        """Check one discussion: its fields and statements when it has no problem."""
        self.count += 1
        try:
            fields_path, fields, statements = split_discussion(item, path)
        except PayloadError as exc:  # not a discussion object
            for issue in exc.issues:
                self.errors.add(issue)
            return None
        issues = _discussion_issues(
            fields_path, fields, statements, self.warnings, texts_checked=self.texts_checked
        )
        for issue in issues:
            self.errors.add(issue)
        return None if issues else (fields, statements)

    def finish(self) -> tuple[int, ImportNotes, list[str]]:
        """Once the file is read through: raises PayloadError with one line per distinct
        problem, else returns the number of discussions, the notes on the file and its
        warnings (one line per distinct warning)."""
        problem = top_level_problem(self.reading, self.notes)
        if problem:
            raise problem
        if self.errors:
            raise PayloadError(self.errors.issues())
        return self.count, self.notes, self.warnings.lines()
