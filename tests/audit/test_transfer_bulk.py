"""The import writes a discussion at a time in bulk: the same rows as one write per statement.

``test_an_import_leaves_the_database_as_before`` imports a file that mixes every case the
import decides (new and existing discussions, existing statements, statements with and without
an extraction, per-statement runs, approved ground truth already in place, the file's auditor
already coding, "imported" already coding), twice, and compares every row it writes or derives
(ids as natural keys, in id order; clocks only as set or not) and what it marks stale with
``import_state.json``, which the one-write-per-statement import produced. Regenerate it only
when a change of what is imported is intended (``DEBUG=1``, or a real SECRET_KEY: with DEBUG
off a short or placeholder key stops the start):

    GOLDEN_UPDATE=1 DEBUG=1 .venv/bin/python -m pytest tests/audit/test_transfer_bulk.py -q
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Callable, Iterable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, reset_queries
from django.test.utils import CaptureQueriesContext

from audit.derived import coding_times
from audit.models import (
    AuditLogEntry,
    AuditorFigures,
    CodingTally,
    CodingTime,
    CodingTimeChange,
    Discussion,
    DiscussionFigures,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    RunConfiguration,
    Speaker,
    Statement,
)
from audit.services import discussions_import
from audit.services import imports as transfer
from evalsite.perf import planner
from metrics.engine import invalidation
from tests.factories import SIMPLE_PDP, ExtractionFactory, FeedbackFactory, SpeakerFactory, pdp
from tests.factories import StatementFactory as StatementRow

pytestmark = pytest.mark.django_db

SNAPSHOT = Path(__file__).with_name("import_state.json")
GT = pdp(people=[{"id": -1, "name": "John", "last_name": "Smith", "gender": "male"}])
GT_2 = pdp(people=[{"id": -1, "name": "Mary", "last_name": "Smith", "gender": "female"}])


def _approved(auditor: str | None = None, payload: dict = GT, **meta: Any) -> dict:
    return {"auditor_id": auditor, "edited_extraction": payload, "approved": True, **meta}


def _existing_discussion(make_user) -> None:
    """A discussion coded before the import: approved ground truth on statement 1, the file's
    auditor coding statement 2, the file's auditor and "imported" both coding statement 3."""
    pat, filed = make_user("pat"), make_user("pat@example.com")
    imported = make_user("imported")
    discussion = Discussion.objects.create(summary="Old one", external_id="old-1")
    expert = SpeakerFactory(discussion=discussion, name="Interviewer", type=Speaker.Type.EXPERT)
    anna = SpeakerFactory(discussion=discussion, name="Anna")
    StatementRow(discussion=discussion, speaker=expert, order=0, text="Q?")
    rows = [
        StatementRow(discussion=discussion, speaker=anna, order=n, text=f"Said {n}")
        for n in (1, 2, 3)
    ]
    run, _ = ExtractionRun.objects.get_or_create(model_name="imported", prompt_version="unknown")
    ExtractionFactory(statement=rows[0], run=run)
    FeedbackFactory(statement=rows[0], auditor=pat, status=Feedback.Status.APPROVED)
    FeedbackFactory(statement=rows[1], auditor=filed, status=Feedback.Status.SUBMITTED)
    FeedbackFactory(statement=rows[2], auditor=filed, status=Feedback.Status.DRAFT)
    FeedbackFactory(statement=rows[2], auditor=imported, status=Feedback.Status.SUBMITTED)


def _subject(text: str, **fields: Any) -> dict:
    return {"text": text, "speaker_type": "Subject", **fields}


