"""Comment threads of statements, and the inbox (unread threads and mentions)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from audit.context_processors import unread_comments, unread_comments_thread_read
from audit.models import Feedback, Statement
from audit.selectors.threads import comments_visible_to, notifications_list, threads_unread
from audit.services import WorkflowError
from audit.services.comments import comment_add, thread_mark_read
from evalsite.access import auditor_required, is_admin
from evalsite.http import HtmxHttpRequest, error_fragment
from evalsite.params import parse_id

NOTICES_LISTED = 50


def thread_context(request: HtmxHttpRequest, statement: Statement) -> dict:
    """A statement's thread as the user may read it (reading it marks it read), and which
    coding they may comment on (their own; admins: any)."""
    user = request.user
    comments = list(comments_visible_to(user=user, statement=statement))
    thread_mark_read(statement=statement, user=user)
    unread_comments_thread_read(request, statement.pk)  # the header counts it read
    codings = statement.feedback.select_related("auditor").order_by("auditor__username")
    if not is_admin(user):
        codings = codings.filter(auditor=user)
    return {"statement": statement, "comments": comments, "codings": list(codings)}


@require_http_methods(["GET", "POST"])
@auditor_required
def thread(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """GET: the thread (its own page, or the fragment for htmx). POST: add a comment, then the
    updated thread."""
    statement = get_object_or_404(Statement.objects.select_related("discussion", "speaker"), pk=pk)
    if request.method == "POST":
        try:
            feedback = _about(request, statement)
            comment = comment_add(
                statement=statement,
                author=request.user,
                body=request.POST.get("body", ""),
                feedback=feedback,
            )
        except WorkflowError as exc:
            return error_fragment(
                request, [str(exc)], status=exc.status_code, target=f"#thread-msg-{statement.pk}"
            )
        if not request.htmx:
            added = comment.created  # type: ignore[attr-defined]
            messages.success(request, "Comment added." if added else "Comment already added.")
            return redirect(reverse("audit:thread", args=[statement.pk]))
    context = thread_context(request, statement)
    if request.htmx:
        return render(request, "audit/components/thread.html#thread", context)
    return render(request, "audit/thread.html", context)


def _about(request: HtmxHttpRequest, statement: Statement) -> Feedback | None:
    """The coding a comment is about (``about`` = its id), or None: the whole statement."""
    feedback_id = parse_id(request.POST.get("about"), name="about")
    if feedback_id is None:
        return None
    found = Feedback.objects.visible_to(request.user).filter(pk=feedback_id).first()
    if found is None:
        raise WorkflowError(f"about: no coding {feedback_id} of yours on this statement.")
    return found


@require_GET
@auditor_required
def inbox(request: HtmxHttpRequest) -> HttpResponse:
    context = {
        "threads": threads_unread(unread=unread_comments(request)),
        "notices": notifications_list(user=request.user)[:NOTICES_LISTED],
    }
    return render(request, "audit/inbox.html", context)
