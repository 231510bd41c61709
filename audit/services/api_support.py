"""Small workflows the REST API needs on top of the audit services (its reads are in
audit/selectors/queues.py); the existing services (``discussions_import``, ``extractions_import``,
``feedback_*``) stay the single place where data is written.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.authtoken.models import Token

from audit.models import Discussion, ExtractionRun
from audit.services.imports import (  # noqa: F401 (the limits are published by the API)
    MAX_EXTERNAL_ID,
    MAX_MODEL_NAME,
    MAX_ORDER,
    MAX_PROMPT_VERSION,
    MAX_SPEAKER,
    ImportRun,
    ImportSummary,
    Progress,
    discussions_import,
)
from evalsite.access import is_admin, is_auditor
from metrics.families.payload.schema import PayloadError, PayloadIssue


@transaction.atomic
def discussion_create(
    *, data: dict[str, Any], by: User, run: ExtractionRun | None = None
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
                statement["extraction_run"] = {"external_id": run.external_id}
    # Without a run the extractions go to the latest "imported · unknown" replicate, as they
    # always did for this endpoint (a pipeline's discussions of one run arrive in many requests).
    summary = discussions_import(data=payload, by=by)
    discussion = Discussion.objects.get(external_id=fields["external_id"])
    return discussion, summary.discussions_created == 1


# --- ground-truth import (the export format) ----------------------------------------------------


def ground_truth_import(
    *, data: Any, by: User | None, run: ImportRun | None = None, progress: Progress | None = None
) -> ImportSummary:
    """Import a ground-truth file (any shape the import takes: audit/services/import_shapes.py),
    checked as the command checks it. ``progress(done, total)`` is called after each discussion
    (large imports run as a job that reads the stored file as it goes: import_jobs.py)."""
    return discussions_import(data=data, by=by, run=run, progress=progress)


# --- tokens ------------------------------------------------------------------------------------


@transaction.atomic
def api_token_get_or_create(*, user: User, regenerate: bool = False) -> Token:
    """The user's API token; ``regenerate`` replaces it (the old key stops working)."""
    if regenerate:
        Token.objects.filter(user=user).delete()
    token, _ = Token.objects.get_or_create(user=user)
    return token


def api_token_allowed(*, user: User) -> bool:
    """Tokens are handed to scripts: only active users in a role group get one."""
    return bool(user.is_active) and (is_admin(user) or is_auditor(user))
