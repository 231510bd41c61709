"""Admin review of one statement: the AI extraction and every auditor's coding side by side."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Case, IntegerField, Value, When
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.display import Labels, present
from audit.forms import RejectForm
from audit.models import Adjudication, Feedback, Statement
from audit.selectors.adjudication import adjudication_codings
from audit.selectors.disagreement import statement_disagreement
from audit.selectors.queues import discussion_runs
from audit.selectors.stream import review_stream_next
from audit.services import NotReady, WorkflowError, feedback_approve, feedback_reject
from audit.services.feedback import (
    feedback_authors,
    feedback_awaits_approval,
    feedback_can_be_rejected,
    feedback_review_opened,
)
from audit.views.access import error_fragment, safe_next
from audit.views.comments import thread_context
from audit.views.discussion import card_context, problem_lines, statement_url
from audit.views.rows import (
    ai_payloads,
    choose_run,
    coded_payloads,
    statement_rows,
)
from evalsite.access import admin_required, admins
from evalsite.http import HtmxHttpRequest, page_redirect
from evalsite.params import parse_id

S = Feedback.Status
# Submitted first: that is what the admin came for.
STATUS_ORDER = Case(
    When(status=S.SUBMITTED, then=Value(0)),
    When(status=S.APPROVED, then=Value(1)),
    When(status=S.REJECTED, then=Value(2)),
    default=Value(3),
    output_field=IntegerField(),
)


def review_context(request: HtmxHttpRequest, statement: Statement) -> dict:
    runs = discussion_runs(discussion=statement.discussion)
    run = choose_run(request, runs)
    rows = statement_rows(request, statement, run)
    labels = Labels()
    for payload in coded_payloads(rows)[:-1]:
        labels.feed(payload)
    ai = rows[-1].ai_payload
    feedback = statement.feedback.select_related("auditor", "approved_by", "proposed_by").order_by(
        STATUS_ORDER, "auditor__username"
    )
    columns = [
        {
            "feedback": f,
            "view": present(f.edited_extraction, labels.copy().feed(f.edited_extraction), base=ai),
        }
        for f in feedback
    ]
    submitted = [c for c in columns if c["feedback"].status == S.SUBMITTED]
    approved = next((c["feedback"] for c in columns if c["feedback"].status == S.APPROVED), None)
    alone = not admins().filter(is_active=True).exclude(pk=request.user.pk).exists()
    credits = _adjudication_credits([c["feedback"].pk for c in columns])
    for c in columns:
        f = c["feedback"]
        c["adjudication"] = credits.get(f.pk)
        c["replaces"] = approved if approved and approved.pk != f.pk else None
        c["is_author"] = request.user.pk in feedback_authors(feedback=f)
        c["self_approval"] = c["is_author"] and alone
        c["can_approve"] = feedback_awaits_approval(feedback=f)
        c["can_reject"] = feedback_can_be_rejected(feedback=f)
        if f.has_proposal:
            proposal = f.proposed_extraction
            c["proposal_view"] = present(
                proposal, labels.copy().feed(proposal), base=f.edited_extraction
            )
    return {
        "statement": statement,
        "discussion": statement.discussion,
        "row": rows[-1],
        "run": run,
        "runs": runs,
        "place_url": statement_url(statement, run),
        "ai_view": present(ai, _ai_labels(rows)),
        "columns": columns,
        "quick_approve": submitted[0]["feedback"] if len(submitted) == 1 else None,
        "approved": approved,
        "next_statement": _next_waiting(statement),
        "disagreement": statement_disagreement(statement_id=statement.pk),
        "n_to_adjudicate": adjudication_codings(statement_id=statement.pk).count(),
        **thread_context(request, statement),
    }


def _adjudication_credits(feedback_ids: list[int]) -> dict[int, dict]:
    """Per adjudicated feedback: its coders and how many items were unanimous vs adjudicated."""
    rows = Adjudication.objects.filter(feedback_id__in=feedback_ids).prefetch_related("coders")
    return {
        a.feedback_id: {
            "coder_names": sorted(u.get_username() for u in a.coders.all()),
            "unanimous_items": a.unanimous_items,
            "adjudicated_items": a.adjudicated_items,
        }
        for a in rows
        if a.feedback_id is not None
    }


def _next_waiting(statement: Statement) -> int | None:
    """The next statement of the review stream, if it is another one."""
    found = review_stream_next(after=statement)
    return found.pk if found is not None and found.pk != statement.pk else None


def _ai_labels(rows: list) -> Labels:
    """The AI column names people as the AI did, never with an auditor's corrections."""
    labels = Labels()
    for payload in ai_payloads(rows):
        labels.feed(payload)
    return labels


