"""Importing discussions with their extractions and ground truth (exporting it: audit.services.exports).

The import accepts the ground-truth export format (one discussion as
``{"discussion": {...}, "statements": [...]}``, or many under ``"discussions"``, each either
nested that way or flat as the export writes it). It validates the whole file first and
stores nothing if any part is wrong; it is idempotent by the discussion's external id.

Files are read in two passes, one discussion at a time (metrics.families.json_input.JsonListReader): the
first checks every discussion, the second imports them in one transaction. Parsed data goes
through the same two passes, so memory stays flat in the number of discussions either way.

Each discussion is written in a number of queries that does not grow with its statements: what
is in place is read a table at a time, what is new inserted a table at a time, and what the
rows' post_save receivers would do is done once for the discussion (``_import_discussion``).
"""

from __future__ import annotations

import contextlib
import itertools
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import IO, Any, Protocol

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from audit.derived.tallies import tallies_batched, tallies_refresh
from audit.derived.team_figures import queue_figures_refresh
from audit.models import (
    Discussion,
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    Feedback,
    RunConfiguration,
    Speaker,
    Statement,
)
from audit.services.audit_log import Action, audit_log_record
from audit.services.feedback import NotAllowed, revisions_record
from audit.services.import_shapes import (
    CONTINUED,
    EVALSITE,
    TOP_KEYS,
    ImportNotes,
    IssueGroups,
    case_discussions,
    discussion_item,
    single_discussion,
)
from audit.services.runs import (
    MAX_MODEL_NAME as MAX_MODEL_NAME,  # the runs' limits, published with the import's own
)
from audit.services.runs import (
    MAX_PROMPT_VERSION,
    WrongUnit,
    discussion_extraction_issues,
    discussion_run_info,
    run_for_import,
    run_info_issues,
    run_info_key,
    run_latest_or_register,
    run_unit_check,
)
from audit.signals import coding_changed_send, extractions_changed_send, ground_truth_changed_send
from evalsite.access import ensure_role_groups, is_admin
from evalsite.bulk import rows_insert
from evalsite.planner import planner_statistics_after_commit
from metrics.families.json_input import STREAM_CHUNK, JsonListReader
from metrics.families.payload.rules import (
    CONFLICT,
    RULE,
    UNKNOWN,
    WARNING,
    payload_ids,
    pdp_findings,
)
from metrics.families.payload.schema import (
    PayloadError,
    PayloadIssue,
    excerpt,
    normalize_pdp,
    pdp_issues,
)

SCHEMA_VERSION = "1"
DEFAULT_IMPORT_RUN = ("imported", "unknown")
# Limits of the model fields the import writes (PostgreSQL enforces them; SQLite does not).
MAX_EXTERNAL_ID = 200
MAX_SPEAKER = 200
MAX_USERNAME = 150
MAX_IMPORT_ID = 10**18 - 1  # an exported discussion id, kept as its external id
MAX_ORDER = 2**31 - 1

# Called with (discussions imported, discussions in the file) as the import writes them, and
# with (0, 0) while the file is checked first.
Progress = Callable[[int, int], None]


@dataclass
class ImportSummary:
    discussions_created: int = 0
    discussions_existing: int = 0
    statements_created: int = 0
    extractions_created: int = 0
    approved_created: int = 0
    approved_kept: int = 0
    # Whose extraction or ground truth the import created, once per statement and 8 bytes
    # each: what stays in memory through a large import.
    touched_statement_ids: array[int] = field(default_factory=lambda: array("q"))
    # The first LOGGED_FEEDBACK_IDS only: what the audit log names.
    imported_feedback_ids: list[int] = field(default_factory=list)
    # The file's shape, the keys it ignored, what it holds that was not imported.
    notes: ImportNotes = field(default_factory=ImportNotes)
    warnings: list[str] = field(default_factory=list)  # one line per distinct warning
    run: str | None = None  # the run the file's extractions went to (none: no extraction)

    def details(self) -> list[str]:
        """Everything the summary says besides the counts: shape, run, warnings, what was
        not imported and the keys ignored."""
        lines = self.notes.lines()
        if self.run:
            lines.insert(1 if lines else 0, f"extractions in run: {self.run}")
        return lines + [f"warning: {line}" for line in self.warnings]

    def line(self) -> str:
        kept = (
            f", {self.approved_kept} statements kept their approved ground truth"
            if self.approved_kept
            else ""
        )
        return (
            f"{self.discussions_created} discussions created, "
            f"{self.discussions_existing} already present, "
            f"{self.statements_created} statements, {self.extractions_created} extractions, "
            f"{self.approved_created} approved ground truths imported{kept}"
        )


