"""A coding's history: its revisions, each with what it changed, and restoring one."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.forms import (
    base_version,
)
from audit.models import Feedback
from audit.selectors.history import feedback_revisions
from audit.services import (
    WorkflowError,
    feedback_restore,
)
from audit.services.feedback import (
    feedback_opens_in_editor,
)
from audit.views.access import error_fragment, visible_feedback
from audit.views.editing import error_message
from evalsite.access import auditor_required, is_admin
from evalsite.http import HtmxHttpRequest
from metrics.families.payload.schema import PayloadError


def history_context(request: HtmxHttpRequest, feedback: Feedback) -> dict:
    """Revisions newest first, each with what it changed relative to the one before."""
    can_edit = feedback_opens_in_editor(feedback=feedback, user=request.user)
    return {
        "feedback": feedback,
        "statement": feedback.statement,
        "revisions": feedback_revisions(feedback=feedback),
        "can_restore": can_edit
        and (feedback.auditor_id == request.user.pk or is_admin(request.user)),
    }


@require_GET
@auditor_required
def history(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    feedback = visible_feedback(request, pk)
    template = "audit/history.html#history" if request.htmx else "audit/history.html"
    return render(request, template, history_context(request, feedback))


@require_POST
@auditor_required
def restore(request: HtmxHttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    """Make an earlier revision (or a conflicting edit that lost) the current payload."""
    feedback = visible_feedback(request, pk)
    revision = get_object_or_404(feedback.revisions, pk=revision_pk)
    try:
        feedback = feedback_restore(
            feedback=feedback, revision=revision, user=request.user,
            base_version=base_version(request.POST),
        )  # fmt: skip
    except (WorkflowError, PayloadError, ValidationError) as exc:
        status = getattr(exc, "status_code", 422 if isinstance(exc, PayloadError) else 400)
        return error_fragment(request, [error_message(exc)], status=status, target="#history-msg")
    messages.success(request, f"Restored revision {revision.label} as version {feedback.version}.")
    if request.htmx:
        return render(request, "audit/history.html#history", history_context(request, feedback))
    return redirect(reverse("audit:feedback_history", args=[feedback.pk]))