def _file() -> dict:
    old = [
        {"order": 0, "text": "Q?", "speaker_type": "Expert"},
        _subject("kept", order=1, pdp_deltas=SIMPLE_PDP, approved_feedback=_approved("pat")),
        _subject(
            "to imported",
            order=2,
            pdp_deltas=SIMPLE_PDP,
            approved_feedback=_approved(
                "pat@example.com", approved_by="boss", approved_at="2025-01-01T00:00:00Z"
            ),
        ),
        _subject("both code it", order=3, approved_feedback=_approved("pat@example.com")),
        _subject(
            "new speaker",
            order=4,
            speaker="Bob",
            pdp_deltas=SIMPLE_PDP,
            extraction_run={"model_name": "gpt-x", "prompt_version": None},
            approved_feedback={"auditor": "lee", "edited_extraction": GT_2, "approved": True},
        ),
        {
            "order": 5,
            "text": "An expert's",
            "speaker_type": "Expert",
            "speaker": "Interviewer",
            "pdp_deltas": SIMPLE_PDP,
            "ground_truth": GT,
        },
        _subject(
            "a run, no extraction",
            order=7,
            speaker="Anna",
            pdp_deltas=None,
            extraction_run={"model_name": "gpt-y", "prompt_version": "p2"},
        ),
    ]
    new = [
        {"text": "Hello", "speaker_type": "Expert", "speaker": "Interviewer"},
        _subject("own", pdp_deltas=SIMPLE_PDP, approved_feedback=_approved("carol")),
        _subject(
            "lee's",
            pdp_deltas=pdp(),
            extraction_run={"model_name": "gpt-x", "prompt_version": "unknown"},
            approved_feedback=_approved("lee"),
        ),
        _subject("nothing"),
    ]
    again = [*copy.deepcopy(new), _subject("later", order=9, approved_feedback=_approved("pat"))]
    nameless = [
        _subject("one", pdp_deltas=SIMPLE_PDP, approved_feedback=_approved("pat@example.com"))
    ]
    return {
        "discussions": [
            {"discussion": {"external_id": "old-1", "summary": "ignored"}, "statements": old},
            {
                "discussion": {"id": 77, "summary": "New one", "date": "2024-02-03"},
                "statements": new,
            },
            {"discussion": {"summary": "Nameless"}, "statements": nameless},
            {"discussion": {"external_id": "77", "summary": "ignored too"}, "statements": again},
        ]
    }


# --- the database's state, by natural keys ------------------------------------------------------


CLOCKS = {"created_at", "updated_at", "approved_at", "read_at"}
TIMES = {"micros", "active_seconds", "median_seconds", "per_day"}  # from clock differences


def _keys() -> dict[str, dict[int, str]]:
    users = dict(get_user_model().objects.values_list("pk", "username"))
    discussions: dict[int, str] = {}
    for pk, summary in Discussion.objects.order_by("pk").values_list("pk", "summary"):
        # a discussion without an external id is created again by the second import
        discussions[pk] = summary + "'" * list(discussions.values()).count(summary)
    statements = {
        pk: f"{discussions[d]}#{order}"
        for pk, d, order in Statement.objects.values_list("pk", "discussion_id", "order")
    }
    runs = {
        pk: f"{m}/{p}" + (f"#{r}" if r > 1 else "")
        for pk, m, p, r in ExtractionRun.objects.values_list(
            "pk", "model_name", "prompt_version", "replicate"
        )
    }
    feedback = {
        pk: f"{statements[s]}~{users[a]}"
        for pk, s, a in Feedback.objects.values_list("pk", "statement_id", "auditor_id")
    }
    return {
        "user": users,
        "discussion": discussions,
        "statement": statements,
        "speaker": {
            pk: f"{discussions[d]}:{name}"
            for pk, d, name in Speaker.objects.values_list("pk", "discussion_id", "name")
        },
        "run": runs,
        "extraction": {
            pk: f"{statements[s]}@{runs[r]}"
            for pk, s, r in Extraction.objects.values_list("pk", "statement_id", "run_id")
        },
        "feedback": feedback,
        "configuration": {
            pk: f"{m}/{p}"
            for pk, m, p in RunConfiguration.objects.values_list(
                "pk", "model_name", "prompt_version"
            )
        },
    }


FOREIGN = {
    "discussion_id": "discussion",
    "statement_id": "statement",
    "speaker_id": "speaker",
    "run_id": "run",
    "source_extraction_id": "extraction",
    "feedback_id": "feedback",
    "auditor_id": "user",
    "author_id": "user",
    "approved_by_id": "user",
    "proposed_by_id": "user",
    "actor_id": "user",
    "configuration_id": "configuration",
}


def _value(name: str, value: Any, keys: dict[str, dict[int, str]]) -> Any:
    if name in CLOCKS:
        return value is not None
    if isinstance(value, date | datetime):
        return "today" if value == date.today() else str(value)
    if name in FOREIGN and value is not None:
        return keys[FOREIGN[name]][value]
    if name == "external_id" and value and len(value) == 32:
        return "generated"
    if name == "configuration" and isinstance(value, int):
        return keys["configuration"][value]
    return value