# --- reading the file ----------------------------------------------------------------------------


class _Reading(Protocol):
    """One pass over an import file: its discussions one at a time (iterating), then what
    else its top level holds (JsonListReader's attributes)."""

    is_object: bool
    is_list: bool
    top: Any
    members: dict[str, Any]
    has_list: bool

    def __iter__(self) -> Iterator[Any]: ...


class _ParsedReading:
    """Parsed data read like a file, so both take the same two passes."""

    def __init__(self, data: Any):
        self.is_object = isinstance(data, dict)
        self.is_list = isinstance(data, list)
        self.top = None if self.is_list else data
        items = data.get("discussions") if self.is_object else data if self.is_list else None
        self.has_list = isinstance(items, list)
        self.members = (
            {k: v for k, v in data.items() if k != "discussions" or not self.has_list}
            if self.is_object
            else {}
        )
        self._items: list[Any] = items if isinstance(items, list) else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)


class _Source(Protocol):
    def reading(self) -> contextlib.AbstractContextManager[_Reading]: ...

    def check_unchanged(self, first: _Reading, second: _Reading) -> None: ...


class _ParsedSource:
    def __init__(self, data: Any):
        self.data = data

    @contextlib.contextmanager
    def reading(self) -> Iterator[_Reading]:
        yield _ParsedReading(self.data)

    def check_unchanged(self, first: _Reading, second: _Reading) -> None:
        pass


class _FileSource:
    """A file opened afresh for each pass and read a chunk at a time."""

    def __init__(self, open_file: Callable[[], IO[bytes]], chunk_size: int):
        self.open_file, self.chunk_size = open_file, chunk_size

    @contextlib.contextmanager
    def reading(self) -> Iterator[_Reading]:
        with self.open_file() as file:
            yield JsonListReader(file, list_key="discussions", chunk_size=self.chunk_size)

    def check_unchanged(self, first: _Reading, second: _Reading) -> None:
        # The second pass imports what the first one checked, or nothing.
        if getattr(first, "sha256", None) != getattr(second, "sha256", None):
            raise PayloadError([PayloadIssue("", "the file changed while it was imported")])


def _top_level_problem(reading: _Reading, notes: ImportNotes) -> PayloadError | None:
    """What is wrong with the file's top level for an import, once it has been read through
    (``notes``: what the reading found)."""
    if not reading.is_object:
        if reading.is_list and notes.cases and notes.bad_case is None:
            return None  # a case list
        where = f" ([{notes.bad_case}] is not an object)" if notes.bad_case is not None else ""
        message = f"expected a JSON object at the top level, or a list of case objects{where}"
        return PayloadError([PayloadIssue("", message)])
    if reading.has_list:
        return None
    if "discussions" in reading.members:
        return PayloadError([PayloadIssue("discussions", "expected a list of discussions")])
    if "discussion" in reading.members:
        return None
    return PayloadError(
        [PayloadIssue("", "expected a 'discussion' object or a 'discussions' list")]
    )


def _canonical(
    reading: _Reading, notes: ImportNotes, *, case_digest: str = ""
) -> Iterator[tuple[str, Any]]:
    """(path, discussion) for each discussion of the file, as it is read, in the one shape the
    import checks and writes (audit/services/import_shapes.py); the single-discussion form
    ({"discussion": ..., "statements": ...}) is read whole, a case list a case at a time (its
    discussions named by ``case_digest``, what the check found: notes.case_digest)."""
    notes.shape = EVALSITE
    read: Iterator[Any] = iter(reading)
    first = next(read, _END)  # a reading knows whether the file is a list once it has begun
    items: Iterator[Any] = itertools.chain([first], read) if first is not _END else iter(())
    if reading.is_list:
        yield from case_discussions(items, notes, digest=case_digest)
        return
    for index, item in enumerate(items):
        path = f"discussions[{index}]"
        yield path, discussion_item(item, path, notes)
    if not reading.is_object:
        return
    notes.ignore("", set(reading.members) - TOP_KEYS - {"statements"})
    if not reading.has_list and "discussion" in reading.members:
        if isinstance(reading.members["discussion"], dict):
            yield "discussion", single_discussion(reading.members, notes)
        else:
            yield "", reading.members  # the check names what is wrong


_END = object()


def _split_discussion(item: Any, path: str) -> tuple[str, dict, list]:
    if not isinstance(item, dict):
        raise PayloadError([PayloadIssue(path, "expected a discussion object")])
    fields = item.get("discussion", item)
    statements = item.get("statements", [])
    if not isinstance(fields, dict):
        raise PayloadError([PayloadIssue(_join(path, "discussion"), "expected an object")])
    fields_path = _join(path, "discussion") if "discussion" in item else path
    return fields_path, fields, statements


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _ground_truth_of(statement: dict) -> tuple[dict | None, dict]:
    """The approved extraction and its metadata, from either the new or the legacy key."""
    approved = statement.get("approved_feedback")
    if isinstance(approved, dict) and approved.get("approved", True):
        return approved.get("edited_extraction"), approved
    if statement.get("ground_truth") is not None:
        return statement["ground_truth"], {}
    return None, {}