@require_GET
@admin_required
def statement_review(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    statement = get_object_or_404(Statement.objects.select_related("discussion", "speaker"), pk=pk)
    # Opened by a reviewer: the submissions shown can no longer be taken back by their auditors.
    feedback_review_opened(statement=statement, reviewer=request.user)
    context = review_context(request, statement)
    template = "audit/review.html#review" if request.htmx else "audit/review.html"
    return render(request, template, context)


def _reviewed(request: HtmxHttpRequest, feedback: Feedback, message: str) -> HttpResponse:
    """After approve/reject: the fragment the button came from (card or review), or a redirect."""
    statement = feedback.statement
    if not request.htmx:
        messages.success(request, message)
        default = reverse("audit:statement_review", args=[statement.pk])
        return redirect(safe_next(request, default))
    if request.POST.get("view") == "card":
        return render(request, "audit/components/card.html#card", card_context(request, statement))
    context = review_context(request, statement)
    context["notice"] = message
    return render(request, "audit/review.html#review", context)


def _target(request: HtmxHttpRequest, feedback: Feedback) -> str:
    prefix = "card-msg" if request.POST.get("view") == "card" else "review-msg"
    return f"#{prefix}-{feedback.statement_id}"


def _version(request: HtmxHttpRequest) -> int | None:
    return parse_id(request.POST.get("version"), name="version")


@require_POST
@admin_required
def approve(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Approve the version the admin reviewed; replacing approved ground truth is confirmed."""
    feedback = get_object_or_404(Feedback.objects.select_related("statement", "auditor"), pk=pk)
    version = _version(request)
    try:
        if version is None:
            raise WorkflowError("Name the version you reviewed (version=N): nothing was approved.")
        feedback = feedback_approve(
            feedback=feedback,
            admin=request.user,
            base_version=version,
            replace=request.POST.get("replace") == "1",
            self_approval_reason=request.POST.get("self_approval_reason", ""),
        )
    except WorkflowError as exc:
        if isinstance(exc, NotReady):  # each problem on its own line, as the coder reads it
            lines = problem_lines(request, feedback, exc.issues)
            return error_fragment(
                request, lines, status=exc.status_code,
                target=_target(request, feedback), extra={"heading": exc.detail},
            )  # fmt: skip
        return error_fragment(
            request, [str(exc)], status=exc.status_code, target=_target(request, feedback)
        )
    message = f"Approved {feedback.auditor.get_username()}'s coding as ground truth."
    if request.POST.get("and_next") == "1":
        following = _next_waiting(feedback.statement)
        if following is not None:
            return _open_review(request, following, message)
        message += " Nothing else waits for review."
    return _reviewed(request, feedback, message)


def _open_review(request: HtmxHttpRequest, statement_id: int, message: str) -> HttpResponse:
    """Approve-and-next: the next statement of the review stream, as a whole new page."""
    messages.success(request, message)
    target = reverse("audit:statement_review", args=[statement_id])
    return page_redirect(request, target)


@require_POST
@admin_required
def reject(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Back to the auditor as "needs changes", with the reason they will see."""
    feedback = get_object_or_404(Feedback.objects.select_related("statement", "auditor"), pk=pk)
    form = RejectForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("A rejection needs a reason for the auditor.")
        feedback = feedback_reject(
            feedback=feedback, admin=request.user, reason=form.cleaned_data["reason"],
            base_version=_version(request),
        )  # fmt: skip
    except (WorkflowError, ValidationError) as exc:
        message = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        status = getattr(exc, "status_code", 422)
        return error_fragment(request, [message], status=status, target=_target(request, feedback))
    return _reviewed(
        request, feedback, f"Sent back to {feedback.auditor.get_username()} with your reason."
    )
