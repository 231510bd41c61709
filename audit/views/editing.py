"""Coding a statement: start, edit (form or raw JSON), autosave, submit and take back a
submission. The editor's context is built in ``audit.views.editor``; the history screen is
``audit.views.history``."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.display import (
    json_problem_sentence,
    readable_labels,
)
from audit.forms import (
    apply_op,
    base_version,
    field_name,
    parse_json_payload,
    payload_from_post,
    reviewer_note,
)
from audit.models import Feedback, Statement
from audit.selectors.queues import discussion_runs
from audit.services import (
    NotReady,
    StaleVersion,
    WorkflowError,
    feedback_problems,
    feedback_record_conflict,
    feedback_save,
    feedback_start,
    feedback_submit,
    feedback_warnings,
)
from audit.services.feedback import (
    feedback_opens_in_editor,
    feedback_submit_next,
    feedback_unsubmit,
    feedback_unsubmit_refusal,
)
from audit.views.access import error_fragment, safe_next, visible_feedback
from audit.views.discussion import card_context, earlier_labels, problem_lines, statement_url
from audit.views.editor import coding_summary, editor_card, marked, row_errors
from audit.views.rows import choose_run, coded_payloads
from audit.views.team import next_editor
from evalsite.access import auditor_required
from evalsite.http import HtmxHttpRequest
from metrics.families.payload.edits import mark_edited
from metrics.families.payload.items import ENTITY_KINDS
from metrics.families.payload.schema import PayloadError, validate_pdp

# "submit" stays on the statement; "submit_next" then opens the next one that needs me.
SUBMIT_OPS = ("submit", "submit_next")


def _status_target(feedback: Feedback) -> str:
    return f"#save-status-{feedback.pk}"


def workflow_error(request: HtmxHttpRequest, exc: Exception, feedback: Feedback) -> HttpResponse:
    """Say what went wrong where the save status shows; the form keeps what was typed."""
    target = _status_target(feedback)
    if isinstance(exc, StaleVersion):
        latest = exc.feedback.revisions.exclude(action="conflict").select_related("author").first()
        extra: dict[str, Any] = {
            "feedback": exc.feedback,
            "changed_by": latest.author if latest else None,
        }
        response = error_fragment(
            request, [str(exc)], status=409, target=target,
            template="audit/components/messages.html#conflict", extra=extra,
        )  # fmt: skip
        response["HX-Trigger"] = json.dumps({"audit:conflict": {"feedback": feedback.pk}})
        return response
    if isinstance(exc, PayloadError):
        fields = [field_name(issue.path) for issue in exc.issues if issue.path]
        extra = {"feedback": feedback, "fields": " ".join(fields)}
        lines = exc.messages()
        if isinstance(exc, NotReady):
            extra["heading"] = f"Saved · v{feedback.version}, not submitted. {exc.detail}"
            extra["row_errors"] = row_errors(feedback, exc.issues)
            # The edit was saved as a new version: the form goes on from it.
            extra["version_oob"] = True
            lines = problem_lines(request, feedback, exc.issues)
        return error_fragment(request, lines, status=422, target=target, extra=extra)
    status = getattr(exc, "status_code", 400)
    return error_fragment(
        request, [error_message(exc)], status=status, target=target, extra={"feedback": feedback}
    )


def error_message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc)


@require_POST
@auditor_required
def start(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Start coding a statement from the AI extraction (or reopen my existing draft)."""
    statement = get_object_or_404(Statement.objects.select_related("discussion", "speaker"), pk=pk)
    run = _run(request, statement)
    try:
        feedback = feedback_start(statement=statement, auditor=request.user, run=run)
    except WorkflowError as exc:
        return error_fragment(request, [str(exc)], status=exc.status_code, target=f"#card-msg-{pk}")
    if request.htmx:
        return editor_card(request, feedback)
    return redirect(_edit_url(feedback, run))


def _run(request: HtmxHttpRequest, statement: Statement):
    return choose_run(request, discussion_runs(discussion=statement.discussion))


def _edit_url(feedback: Feedback, run=None) -> str:
    url = reverse("audit:feedback_edit", args=[feedback.pk])
    return f"{url}?run={run.pk}" if run else url