def _statement_issues(statement: Any, path: str, checked: _Checked) -> list[PayloadIssue]:
    if not isinstance(statement, dict):
        return [PayloadIssue(path, "expected a statement object")]
    issues = []
    if not isinstance(statement.get("text"), str):
        issues.append(PayloadIssue(_join(path, "text"), "missing or not a string"))
    speaker_type = str(statement.get("speaker_type", "")).lower()
    if speaker_type not in Speaker.Type.values:
        issues.append(
            PayloadIssue(
                _join(path, "speaker_type"),
                f"{excerpt(statement.get('speaker_type'))} is not one of: Subject, Expert "
                "(or a speaker_id naming one of the discussion's speakers)",
            )
        )
    if "order" in statement and not _is_order(statement["order"]):
        issues.append(
            PayloadIssue(_join(path, "order"), f"expected an integer from 0 to {MAX_ORDER}")
        )
    issues += _text_issues(statement, path, {"speaker": MAX_SPEAKER})
    issues += run_info_issues(statement.get("extraction_run"), _join(path, "extraction_run"))
    approved = statement.get("approved_feedback")
    if isinstance(approved, dict):
        issues += _username_issues(approved, _join(path, "approved_feedback"))
        names = dict.fromkeys(("auditor", "auditor_id", "approved_by"), MAX_USERNAME)
        issues += _text_issues(approved, _join(path, "approved_feedback"), names)
        issues += _date_issues(
            approved.get("approved_at"),
            _join(path, "approved_feedback.approved_at"),
            parse_datetime,
            "an ISO 8601 date-time",
        )
    for key, payload in (("pdp_deltas", statement.get("pdp_deltas")), _gt_entry(statement)):
        if payload is not None:
            issues += _prefixed(checked(payload), _join(path, key))
    return issues


