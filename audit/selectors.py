"""Reads of the audit app that the pages and the API share."""

from __future__ import annotations

import json

from audit.models import Feedback, FeedbackRevision
from audit.views.display import diff_summary, field_changes


def feedback_revisions(*, feedback: Feedback) -> list[FeedbackRevision]:
    """A feedback's revisions, newest first, each with what it changed.

    Each revision gets `changes` (field by field), `summary` (one line), `first` (the first
    version folded into it), `is_current` (its payload is the one in force) and `after_json`.
    A revision's change is relative to the revision before it; a conflict's, to the payload
    it lost against (it was never applied).
    """
    revisions = list(
        feedback.revisions.select_related("author", "restored_from").order_by("version", "id")
    )
    previous: dict | None = None
    for revision in revisions:
        before = revision.before if revision.action == "conflict" else previous
        revision.changes = field_changes(before, revision.after)
        revision.summary = diff_summary(before, revision.after)
        revision.first = revision.first_version or revision.version
        revision.after_json = json.dumps(revision.after, indent=2)
        revision.is_current = False
        if revision.action != "conflict":
            previous = revision.after
    current = [r for r in revisions if r.after == feedback.edited_extraction]
    if current:
        current[-1].is_current = True
    return list(reversed(revisions))