def _rows(model: Any, keys: dict[str, dict[int, str]]) -> list[dict]:
    """Every row in id order, ids left out (their order kept), other tables' ids as keys."""
    rows = []
    for row in model.objects.order_by("pk").values():
        row.pop("id", None)
        rows.append({k: _value(k, v, keys) for k, v in row.items() if k not in TIMES})
    return rows


# An entry's object and the ids its message names, as natural keys: ids depend on the
# sequences, which earlier tests (rolled back or not) have moved on.
LOGGED_OBJECTS = {"extraction_run": "run", "discussion": "discussion", "feedback": "feedback"}
CONFIGURATION_IN_MESSAGE = re.compile(r"(?<=configuration )(\d+)")


def _log(keys: dict[str, dict[int, str]]) -> list[dict]:
    rows = _rows(AuditLogEntry, keys)
    for row in rows:
        kind = LOGGED_OBJECTS.get(row["object_type"])
        if kind and row["object_id"]:
            row["object_id"] = keys[kind][int(row["object_id"])]
        row["message"] = CONFIGURATION_IN_MESSAGE.sub(
            lambda found: keys["configuration"][int(found[1])], row["message"]
        )
        ids = row["details"].get("imported_feedback")
        if ids is not None:
            row["details"]["imported_feedback"] = [keys["feedback"][pk] for pk in ids]
        for name in ("external_id", "configuration"):
            if name in row["details"]:
                row["details"][name] = _value(name, row["details"][name], keys)
    return rows


def _users() -> list[list]:
    users = get_user_model().objects.order_by("pk").prefetch_related("groups")
    return [
        [
            u.username,
            u.email,
            u.is_active,
            u.has_usable_password(),
            sorted(g.name for g in u.groups.all()),
        ]
        for u in users
    ]


def _state() -> dict:
    keys = _keys()
    tables = (
        Discussion, Speaker, Statement, RunConfiguration, ExtractionRun, Extraction, Feedback,
        FeedbackRevision,
        CodingTally, DiscussionFigures, AuditorFigures, CodingTime, CodingTimeChange,
    )  # fmt: skip
    state: dict[str, Any] = {model.__name__: _rows(model, keys) for model in tables}
    return {**state, "users": _users(), "log": _log(keys)}


def _summary(summary: transfer.ImportSummary) -> dict:
    keys = _keys()
    return {
        "line": summary.line(),
        "touched": [keys["statement"][pk] for pk in summary.touched_statement_ids],
        "imported_feedback": [keys["feedback"][pk] for pk in summary.imported_feedback_ids],
    }


def _recorded(calls: list, name: str) -> Callable[..., None]:
    def record(**kwargs: Any) -> None:
        ids = kwargs.get("statement_ids")
        calls.append([name, kwargs.get("reason"), None if ids is None else sorted(ids)])

    return record


def _times_seen(seen: list, times_changed: Callable[..., None]) -> Callable[..., None]:
    def record(*, changes: Iterable) -> None:
        changes = list(changes)
        seen.extend(changes)
        times_changed(changes=changes)

    return record


def _import_committed(data: dict, by, monkeypatch) -> dict:
    """Import (committed, its on-commit work run), recording what it marks stale: the results
    of its statements, the inter-auditor family."""
    calls: list = []
    monkeypatch.setattr(invalidation.own_data, "interauditor_mark_stale", _recorded(calls, "ia"))
    monkeypatch.setattr(invalidation.services, "results_mark_stale", _recorded(calls, "results"))
    seen: list = []
    monkeypatch.setattr(
        coding_times, "times_changed", _times_seen(seen, coding_times.times_changed)
    )
    summary = discussions_import(data=copy.deepcopy(data), by=by)
    keys = _keys()
    for call in calls:
        call[2] = call[2] and [keys["statement"][pk] for pk in call[2]]
    times = sorted(  # as text: a change may name no discussion or day
        (
            [keys["user"][a], d and keys["discussion"][d], s and _value("since", s, keys)]
            for a, d, s in seen
        ),
        key=lambda change: [str(part) for part in change],
    )
    return {"summary": _summary(summary), "marked": calls, "times": times, "state": _state()}