USERNAME = UnicodeUsernameValidator()


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
            issues.append(PayloadIssue(_join(path, key), "expected a username of 1-150 characters"))
            continue
        try:
            USERNAME(name)
        except ValidationError:
            issues.append(
                PayloadIssue(
                    _join(path, key),
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
            issues.append(PayloadIssue(_join(path, key), "expected a string or null"))
        elif len(value) > limit:
            issues.append(PayloadIssue(_join(path, key), f"longer than {limit} characters"))
    return issues


def _gt_entry(statement: dict) -> tuple[str, Any]:
    payload, meta = _ground_truth_of(statement)
    key = "approved_feedback.edited_extraction" if meta else "ground_truth"
    return key, payload


def _prefixed(issues: list[PayloadIssue], prefix: str) -> list[PayloadIssue]:
    return [replace(i, path=_join(prefix, i.path) if i.path else prefix) for i in issues]


def _discussion_issues(
    fields_path: str, fields: dict, statements: Any, warnings: IssueGroups, *, texts_checked: bool
) -> list[PayloadIssue]:
    issues = []
    if not isinstance(fields.get("summary", ""), str):
        issues.append(PayloadIssue(_join(fields_path, "summary"), "expected a string"))
    for key in ("external_id", "id"):
        if not _is_identifier(fields.get(key)):
            issues.append(
                PayloadIssue(
                    _join(fields_path, key), f"expected a text of 1 to {MAX_EXTERNAL_ID} characters"
                )
            )
    date_path = _join(fields_path, "date")
    issues += _date_issues(fields.get("date"), date_path, parse_date, "YYYY-MM-DD")
    issues += discussion_extraction_issues(
        fields.get("discussion_extraction"), _join(fields_path, "discussion_extraction")
    )
    # Statements sit beside the "discussion" object, not inside it.
    path = fields_path.removesuffix("discussion").rstrip(".")
    if not isinstance(statements, list):
        return [*issues, PayloadIssue(_join(path, "statements"), "expected a list")]
    orders = [s.get("order", i) for i, s in enumerate(statements) if isinstance(s, dict)]
    orders = [order for order in orders if _is_order(order)]
    if len(set(orders)) != len(orders):
        issues.append(PayloadIssue(_join(path, "statements"), "statement orders repeat", kind=RULE))
    earlier: dict[str, set] = payload_ids([])  # ids of the discussion's payloads so far
    for index, statement in enumerate(statements):
        statement_path = _join(_join(path, "statements"), index)
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
    key, payload = _gt_entry(statement)
    problems = []
    if isinstance(payload, dict) and not checked(payload):  # else the schema said why
        problems = [replace(p, kind=WARNING) for p in pdp_findings(payload, known=earlier)]
    for candidate in (statement.get("pdp_deltas"), payload):
        if isinstance(candidate, dict) and not checked(candidate):
            for kind, ids in payload_ids([candidate]).items():
                earlier[kind] |= ids
    return _prefixed(problems, _join(path, key))


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


def _external_id(fields: dict) -> str | None:
    value = fields.get("external_id") or fields.get("id")
    return None if value is None else str(value)


# --- writing -----------------------------------------------------------------------------------


def _username(identifier: str | None) -> str:
    return (identifier or IMPORT_USER).strip()[:150]


def _user(name: str) -> User:
    """The user an exported auditor/approver name refers to, created inactive if unknown."""
    user = get_user_model().objects.filter(username=name).first()
    if user is None:
        user = get_user_model().objects.create(
            username=name, email=name if "@" in name else "", is_active=False
        )
        user.set_unusable_password()
        user.save(update_fields=["password"])
        auditor_group, _ = ensure_role_groups()
        user.groups.add(auditor_group)
    return user


@dataclass
class _Known:
    """The runs and users an import has looked up, by name: each is read once per import, not
    once per statement. A run is registered when its first extraction is imported (an import
    that brings no extraction registers none)."""

    default_run: tuple[str, str]
    run_info: dict[str, Any] | None = None
    by: User | None = None
    runs: dict[str, ExtractionRun] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    # Discussions given statements since their queue figures were last counted.
    figures_due: set[int] = field(default_factory=set)

    def run_for(self, statement: dict) -> ExtractionRun:
        """The run of a statement's (or a discussion's) ``extraction_run``, else the run the
        import was given (``run_info``): one registration per distinct description in the
        import (runs.run_for_import). Without either, the default run of old: the latest
        replicate of its model and prompt version."""
        info = statement.get("extraction_run")
        if not isinstance(info, dict) or not (info.get("model_name") or info.get("external_id")):
            info = self.run_info
        key = "default" if info is None else run_info_key(info)
        if key not in self.runs:
            self.runs[key] = (
                run_for_import(info, by=self.by)
                if info is not None
                else run_latest_or_register(
                    model_name=self.default_run[0], prompt_version=self.default_run[1], by=self.by
                )
            )
        return self.runs[key]

    def users_read(self, names: set[str]) -> None:
        """Read these users in one query (a name no user has is created when it is needed)."""
        missing = names - set(self.users)
        if missing:
            for user in get_user_model().objects.filter(username__in=missing):
                self.users[user.username] = user

    def user(self, name: str) -> User:
        if name not in self.users:
            self.users[name] = _user(name)
        return self.users[name]


def _get_discussion(fields: dict, summary: ImportSummary) -> tuple[Discussion, bool]:
    external_id = _external_id(fields)
    existing = Discussion.objects.filter(external_id=external_id).first() if external_id else None
    if existing:
        # A later part of a case list's discussion adds to it: counted with its first part.
        summary.discussions_existing += 0 if fields.get(CONTINUED) else 1
        return existing, False
    summary.discussions_created += 1
    date = fields.get("date")
    created = Discussion.objects.create(
        summary=fields.get("summary") or "",
        external_id=external_id,
        date=parse_date(date) if isinstance(date, str) else None,
    )
    return created, True


# Discussions whose derived counts (coding tallies, queue figures) are refreshed together: a
# refresh is a few queries whatever it counts.
GROUP_DISCUSSIONS = 20
# What an import writes in bulk: the planner's statistics of these are refreshed after it.
IMPORTED_MODELS = (Discussion, Speaker, Statement, Extraction, Feedback)


def _get_statements(
    discussion: Discussion,
    statements: list[dict],
    known: _Known,
    summary: ImportSummary,
    *,
    existing: bool,
) -> list[Statement]:
    """The discussion's statement at each order the file gives: the one in place (an existing
    discussion's), else a new one, all new ones written in one insert."""
    orders = [data.get("order", index) for index, data in enumerate(statements)]
    found: dict[int, Statement] = {}
    if existing:
        rows = discussion.statements.filter(order__in=orders).select_related("speaker")
        found = {row.order: row for row in rows}
    new = [
        (order, data) for order, data in zip(orders, statements, strict=True) if order not in found
    ]
    speakers = _get_speakers(discussion, [data for _, data in new], existing=existing)
    created = [_new_statement(discussion, speakers, order, data) for order, data in new]
    rows_insert(created)
    if created:
        summary.statements_created += len(created)
        # Inserted past Statement's post_save: the count of what is still to code follows
        # (with the rest of the group's discussions, in _import).
        known.figures_due.add(discussion.pk)
    found |= {row.order: row for row in created}
    return [found[order] for order in orders]


def _new_statement(
    discussion: Discussion, speakers: dict[str, Speaker], order: int, data: dict
) -> Statement:
    speaker = speakers[_speaker_name(data)]
    return Statement(discussion=discussion, speaker=speaker, order=order, text=data["text"])


def _speaker_name(data: dict) -> str:
    return str(data.get("speaker") or str(data["speaker_type"]).lower().title())


def _get_speakers(
    discussion: Discussion, statements: list[dict], *, existing: bool
) -> dict[str, Speaker]:
    """The speakers of new statements by name: the discussion's, else new ones, of the type
    the first statement naming them gives."""
    wanted: dict[str, str] = {}
    for data in statements:
        wanted.setdefault(_speaker_name(data), str(data["speaker_type"]).lower())
    found: dict[str, Speaker] = {}
    if existing and wanted:
        found = {s.name: s for s in discussion.speakers.filter(name__in=list(wanted))}
    new = [
        Speaker(discussion=discussion, name=name, type=kind)
        for name, kind in wanted.items()
        if name not in found
    ]
    # A new speaker has no statements yet: its post_save had nothing to do.
    return found | {s.name: s for s in Speaker.objects.bulk_create(new)}


def _import_extractions(
    rows: list[Statement], statements: list[dict], known: _Known, summary
) -> set[int]:
    """The subject statements' extractions the file gives, where their run has none yet;
    returns the statements given one."""
    given = [
        (row, known.run_for(data), data["pdp_deltas"])
        for row, data in zip(rows, statements, strict=True)
        if data.get("pdp_deltas") is not None and row.is_subject
    ]
    experts = sum(
        data.get("pdp_deltas") is not None and not row.is_subject
        for row, data in zip(rows, statements, strict=True)
    )
    if experts:
        summary.notes.not_imported["extraction (pdp_deltas) of an expert statement"] += experts
    if not given:
        return set()
    for run in {run for _, run, _ in given}:
        if run.unit != RunConfiguration.Unit.STATEMENT:
            message = f"run {run.pk} ({run.label}) extracts whole discussions: give its PDP as "
            message += "the discussion's discussion_extraction"
            raise PayloadError([PayloadIssue("pdp_deltas", message, CONFLICT)])
    have = set(
        Extraction.objects.filter(statement__in=[row for row, _, _ in given]).values_list(
            "statement_id", "run_id"
        )
    )
    new = [
        Extraction(statement=row, run=run, pdp_deltas=_normalized(payload))
        for row, run, payload in given
        if (row.pk, run.pk) not in have
    ]
    rows_insert(new)
    summary.extractions_created += len(new)
    if len(given) > len(new):
        kept = "extraction already in place for its run (kept)"
        summary.notes.not_imported[kept] += len(given) - len(new)
    labels = sorted({run.label for _, run, _ in given})
    summary.run = summary.run or ", ".join(labels)
    return {extraction.statement_id for extraction in new}


IMPORT_USER = "imported"


def _import_ground_truths(
    rows: list[Statement], statements: list[dict], known: _Known, summary, by
) -> set[int]:
    """Imported ground truth becomes its own feedback, approved by the importing admin;
    returns the statements given one.

    It never touches anyone's feedback: approved ground truth already in place is kept, and
    when the file's auditor already codes this statement the import is owned by "imported".
    """
    given: list[tuple[Statement, dict, dict]] = []
    for row, data in zip(rows, statements, strict=True):
        payload, meta = _ground_truth_of(data)
        if payload is not None:
            given.append((row, payload, meta))
    if not given:
        return set()
    coders = _coders(statement_ids=[row.pk for row, _, _ in given])
    known.users_read({IMPORT_USER, *(_owner_name(meta) for _, _, meta in given)})
    feedback = []
    for row, payload, meta in given:
        owner = _owner(coders.get(row.pk, {}), meta, known)
        if owner is None:
            summary.approved_kept += 1
            continue
        feedback.append(_imported_feedback(row, owner, payload, meta, by))
    _feedback_create(feedback, coders, summary, by)
    return {f.statement_id for f in feedback}


def _coders(*, statement_ids: list[int]) -> dict[int, dict[int, str]]:
    """Per statement, who codes it already and with what status."""
    rows = Feedback.objects.filter(statement_id__in=statement_ids).values_list(
        "statement_id", "auditor_id", "status"
    )
    coders: dict[int, dict[int, str]] = {}
    for statement_id, auditor_id, status in rows:
        coders.setdefault(statement_id, {})[auditor_id] = status
    return coders


def _owner_name(meta: dict) -> str:
    return _username(meta.get("auditor") or meta.get("auditor_id"))


def _owner(coders: dict[int, str], meta: dict, known: _Known) -> User | None:
    """Whose the imported ground truth is: the file's auditor, else "imported" when they code
    the statement already; None (kept) when it has approved ground truth or both code it."""
    if Feedback.Status.APPROVED in coders.values():
        return None
    owner = known.user(_owner_name(meta))
    if owner.pk in coders:
        owner = known.user(IMPORT_USER)
        if owner.pk in coders:
            return None
    return owner


def _imported_feedback(row: Statement, owner: User, payload: dict, meta: dict, by) -> Feedback:
    return Feedback(
        statement=row,
        auditor=owner,
        edited_extraction=_normalized(payload),
        status=Feedback.Status.APPROVED,
        approved_by=by,
        approved_at=timezone.now(),
        approval="imported",
        comment=_provenance(meta),
    )


def _feedback_create(feedback: list[Feedback], coders: dict, summary, by) -> None:
    """Insert the discussion's imported ground truth with its history, then do what
    Feedback's post_save receivers did for each row."""
    rows_insert(feedback)
    if feedback and not summary.approved_created:
        # Once per import, as the post_save marking did once per transaction.
        coding_changed_send(reason="coding changed")
    revisions_record(feedbacks=feedback, author=by, action="import")
    # Approved ground truth takes the other codings of its statement out of the review stream:
    # every coder's tally of the discussion, the new owner's among them.
    tallies_refresh(
        pairs={
            (f.statement.discussion_id, auditor_id)
            for f in feedback
            for auditor_id in {f.auditor_id, *coders.get(f.statement_id, {})}
        }
    )
    summary.approved_created += len(feedback)
    room = max(LOGGED_FEEDBACK_IDS - len(summary.imported_feedback_ids), 0)
    summary.imported_feedback_ids += [f.pk for f in feedback[:room]]


def _provenance(meta: dict) -> str:
    """What the file said about the original approval (and its comment); kept beside the
    import's own."""
    parts = [f"{key} {meta[key]}" for key in ("approved_by", "approved_at") if meta.get(key)]
    line = f"Imported ({', '.join(parts)} in the file)." if parts else "Imported."
    comment = meta.get("comment")
    return f"{line}\n{comment}" if isinstance(comment, str) and comment else line


def _normalized(payload: dict) -> dict:
    """A payload of the file as stored: the file's parsed data is written once and dropped, so
    its items are stored as they are, not copied."""
    return normalize_pdp(payload)


@dataclass
class ImportRun:
    """Where a file's extractions go, as the importer says it (the command's --run/--run-model,
    the API's and the import page's run fields): an existing ``run`` (found by its external
    id), else a new replicate of a model and prompt version, else a run of the import's own
    named after the file and the time. As ``run_info`` (audit.services.runs) it is registered
    when the first extraction needs it: a file without extractions makes no run."""

    run: ExtractionRun | None = None
    model_name: str = ""
    prompt_version: str = ""
    source: str = "import"  # the file's name
    # With a model: the new replicate's unit (default statement), notes and external id.
    unit: str = ""
    notes: str = ""
    external_id: str = ""

    def info(self) -> dict[str, Any]:
        if self.run is not None:
            return {"external_id": self.run.external_id}
        if self.model_name:
            info = {"model_name": self.model_name, "prompt_version": self.prompt_version}
            given = {"unit": self.unit, "notes": self.notes, "external_id": self.external_id}
            return {**info, **{key: value for key, value in given.items() if value}}
        stamp = timezone.localtime().strftime("%Y-%m-%d %H:%M:%S")
        name = f"{self.source[: MAX_PROMPT_VERSION - len(stamp) - 1]} {stamp}"
        return {"model_name": IMPORT_RUN_MODEL, "prompt_version": name}


IMPORT_RUN_MODEL = "import"  # the model name of an import's own run


def discussions_import(
    *,
    data: Any,
    by: User | None,
    run: ImportRun | None = None,
    default_run: tuple[str, str] = DEFAULT_IMPORT_RUN,
    progress: Progress | None = None,
    run_info: dict[str, Any] | None = None,
) -> ImportSummary:
    """Import every discussion of parsed data (any shape of audit/services/import_shapes.py),
    all or nothing; raises PayloadError naming each distinct problem once.

    ``by`` is the importing admin: imported ground truth is approved by them, marked "imported".
    ``run`` (or ``run_info``, an ``extraction_run`` object) is the run of the extractions the
    file gives without one; with neither, the latest replicate of ``default_run``.
    """
    info = run_info if run_info is not None else (run.info() if run else None)
    return _import(_ParsedSource(data), by, default_run, progress, info)


def discussions_import_file(
    *,
    open_file: Callable[[], IO[bytes]],
    by: User | None,
    run: ImportRun | None = None,
    default_run: tuple[str, str] = DEFAULT_IMPORT_RUN,
    progress: Progress | None = None,
    chunk_size: int = STREAM_CHUNK,
    run_info: dict[str, Any] | None = None,
) -> ImportSummary:
    """discussions_import for a file too large to hold: ``open_file()`` opens it in binary
    mode, once to check it and once to import it, each time read one discussion at a time.
    Raises JsonInputError (with where) for a file that is not valid JSON."""
    info = run_info if run_info is not None else (run.info() if run else None)
    return _import(_FileSource(open_file, chunk_size), by, default_run, progress, info)


def _import(
    source: _Source,
    by: User | None,
    default_run: tuple[str, str],
    progress: Progress | None,
    run_info: dict[str, Any] | None = None,
) -> ImportSummary:
    if by is None or not is_admin(by):
        raise NotAllowed("Only admins import discussions and ground truth.")
    issues = run_info_issues(run_info, "run")
    if issues:
        raise PayloadError(issues)
    with source.reading() as checked:
        count, notes, warnings = _check(checked, progress)
    summary = ImportSummary(notes=notes, warnings=warnings)
    external_ids: list[str | None] = []
    with transaction.atomic(), source.reading() as reading:
        _one_import_at_a_time()
        known = _Known(default_run=default_run, run_info=run_info, by=by)
        # The notes were taken by the check; a case list's discussions are named by its digest.
        items = _canonical(reading, ImportNotes(), case_digest=notes.case_digest)
        done, group_start = 0, -1
        while done > group_start:  # a group of discussions at a time, read one by one
            group_start = done
            with tallies_batched():  # one recount per group, not one per coding
                for path, item in itertools.islice(items, GROUP_DISCUSSIONS):
                    _path, fields, statements = _split_discussion(item, path)
                    _import_discussion(fields, statements, known, summary, by)
                    _query_log_forget()
                    if len(external_ids) < LOGGED_EXTERNAL_IDS:
                        external_ids.append(_external_id(fields))
                    done += 1
                    if progress:
                        progress(done, count)
                if known.figures_due:
                    queue_figures_refresh(discussion_ids=known.figures_due)
                    known.figures_due.clear()
            _query_log_forget()
        source.check_unchanged(checked, reading)
        _log_import(summary, by, external_ids)
        _planner_statistics_after(summary)
        _announce_import(summary)
    return summary


def _planner_statistics_after(summary: ImportSummary) -> None:
    """Once committed, and before the metrics plan their recompute of what it touched, the
    planner sees the imported rows (evalsite/planner.py)."""
    written = summary.statements_created + summary.extractions_created + summary.approved_created
    planner_statistics_after_commit(models=IMPORTED_MODELS, written=written)


def _query_log_forget() -> None:
    """With DEBUG, the connection keeps the SQL of its last 9,000 queries; a discussion's bulk
    inserts carry every payload, so an import's log would hold hundreds of discussions'.
    An import is not a request, whose start would clear it: clear it a discussion at a time,
    unless queries are being counted (CaptureQueriesContext forces the debug cursor)."""
    if not connection.force_debug_cursor:
        connection.queries_log.clear()


def _check(reading: _Reading, progress: Progress | None) -> tuple[int, ImportNotes, list[str]]:
    """The first pass: every discussion checked as it is read (``progress(0, 0)`` after each:
    still checking); raises PayloadError with one line per distinct problem, else returns the
    number of discussions, the notes on the file and its warnings (one line per distinct
    warning)."""
    notes, errors, warnings = ImportNotes(), IssueGroups(), IssueGroups()
    count = 0
    for path, item in _canonical(reading, notes):
        count += 1
        if progress:
            progress(0, 0)
        try:
            fields_path, fields, statements = _split_discussion(item, path)
        except PayloadError as exc:  # not a discussion object
            for issue in exc.issues:
                errors.add(issue)
            continue
        texts_checked = isinstance(reading, JsonListReader)
        for issue in _discussion_issues(
            fields_path, fields, statements, warnings, texts_checked=texts_checked
        ):
            errors.add(issue)
    problem = _top_level_problem(reading, notes)
    if problem:
        raise problem
    if errors:
        raise PayloadError(errors.issues())
    return count, notes, warnings.lines()


LOGGED_EXTERNAL_IDS = 1000  # the audit log names the first discussions of an import
LOGGED_FEEDBACK_IDS = 10_000  # and the first ground truths it imported


# Any number fixed for this purpose; pg_advisory_xact_lock keys are application-defined.
IMPORT_LOCK_KEY = 170_001


def _one_import_at_a_time() -> None:
    """Imports wait for each other until the transaction ends, so two submissions of one file
    (or one external id) find each other's discussions instead of both creating them."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [IMPORT_LOCK_KEY])


def _log_import(summary: ImportSummary, by, external_ids: list[str | None]) -> None:
    audit_log_record(
        actor=by,
        action=Action.IMPORT,
        object_type="import",
        message=f"Imported: {summary.line()}.",
        details={
            "external_ids": external_ids,
            "imported_feedback": summary.imported_feedback_ids,
            "statements_created": summary.statements_created,
            "extractions_created": summary.extractions_created,
            "approved_created": summary.approved_created,
            "approved_kept": summary.approved_kept,
        },
    )


def _import_discussion(fields: dict, statements: list, known: _Known, summary, by) -> None:
    """One discussion in a number of queries that does not grow with its statements: what is
    in place is read a table at a time, what is new written a table at a time."""
    discussion, created = _get_discussion(fields, summary)
    rows = _get_statements(discussion, statements, known, summary, existing=not created)
    extracted = _import_extractions(rows, statements, known, summary)
    if _import_discussion_extraction(discussion, fields, known, summary):
        extracted |= {row.pk for row in rows if row.is_subject}
    approved = _import_ground_truths(rows, statements, known, summary, by)
    for row in rows:
        if row.pk in extracted or row.pk in approved:
            summary.touched_statement_ids.append(row.pk)


def _import_discussion_extraction(
    discussion: Discussion, fields: dict, known: _Known, summary: ImportSummary
) -> bool:
    """A discussion-unit run's PDP of the whole discussion, when the file gives one and the
    run has none yet; returns whether it was imported."""
    entry = fields.get("discussion_extraction")
    if not isinstance(entry, dict):
        return False
    run = known.run_for({"extraction_run": discussion_run_info(entry, known.run_info)})
    try:
        run_unit_check(run, RunConfiguration.Unit.DISCUSSION)
    except WrongUnit as exc:
        raise PayloadError([PayloadIssue("discussion_extraction", str(exc), CONFLICT)]) from None
    _, created = DiscussionExtraction.objects.get_or_create(
        discussion=discussion, run=run, defaults={"pdp": _normalized(entry["pdp"])}
    )
    summary.extractions_created += int(created)
    return created


def _announce_import(summary: ImportSummary) -> None:
    if not summary.touched_statement_ids:
        return
    ground_truth_changed_send(statement_ids=summary.touched_statement_ids, reason="import")


@transaction.atomic
def extractions_import(*, run: ExtractionRun, items: list[dict]) -> list[Extraction]:
    """Create or replace a run's extractions: items are {statement: id, pdp_deltas: {...}}."""
    run_unit_check(run, RunConfiguration.Unit.STATEMENT)
    statements = Statement.objects.select_related("speaker").in_bulk(
        [i.get("statement") for i in items if isinstance(i, dict)]
    )
    _check_extraction_items(items, statements)
    saved = []
    for item in items:
        extraction, _ = Extraction.objects.update_or_create(
            statement=statements[item["statement"]],
            run=run,
            defaults={"pdp_deltas": _normalized(item["pdp_deltas"])},
        )
        saved.append(extraction)
    extractions_changed_send(statement_ids=[e.statement_id for e in saved], reason="extractions")
    return saved


def _check_extraction_items(items: list[Any], statements: dict) -> None:
    """Every problem of every item at once; the gravest kind decides the status."""
    issues: list[PayloadIssue] = []
    for index, item in enumerate(items):
        issues += _extraction_item_issues(item, f"[{index}]", statements)
    if issues:
        raise PayloadError(issues)


def _extraction_item_issues(item: Any, path: str, statements: dict) -> list[PayloadIssue]:
    if not isinstance(item, dict):
        return [PayloadIssue(path, "expected an object with 'statement' and 'pdp_deltas'")]
    issues = []
    statement = statements.get(item.get("statement"))
    where = _join(path, "statement")
    if statement is None:
        issues.append(PayloadIssue(where, f"no statement {item.get('statement')!r}", UNKNOWN))
    elif not statement.is_subject:
        issues.append(PayloadIssue(where, "only subject statements carry extractions", CONFLICT))
    if "pdp_deltas" not in item:
        return [*issues, PayloadIssue(_join(path, "pdp_deltas"), "missing required field")]
    return issues + _prefixed(pdp_issues(item["pdp_deltas"]), _join(path, "pdp_deltas"))