@require_GET
@auditor_required
def edit(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The editor: in place on the discussion page (htmx), or as its own page."""
    feedback = visible_feedback(request, pk)
    if not feedback_opens_in_editor(feedback=feedback, user=request.user):
        # Approved ground truth is read-only for auditors: show the card instead.
        if request.htmx:
            context = card_context(request, feedback.statement)
            return render(request, "audit/components/card.html#card", context)
        return redirect(reverse("audit:statement", args=[feedback.statement_id]))
    if request.htmx:
        return editor_card(request, feedback)
    return editor_card(
        request, feedback, template="audit/statement.html",
        extra={"just_submitted": _just_submitted(request)},
    )  # fmt: skip


def _just_submitted(request: HtmxHttpRequest) -> Feedback | None:
    """The coding "submit and next" has just sent (?submitted=<id>), while its auditor may
    still take the submit back: the page offers "Undo submit" for it."""
    ident = request.GET.get("submitted", "")
    if not ident.isascii() or not ident.isdigit() or len(ident) > 12:
        return None
    found = Feedback.objects.filter(pk=int(ident), auditor=request.user).first()
    if found is None or feedback_unsubmit_refusal(feedback=found, user=request.user):
        return None
    return found


@require_POST
@auditor_required
def unsubmit(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Undo submit: the auditor takes their submission back while no reviewer has opened it."""
    feedback = visible_feedback(request, pk)
    try:
        feedback = feedback_unsubmit(
            feedback=feedback, user=request.user, base_version=base_version(request.POST)
        )
    except (WorkflowError, ValidationError) as exc:
        target = f"#card-msg-{feedback.statement_id}"
        status = getattr(exc, "status_code", 400)
        return error_fragment(request, [error_message(exc)], status=status, target=target)
    messages.success(
        request, f"Submit of statement #{feedback.statement.order} undone: it is a draft again."
    )
    if request.htmx and not request.POST.get("next"):
        return editor_card(request, feedback)
    return redirect(safe_next(request, _edit_url(feedback)))


@require_POST
@auditor_required
def save(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Autosave and the editor's buttons: every request carries the whole form."""
    feedback = visible_feedback(request, pk)
    op = request.POST.get("op", "save")
    stored = feedback.edited_extraction
    payload = payload_from_post(request.POST, stored)
    if op not in ("save", *SUBMIT_OPS):
        context = card_context(request, feedback.statement, owner=feedback.auditor)
        payload = apply_op(payload, op, request.POST, known=coded_payloads(context["rows"]))
    payload = mark_edited(stored, payload)
    saved, following = feedback, None
    try:
        saved = _save_form(request, feedback, payload)
        if op == "submit_next":
            saved, following = feedback_submit_next(
                feedback=saved, user=request.user, base_version=saved.version
            )
        elif op in SUBMIT_OPS:
            saved = feedback_submit(feedback=saved, user=request.user, base_version=saved.version)
    except NotReady as exc:
        # The edit was saved; only the submit is refused, with each problem at its field.
        if not request.htmx:
            return _editor_page_error(request, saved, saved.edited_extraction, exc)
        return workflow_error(request, exc, saved)
    except (WorkflowError, PayloadError, ValidationError) as exc:
        if isinstance(exc, StaleVersion):
            keep_losing_edit(request, exc, payload)
        if not request.htmx:
            return _editor_page_error(request, feedback, payload, exc)
        return workflow_error(request, exc, feedback)
    return _saved_reply(request, saved, stored, op, following)


def keep_losing_edit(request: HtmxHttpRequest, exc: StaleVersion, payload: dict) -> None:
    """The refused save rolled back; store the user's edit as a conflict revision instead."""
    if payload != exc.feedback.edited_extraction:
        feedback_record_conflict(feedback=exc.feedback, user=request.user, attempted=payload)


def _save_form(request: HtmxHttpRequest, feedback: Feedback, payload: dict) -> Feedback:
    """The service makes an unchanged form (a focus change, a repeated autosave) no new version."""
    return feedback_save(
        feedback=feedback, user=request.user, edited_extraction=payload,
        base_version=base_version(request.POST), comment=reviewer_note(request.POST),
    )  # fmt: skip


def _saved_reply(
    request: HtmxHttpRequest, saved: Feedback, before: dict, op: str, following: Feedback | None
) -> HttpResponse:
    if op == "submit_next":
        messages.success(request, f"Submitted statement #{saved.statement.order}.")
        return next_editor(request, following, submitted=saved)
    if not request.htmx:
        run = _run(request, saved.statement)
        if op == "submit":
            messages.success(request, "Submitted for review.")
            return redirect(statement_url(saved.statement, run))
        messages.success(request, f"Saved (version {saved.version}).")
        return redirect(_edit_url(saved, run))
    if op == "submit":
        return render(
            request, "audit/components/card.html#card", card_context(request, saved.statement)
        )
    if op != "save":
        return editor_card(request, saved)
    problems = feedback_problems(feedback=saved)
    warnings = feedback_warnings(feedback=saved)
    context = {
        "feedback": saved,
        "confidences": _new_confidences(before, saved.edited_extraction),
        "json_text": json.dumps(saved.edited_extraction, indent=2),
        "problems": problems,
        "warnings": warnings,
        "fields": " ".join(field_name(problem.path) for problem in problems),
        "row_errors": row_errors(saved, marked(warnings) + problems),
        "summary": coding_summary(saved, saved.edited_extraction, len(problems)),
    }
    return render(request, "audit/components/editor.html#saved", context)


def _new_confidences(before: dict, after: dict) -> list[tuple[str, Any, Any]]:
    """(kind, id, confidence) of items whose confidence the save changed, for in-place update."""
    changed = []
    for kind in ENTITY_KINDS:
        old = {i.get("id"): i.get("confidence") for i in before.get(kind) or []}
        for item in after.get(kind) or []:
            if old.get(item.get("id")) != item.get("confidence"):
                changed.append((kind, item.get("id"), item.get("confidence")))
    return changed


def _editor_page_error(request, feedback, payload, exc) -> HttpResponse:
    """Without JavaScript: the editor page again, with the input as typed and the problem."""
    error = exc if isinstance(exc, PayloadError) and not isinstance(exc, NotReady) else None
    if error is None:
        # A refused submit: the problems show at their fields (see build_editor).
        messages.error(request, exc.detail if isinstance(exc, NotReady) else error_message(exc))
    status = 422 if isinstance(exc, PayloadError) else getattr(exc, "status_code", 400)
    return editor_card(
        request, feedback, payload=payload, error=error, status=status,
        template="audit/statement.html",
    )  # fmt: skip


@require_POST
@auditor_required
def save_json(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The raw JSON editor, validated by the same schema as everything else."""
    feedback = visible_feedback(request, pk)
    target = f"#json-status-{feedback.pk}"
    data: Any = None
    try:
        data = parse_json_payload(request.POST.get("payload", ""))
        payload = mark_edited(feedback.edited_extraction, validate_pdp(data))
        saved = _save_form(request, feedback, payload)
    except PayloadError as exc:
        return error_fragment(
            request, json_problems(request, feedback, exc, data), status=422, target=target
        )
    except (WorkflowError, ValidationError) as exc:
        if isinstance(exc, StaleVersion):
            keep_losing_edit(request, exc, payload)
            return workflow_error(request, exc, feedback)
        return error_fragment(
            request, [error_message(exc)], status=getattr(exc, "status_code", 400), target=target
        )
    if request.htmx:
        return editor_card(request, saved)
    messages.success(request, f"Saved the JSON (version {saved.version}).")
    return redirect(_edit_url(saved))


def json_problems(
    request: HtmxHttpRequest, feedback: Feedback, exc: PayloadError, data: Any
) -> list[str]:
    """The JSON editor's problems as sentences about the items they sit in, with where each
    is in the JSON ("Emily Walker, name: text is too long (at people[2].name)")."""
    if not any(issue.path for issue in exc.issues):  # the text itself: syntax, nesting
        return exc.messages()
    labels = readable_labels(data, earlier_labels(request, feedback))
    return [json_problem_sentence(i.path, i.message, data, labels) for i in exc.issues]


@require_POST
@auditor_required
def submit(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    feedback = visible_feedback(request, pk)
    try:
        feedback = feedback_submit(
            feedback=feedback, user=request.user, base_version=base_version(request.POST)
        )
    except (WorkflowError, ValidationError) as exc:
        target = f"#card-msg-{feedback.statement_id}"
        status = getattr(exc, "status_code", 400)
        if isinstance(exc, NotReady):
            extra = {"heading": exc.detail}
            lines = problem_lines(request, feedback, exc.issues)
            return error_fragment(request, lines, status=422, target=target, extra=extra)
        return error_fragment(request, [error_message(exc)], status=status, target=target)
    if request.htmx:
        return render(
            request, "audit/components/card.html#card", card_context(request, feedback.statement)
        )
    messages.success(request, "Submitted for review.")
    return redirect(safe_next(request, statement_url(feedback.statement)))
