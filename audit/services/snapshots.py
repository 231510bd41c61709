"""Frozen ground truth: an admin freezes the approved ground truth as a named snapshot.

Freezing writes, in one transaction, every subject statement of the discussions with approved
ground truth as a ``SnapshotCoding`` (its approved payload, or none) and the export file of that
ground truth (the export format, without AI extractions), built from the very codings recorded.
Nothing changes a snapshot afterwards: the export of a snapshot is its stored file, byte for
byte, whatever happened to live ground truth since. Deleting one is a logged admin act.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import Counter
from typing import IO, Any

from django.contrib.auth.models import User
from django.core.files import File
from django.db import IntegrityError, transaction

from audit.models import Feedback, GroundTruthSnapshot, SnapshotCoding, Statement
from audit.services.audit_log import Action, audit_log_record
from audit.services.errors import NotAllowed, WrongState
from audit.services.exports import NothingToExport, ground_truth_frozen_text
from evalsite.access import is_admin
from evalsite.post_commit import after_commit
from metrics.families.payload.items import ENTITY_KINDS, entity_items
from metrics.families.payload.schema import PayloadError, PayloadIssue

MAX_NAME = 100
MAX_NOTE = 10_000
WRITE_BATCH = 1000


def _text_issues(name: Any, note: Any) -> list[PayloadIssue]:
    issues = []
    if not isinstance(name, str) or not name.strip():
        issues.append(PayloadIssue("name", "expected a non-empty name, e.g. 'GT v12'"))
    elif len(name.strip()) > MAX_NAME or "\x00" in name:
        issues.append(PayloadIssue("name", f"a name of at most {MAX_NAME} characters, no NUL"))
    if not isinstance(note, str) or len(note) > MAX_NOTE or "\x00" in note:
        issues.append(PayloadIssue("note", f"a text of at most {MAX_NOTE} characters, no NUL"))
    return issues


class _Recorder:
    """Writes a snapshot's codings as the export reads them, and counts what it froze."""

    def __init__(self, snapshot: GroundTruthSnapshot):
        self.snapshot = snapshot
        self.counts: Counter[str] = Counter()
        self.pending: list[SnapshotCoding] = []

    def __call__(self, statements: list[Statement], approved: dict[int, Feedback]) -> None:
        subjects = [s for s in statements if s.is_subject]
        codings = [approved.get(s.pk) for s in subjects]
        self.counts["discussions"] += 1
        self.counts["complete_discussions"] += int(bool(subjects) and all(codings))
        for statement, feedback in zip(subjects, codings, strict=True):
            self.pending.append(self._coding(statement, feedback))
        if len(self.pending) >= WRITE_BATCH:
            self.flush()

    def _coding(self, statement: Statement, feedback: Feedback | None) -> SnapshotCoding:
        if feedback is not None:
            self.counts["codings"] += 1
            for kind in ENTITY_KINDS:
                self.counts[kind] += len(entity_items(feedback.edited_extraction, kind))
        return SnapshotCoding(
            snapshot=self.snapshot,
            statement_id=statement.pk,
            discussion_id=statement.discussion_id,
            order=statement.order,
            feedback_id=feedback.pk if feedback else None,
            version=feedback.version if feedback else None,
            payload=feedback.edited_extraction if feedback else None,
        )

    def flush(self) -> None:
        SnapshotCoding.objects.bulk_create(self.pending, batch_size=WRITE_BATCH)
        self.pending = []


@transaction.atomic
def snapshot_freeze(*, name: Any, note: Any = "", by: User) -> GroundTruthSnapshot:
    """Freeze the approved ground truth as it is now under ``name`` (unique)."""
    if not is_admin(by):
        raise NotAllowed("Only admins freeze ground truth.")
    issues = _text_issues(name, note)
    if issues:
        raise PayloadError(issues)
    name = name.strip()
    try:
        with transaction.atomic():
            snapshot = GroundTruthSnapshot.objects.create(
                name=name, note=note, created_by=by, created_by_name=by.get_username()
            )
    except IntegrityError:
        raise WrongState(
            f"A snapshot named {name!r} exists already; choose another name."
        ) from None
    recorder = _Recorder(snapshot)
    try:
        pieces = ground_truth_frozen_text(record=recorder)
        digest, size = _file_write(snapshot, pieces)
    except NothingToExport:
        raise WrongState("There is no approved ground truth to freeze yet.") from None
    recorder.flush()
    counts = recorder.counts
    GroundTruthSnapshot.objects.filter(pk=snapshot.pk).update(
        export_file=snapshot.export_file.name,
        export_sha256=digest,
        export_size=size,
        discussions=counts["discussions"],
        complete_discussions=counts["complete_discussions"],
        codings=counts["codings"],
        items={kind: counts[kind] for kind in ENTITY_KINDS},
    )
    snapshot.refresh_from_db()
    _log(snapshot, by, Action.SNAPSHOT_FREEZE, f"Froze approved ground truth as {name}.")
    return snapshot


def _file_write(snapshot: GroundTruthSnapshot, pieces: Any) -> tuple[str, int]:
    """The export written to the storage as it is produced; its SHA-256 and size."""
    digest, size = hashlib.sha256(), 0
    with tempfile.TemporaryFile() as spool:
        for piece in pieces:
            data = piece.encode("utf-8")
            digest.update(data)
            size += len(data)
            spool.write(data)
        spool.seek(0)
        filename = f"ground-truth-snapshot-{snapshot.pk}-{_slug(snapshot.name)}.json"
        snapshot.export_file.save(filename, File(spool), save=False)
    return digest.hexdigest(), size


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:60] or "snapshot"


def snapshot_export_open(*, snapshot: GroundTruthSnapshot) -> IO[bytes]:
    """The snapshot's export file, as written when it was frozen."""
    return snapshot.export_file.open("rb")


def snapshot_export_filename(snapshot: GroundTruthSnapshot) -> str:
    return f"ground-truth-{_slug(snapshot.name)}.json"


@transaction.atomic
def snapshot_delete(*, snapshot: GroundTruthSnapshot, by: User, reason: str = "") -> None:
    """Delete a snapshot, its codings and the figures computed on it; logged with what it was
    (name, counts, the export's SHA-256) and why."""
    if not is_admin(by):
        raise NotAllowed("Only admins delete snapshots.")
    if not isinstance(reason, str) or len(reason) > MAX_NOTE or "\x00" in reason:
        raise PayloadError([PayloadIssue("reason", f"a text of at most {MAX_NOTE} characters")])
    message = f"Deleted the ground-truth snapshot {snapshot.name}"
    _log(snapshot, by, Action.SNAPSHOT_DELETE, message + (f": {reason}" if reason else "."))
    file_name = snapshot.export_file.name
    storage = snapshot.export_file.storage
    snapshot.delete()
    if file_name:
        after_commit(lambda: storage.delete(file_name))


def _log(snapshot: GroundTruthSnapshot, by: User, action: str, message: str) -> None:
    audit_log_record(
        actor=by,
        action=action,
        object_type="snapshot",
        object_id=str(snapshot.pk),
        message=message,
        details={
            "name": snapshot.name,
            "note": snapshot.note,
            "created_by": snapshot.created_by_name,
            "created_at": snapshot.created_at.isoformat(),
            "discussions": snapshot.discussions,
            "complete_discussions": snapshot.complete_discussions,
            "codings": snapshot.codings,
            "items": snapshot.items,
            "export_sha256": snapshot.export_sha256,
        },
    )
