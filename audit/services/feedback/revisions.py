"""A coding's history: each step recorded as a revision (an autosave folds into the edit before
it), and the row lock and version check every change goes through.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from audit.derived.coding_times import revision_values_written, revisions_written
from audit.derived.tallies import coding_written
from audit.models import (
    Feedback,
    FeedbackRevision,
)
from audit.services.errors import (
    NotAllowed,
    StaleVersion,
)
from audit.signals import coding_changed_send
from evalsite.access import is_admin
from evalsite.perf.bulk import values_insert
from metrics.families.payload.schema import validate_pdp

# Revisions that change a feedback's content; their authors are its co-authors.
CONTENT_ACTIONS = ("edit", "autosave", "restore", "propose")


def revision_record(
    feedback: Feedback,
    *,
    author,
    action: str,
    before: dict | None,
    restored_from: FeedbackRevision | None = None,
) -> FeedbackRevision:
    """Record a step of the history; an autosave folds into the author's edit revision just
    before it (see _foldable), so one coding session reads as one revision, not twenty."""
    now = timezone.now()
    folded = _foldable(feedback, author=author, now=now) if action == "edit" else None
    if folded is not None:
        folded.version, folded.status = feedback.version, feedback.status
        folded.after = copy.deepcopy(feedback.edited_extraction)
        folded.saves += 1
        folded.updated_at = now
        folded.save(update_fields=["version", "status", "after", "saves", "updated_at"])
        return revision_written(folded)
    return revision_written(
        FeedbackRevision.objects.create(
            **_revision_fields(feedback, author=author, action=action, before=before, now=now),
            after=copy.deepcopy(feedback.edited_extraction),
            restored_from=restored_from,
            # A change after the first submit (the seal has lifted): marked, left out of agreement.
            after_submit=action in CONTENT_ACTIONS and feedback.submitted_extraction is not None,
        )
    )


def coding_follow(feedback: Feedback, *, before: str | None) -> None:
    """What follows a coding created (``before``: None) or its status or pending change
    changed: its stored tallies (``coding_written``) and, for a coding past draft, the
    announcement that coding changed (inter-auditor agreement reads sent codings; sent once
    per transaction)."""
    coding_written(feedback=feedback, before=before)
    if feedback.status != Feedback.Status.DRAFT:
        coding_changed_send(reason="coding changed")


def revision_written(revision: FeedbackRevision) -> FeedbackRevision:
    """Every revision written or folded into: its author's coding time follows it."""
    revisions_written(revisions=[revision])
    return revision


def revisions_record(*, feedbacks: Sequence[dict[str, Any]], author, action: str) -> None:
    """revision_record for many new feedback rows at once (an import), given as the values
    ``values_insert`` wrote them with (and their ``id``): one new revision each, written in one
    insert, its payload the feedback's own (as written). Only edits fold into an earlier
    revision, so never for an edit."""
    if action == "edit":
        raise ValueError("an edit may fold into an earlier revision: record it on its own")
    now = timezone.now()
    first = Feedback._meta.get_field("version").get_default()  # a new row's version
    revisions = [
        {
            "feedback_id": feedback["id"],
            "author_id": author.pk,
            "version": feedback.get("version", first),
            "first_version": feedback.get("version", first),
            "action": action,
            "status": feedback["status"],
            "before": None,
            "after": feedback["edited_extraction"],
            "updated_at": now,
        }
        for feedback in feedbacks
    ]
    values_insert(FeedbackRevision, revisions, now=now)
    # Their coders' time follows them, as every revision written.
    revision_values_written(coders=[(author.pk, f["auditor_id"]) for f in feedbacks], at=now)


def _revision_fields(feedback: Feedback, *, author, action: str, before: dict | None, now) -> dict:
    """A new revision's fields but its payload after the step (``after``): the feedback as it
    is now, and the payload before the step."""
    return {
        "feedback": feedback,
        "author": author,
        "version": feedback.version,
        "first_version": feedback.version,
        "action": action,
        "status": feedback.status,
        "before": before,
        "updated_at": now,
    }


def _foldable(feedback: Feedback, *, author, now) -> FeedbackRevision | None:
    """The revision an edit folds into: the feedback's latest revision if it is an edit by the
    same author, with the same status, saved at most REVISION_FOLD_SECONDS ago, and nothing
    else changed the feedback since (its version is the one just before). A submit, approval,
    rejection, conflict or restore in between is the latest revision instead, so it ends the
    fold."""
    window = settings.REVISION_FOLD_SECONDS
    latest = feedback.revisions.order_by("-id").first()
    if window <= 0 or latest is None or latest.action != "edit":
        return None
    last_save = latest.updated_at or latest.created_at
    if (
        latest.author_id != author.pk
        or latest.status != feedback.status
        or latest.version != feedback.version - 1
        or now - last_save > timedelta(seconds=window)
    ):
        return None
    return latest


def feedback_locked(feedback: Feedback, base_version: int | None) -> Feedback:
    """Reload the row under a lock and refuse a change based on an old version.

    The refusal rolls the transaction back; callers that must keep the losing edit record it
    afterwards with feedback_record_conflict.
    """
    return check_version(locked_row(feedback), base_version)


def locked_row(feedback: Feedback) -> Feedback:
    return Feedback.objects.select_for_update(no_key=True).get(pk=feedback.pk)


def check_version(locked: Feedback, base_version: int | None) -> Feedback:
    if base_version is not None and base_version != locked.version:
        raise StaleVersion(locked, base_version)
    return locked


@transaction.atomic
def feedback_record_conflict(
    *, feedback: Feedback, user: User, attempted: dict
) -> FeedbackRevision:
    """Keep an edit that lost a version race as a "conflict" revision, so nothing typed is lost.

    Call it after a save raised StaleVersion: the refused save's transaction was rolled back,
    and any revision recorded inside it with it. Recording the same edit twice is a no-op.
    The payload in force is not touched, so the owner may record even on approved feedback.
    """
    if feedback.auditor_id != user.pk and not is_admin(user):
        raise NotAllowed("You can only edit your own feedback.")
    payload = validate_pdp(attempted)
    current = Feedback.objects.select_for_update(no_key=True).get(pk=feedback.pk)
    earlier = FeedbackRevision.objects.filter(
        feedback=current, action="conflict", author=user, version=current.version
    )
    for revision in earlier:
        if revision.after == payload:
            return revision
    return revision_written(
        FeedbackRevision.objects.create(
            feedback=current,
            author=user,
            version=current.version,
            first_version=current.version,
            updated_at=timezone.now(),
            action="conflict",
            status=current.status,
            before=copy.deepcopy(current.edited_extraction),
            after=payload,
        )
    )