# Committed for real: what runs once per transaction (the inter-auditor marking) is seen.
@pytest.mark.django_db(transaction=True)
def test_an_import_leaves_the_database_as_before(make_user, admin_user, monkeypatch):
    monkeypatch.setattr(transfer.ground_truth, "LOGGED_FEEDBACK_IDS", 3)
    _existing_discussion(make_user)
    first = _import_committed(_file(), admin_user, monkeypatch)
    again = _import_committed(_file(), admin_user, monkeypatch)
    found = {"first": first, "again": again}
    if os.environ.get("GOLDEN_UPDATE") == "1":
        SNAPSHOT.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    assert found["first"]["summary"] == expected["first"]["summary"]
    assert found["first"]["marked"] == expected["first"]["marked"]
    for name in expected["first"]["state"]:
        assert found["first"]["state"][name] == expected["first"]["state"][name], name
    assert found == expected
    # What the snapshot says, in words: the cases the import decides.
    assert first["summary"]["line"] == (
        "2 discussions created, 2 already present, 9 statements, 5 extractions, "
        "7 approved ground truths imported, 4 statements kept their approved ground truth"
    )


# --- queries: a bounded number per discussion ---------------------------------------------------


def _discussions(prefix: str, statements: int) -> dict:
    return {
        "discussions": [
            {
                "discussion": {"external_id": f"{prefix}-{d}", "summary": "s"},
                "statements": [
                    _subject(
                        f"statement {n}",
                        pdp_deltas=SIMPLE_PDP,
                        extraction_run={"model_name": "gpt-x", "prompt_version": "v1"},
                        approved_feedback=_approved("pat"),
                    )
                    if n % 2
                    else {"text": "Q?", "speaker_type": "Expert", "speaker": "Interviewer"}
                    for n in range(statements)
                ],
            }
            for d in range(2)
        ]
    }


def _queries(data: dict, by) -> int:
    with CaptureQueriesContext(connection) as queries:
        discussions_import(data=data, by=by)
    return len(queries.captured_queries)


def test_an_import_takes_as_many_queries_for_5_statements_a_discussion_as_for_40(admin_user):
    _queries(_discussions("warm", 2), admin_user)  # the user and the run exist from here on
    short, long = (
        _queries(_discussions("a", 5), admin_user),
        _queries(_discussions("b", 40), admin_user),
    )
    assert short == long
    # Into discussions that exist already, statements and all: the same again.
    assert _queries(_discussions("a", 5), admin_user) == _queries(_discussions("b", 40), admin_user)


def test_debug_keeps_no_discussion_s_queries_after_it_is_written(admin_user, settings):
    """DEBUG's log of the last 9,000 queries would keep ~0.5 MB of bulk inserts a discussion."""
    settings.DEBUG = True
    reset_queries()
    discussions_import(data=_discussions("logged", 5), by=admin_user)
    inserted = sorted(
        query["sql"].split('"')[1]
        for query in connection.queries_log
        if query["sql"].startswith("INSERT INTO")
    )
    # After the last discussion only the import's own rows, one each: its audit log entry and
    # the announcement of the ground truth it changed (audit.signals, sent after the commit).
    assert inserted == ["audit_announcement", "audit_auditlogentry"]


# --- the planner's statistics -------------------------------------------------------------------


def test_an_import_refreshes_the_planner_statistics_before_the_metrics_plan_their_work(
    admin_user, monkeypatch, django_capture_on_commit_callbacks
):
    """Once committed, and before the metrics read the imported rows to mark and queue their
    results, PostgreSQL is told how many rows the import wrote (evalsite/perf/planner.py)."""
    calls: list = []
    monkeypatch.setattr(planner, "BULK_ROWS", 1)
    monkeypatch.setattr(
        planner,
        "planner_statistics_refresh",
        lambda *, models, written: calls.append(["planner", [m.__name__ for m in models], written]),
    )
    monkeypatch.setattr(invalidation.services, "results_mark_stale", _recorded(calls, "results"))

    with django_capture_on_commit_callbacks(execute=True):
        summary = discussions_import(data=_discussions("p", 4), by=admin_user)
        assert calls == []  # nothing before the commit

    # 2 discussions x 4 statements, 2 subjects each with an extraction and approved GT.
    assert (summary.statements_created, summary.extractions_created) == (8, 4)
    imported = ["Discussion", "Speaker", "Statement", "Extraction", "Feedback"]
    # (the stored tallies the import refreshed ask for theirs too: audit.derived.tallies)
    ordered = [call for call in calls if call[0] == "results" or call[1] == imported]
    assert ordered[0] == ["planner", imported, 8 + 4 + 4]
    assert [call[0] for call in ordered[1:]] == ["results"]
