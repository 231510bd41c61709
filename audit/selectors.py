"""Reads of the audit app that the pages and the API share: querysets in a stable order (by id),
so API pagination is stable, and the history a reviewer reads. Writes stay in the services."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from audit.models import (
    ComputeJob,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Statement,
)
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


def discussions_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Discussion]:
    filters = filters or {}
    qs = Discussion.objects.annotate(
        n_statements=Count("statements", distinct=True),
        n_approved=Count(
            "statements__feedback",
            filter=Q(statements__feedback__status=Feedback.Status.APPROVED),
            distinct=True,
        ),
    )
    if "external_id" in filters:
        qs = qs.filter(external_id=filters["external_id"])
    if filters.get("has_approved") is True:
        qs = qs.filter(n_approved__gt=0)
    elif filters.get("has_approved") is False:
        qs = qs.filter(n_approved=0)
    return qs.order_by("id")


def discussion_statements(*, discussion: Discussion) -> QuerySet[Statement]:
    return discussion.statements.select_related("speaker").order_by("order", "id")


def extraction_runs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ExtractionRun]:
    filters = filters or {}
    qs = ExtractionRun.objects.all()
    for key in ("model_name", "prompt_version"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    return qs.order_by("id")


def extractions_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Extraction]:
    filters = filters or {}
    qs = Extraction.objects.select_related("statement")
    if "run" in filters:
        qs = qs.filter(run_id=filters["run"])
    if "discussion" in filters:
        qs = qs.filter(statement__discussion_id=filters["discussion"])
    if "statement" in filters:
        qs = qs.filter(statement_id=filters["statement"])
    return qs.order_by("id")


def feedback_list(
    *, user: AbstractBaseUser, filters: dict[str, Any] | None = None
) -> QuerySet[Feedback]:
    """The feedback the user may see (auditors: their own; admins: all), filtered."""
    filters = filters or {}
    qs = Feedback.objects.visible_to(user).select_related("statement", "auditor", "approved_by")
    if "discussion" in filters:
        qs = qs.filter(statement__discussion_id=filters["discussion"])
    if "statement" in filters:
        qs = qs.filter(statement_id=filters["statement"])
    if "status" in filters:
        qs = qs.filter(status=filters["status"])
    if "auditor" in filters:
        qs = qs.filter(auditor_id=filters["auditor"])
    if "run" in filters:
        qs = qs.filter(source_extraction__run_id=filters["run"])
    return qs.order_by("id")


def compute_jobs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ComputeJob]:
    filters = filters or {}
    qs = ComputeJob.objects.all()
    for key in ("kind", "status"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    return qs.order_by("id")
