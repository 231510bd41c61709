"""Reads and small workflows the REST API needs on top of the audit services.

Selectors (``*_list``) return querysets in a stable order (by id); the workflows keep the
existing services (``discussions_import``, ``extractions_import``, ``feedback_*``) the single
place where data is written.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from rest_framework.authtoken.models import Token

from audit.models import (
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    Statement,
)
from audit.schemas import GROUND_TRUTH_EXPORT_SCHEMA, PayloadError, PayloadIssue, format_path
from audit.services.transfer import (  # noqa: F401 (the limits are published by the API)
    MAX_EXTERNAL_ID,
    MAX_MODEL_NAME,
    MAX_ORDER,
    MAX_PROMPT_VERSION,
    MAX_SPEAKER,
    ImportSummary,
    Progress,
    discussions_import,
)
from evalsite.access import is_admin, is_auditor

_EXPORT_VALIDATOR = Draft202012Validator(GROUND_TRUTH_EXPORT_SCHEMA)


# --- discussions -------------------------------------------------------------------------------


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


@transaction.atomic
def discussion_create(
    *, data: dict[str, Any], by: AbstractBaseUser, run: ExtractionRun | None = None
) -> tuple[Discussion, bool]:
    """Create one discussion with its statements (and AI extractions) through the import.

    ``data`` is ``{"discussion": {...}, "statements": [...]}``; statements' ``pdp_deltas`` are
    stored as extractions of ``run`` (default: the "imported" run). Idempotent by external id:
    returns ``(discussion, created)``.
    """
    payload = copy.deepcopy(data)
    fields = payload.get("discussion")
    statements = payload.get("statements", [])
    if not isinstance(fields, dict):
        raise PayloadError([PayloadIssue("discussion", "expected an object")])
    external_id = fields.get("external_id") or uuid.uuid4().hex
    fields["external_id"] = str(external_id)
    fields.pop("id", None)
    if run is not None and isinstance(statements, list):
        for statement in statements:
            if isinstance(statement, dict) and statement.get("pdp_deltas") is not None:
                statement["extraction_run"] = {
                    "model_name": run.model_name,
                    "prompt_version": run.prompt_version,
                }
    summary = discussions_import(data=payload, by=by)
    discussion = Discussion.objects.get(external_id=fields["external_id"])
    return discussion, summary.discussions_created == 1


def discussion_statements(*, discussion: Discussion) -> QuerySet[Statement]:
    return discussion.statements.select_related("speaker").order_by("order", "id")


# --- ground-truth import (the export format) ----------------------------------------------------


def ground_truth_import(
    *, data: Any, by: AbstractBaseUser, progress: Progress | None = None
) -> ImportSummary:
    """Import a ground-truth export file (schema v1), validated against the published schema.
    ``progress(done, total)`` is called after each discussion (large imports run as a job:
    audit/services/import_jobs.py)."""
    errors = [leaf for e in _EXPORT_VALIDATOR.iter_errors(data) for leaf in _leaves(e)]
    errors.sort(key=lambda e: list(map(str, e.absolute_path)))
    issues = [PayloadIssue(format_path(e.absolute_path), e.message) for e in errors[:50]]
    if issues:
        raise PayloadError(issues)
    return discussions_import(data=data, by=by, progress=progress)


def _leaves(error: SchemaError) -> list[SchemaError]:
    """The specific errors under a "oneOf [X, null]": what is wrong inside X, not "matches none"."""
    if not error.context:
        return [error]
    inner = [
        e for e in error.context if not (e.validator == "type" and e.validator_value == "null")
    ]
    return [leaf for e in inner for leaf in _leaves(e)] or [error]


# --- extraction runs and extractions ------------------------------------------------------------


def extraction_runs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ExtractionRun]:
    filters = filters or {}
    qs = ExtractionRun.objects.all()
    for key in ("model_name", "prompt_version"):
        if key in filters:
            qs = qs.filter(**{key: filters[key]})
    return qs.order_by("id")


@transaction.atomic
def extraction_run_create(
    *, model_name: str, prompt_version: str, notes: str = ""
) -> tuple[ExtractionRun, bool]:
    """The run for this model and prompt version, created if new (idempotent for pipelines)."""
    run, created = ExtractionRun.objects.get_or_create(
        model_name=model_name, prompt_version=prompt_version, defaults={"notes": notes}
    )
    return run, created


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


# --- feedback ----------------------------------------------------------------------------------


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


# --- tokens ------------------------------------------------------------------------------------


@transaction.atomic
def api_token_get_or_create(*, user: AbstractBaseUser, regenerate: bool = False) -> Token:
    """The user's API token; ``regenerate`` replaces it (the old key stops working)."""
    if regenerate:
        Token.objects.filter(user=user).delete()
    token, _ = Token.objects.get_or_create(user=user)
    return token


def api_token_allowed(*, user: AbstractBaseUser) -> bool:
    """Tokens are handed to scripts: only active users in a role group get one."""
    return bool(user.is_active) and (is_admin(user) or is_auditor(user))
