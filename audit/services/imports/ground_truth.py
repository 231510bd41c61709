"""A file's approved ground truth, written as feedback of its own approved by the importing
admin: never over anyone's coding."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from audit.derived.tallies import tallies_refresh
from audit.models import Feedback, Statement
from audit.services.feedback import revisions_record
from audit.services.imports.extractions import normalized
from audit.services.imports.known import IMPORT_USER, Known, username
from audit.services.imports.reading import ground_truth_of
from audit.signals import coding_changed_send
from evalsite.perf.bulk import json_text, values_insert


def import_ground_truths(
    rows: list[Statement], statements: list[dict], known: Known, summary, by, *, existing: bool
) -> set[int]:
    """Imported ground truth becomes its own feedback, approved by the importing admin;
    returns the statements given one (``existing``: the statements may have codings).

    It never touches anyone's feedback: approved ground truth already in place is kept, and
    when the file's auditor already codes this statement the import is owned by "imported".
    """
    given: list[tuple[Statement, dict, dict]] = []
    for row, data in zip(rows, statements, strict=True):
        payload, meta = ground_truth_of(data)
        if payload is not None:
            given.append((row, payload, meta))
    if not given:
        return set()
    coders = _coders(statement_ids=[row.pk for row, _, _ in given]) if existing else {}
    known.users_read({IMPORT_USER, *(_owner_name(meta) for _, _, meta in given)})
    feedback = []
    now = timezone.now()
    for row, payload, meta in given:
        owner = _owner(coders.get(row.pk, {}), meta, known)
        if owner is None:
            summary.approved_kept += 1
            continue
        feedback.append(_imported_feedback(row, owner, payload, meta, by, now))
    _feedback_create(feedback, rows[0].discussion_id, coders, summary, by)
    return {f["statement_id"] for f in feedback}


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
    return username(meta.get("auditor") or meta.get("auditor_id"))


def _owner(coders: dict[int, str], meta: dict, known: Known) -> User | None:
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


def _imported_feedback(
    row: Statement, owner: User, payload: dict, meta: dict, by, now: datetime
) -> dict[str, Any]:
    """The new coding's values (values_insert): its payload encoded once, for its revision too."""
    return {
        "statement_id": row.pk,
        "auditor_id": owner.pk,
        "edited_extraction": json_text(normalized(payload)),
        "status": Feedback.Status.APPROVED,
        "approved_by_id": by.pk,
        "approved_at": now,
        "approval": "imported",
        "comment": _provenance(meta),
    }


def _feedback_create(
    feedback: list[dict[str, Any]], discussion_id: int, coders: dict, summary, by
) -> None:
    """Insert the discussion's imported ground truth with its history; the stored counts and
    the metrics follow."""
    values_insert(Feedback, feedback)
    if feedback and not summary.approved_created:
        # Once per import: inter-auditor agreement is marked stale once.
        coding_changed_send(reason="coding changed")
    revisions_record(feedbacks=feedback, author=by, action="import")
    # Approved ground truth takes the other codings of its statement out of the review stream:
    # every coder's tally of the discussion, the new owner's among them.
    tallies_refresh(
        pairs={
            (discussion_id, auditor_id)
            for f in feedback
            for auditor_id in {f["auditor_id"], *coders.get(f["statement_id"], {})}
        }
    )
    summary.approved_created += len(feedback)
    room = max(LOGGED_FEEDBACK_IDS - len(summary.imported_feedback_ids), 0)
    summary.imported_feedback_ids += [f["id"] for f in feedback[:room]]


def _provenance(meta: dict) -> str:
    """What the file said about the original approval (and its comment); kept beside the
    import's own."""
    parts = [f"{key} {meta[key]}" for key in ("approved_by", "approved_at") if meta.get(key)]
    line = f"Imported ({', '.join(parts)} in the file)." if parts else "Imported."
    comment = meta.get("comment")
    return f"{line}\n{comment}" if isinstance(comment, str) and comment else line


LOGGED_FEEDBACK_IDS = 10_000  # the audit log names the first ground truths an import made
