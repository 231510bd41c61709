"""The two queues: the auditor's discussions, and the admins' submitted feedback."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from audit.context_processors import unread_comments
from audit.forms import QueueFilterForm
from audit.models import Discussion, Feedback
from audit.selectors.adjudication import (
    adjudicable_statement_ids,
    statements_to_adjudicate_why,
)
from audit.selectors.lists import hidden_discussion_filter
from audit.selectors.progress import auditor_progress_stored
from audit.selectors.queues import (
    QueueDiscussion,
    discussion_queue_page,
    feedback_proposals,
    submitted_feedback_page,
    submitted_tallies,
)
from audit.selectors.stream import my_needs_changes, my_open_assignments, my_open_count
from audit.selectors.threads import UnreadComments, threads_unread
from audit.services import WorkflowError, feedback_bulk_approve
from audit.views.access import error_fragment
from audit.views.team import review_home
from evalsite.access import admin_required, auditor_required, is_admin
from evalsite.http import HtmxHttpRequest
from evalsite.params import parse_id

S = Feedback.Status
ITEM = re.compile(r"(\d{1,12}):(\d{1,9})", re.ASCII)
# Discussions per queue page: a row is 51 px tall at 1,440 px wide, so 25 fill about two
# screens; a page's cost is counting and rendering its discussions.
PAGE_SIZE = 25
# Discussion x auditor groups per page of the review queue: a group is about 264 px tall at
# 1,440 px wide, so 10 are three screens below the statements to adjudicate.
REVIEW_GROUPS = 10
# Statements to adjudicate the review queue lists (as the review home): each is aligned to say
# why it needs a decision (the matcher runs per statement), on every page of the queue.
TO_ADJUDICATE = 20


@dataclass(frozen=True)
class QueueRow:
    """One discussion of the queue with what its row shows beside the counts: its status
    (label, chip tone) and the stacked progress bar's segments."""

    discussion: QueueDiscussion
    label: str
    tone: str
    bar_sent: int  # sent but not approved
    bar_coded: int  # coded but not sent
    unread: int = 0  # comments in its statements' threads the viewer has not read

    @classmethod
    def of(cls, d: QueueDiscussion, unread: int = 0) -> QueueRow:
        label, tone = queue_status(d)
        sent, coded = d.mine_sent - d.mine_approved, d.mine_coded - d.mine_sent
        return cls(d, label, tone, sent, coded, unread)


def queue_status(d: QueueDiscussion) -> tuple[str, str]:
    """(label, chip tone) for one annotated discussion."""
    if d.mine_rejected:
        return "Needs changes", "bad"
    if d.n_subject and not d.n_left:  # as ``progress_status_filter`` says it
        return "Done", "good"
    if d.mine_coded:
        return "In progress", "warn"
    return "Not started", ""


@require_GET
@auditor_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    """Admins land on the review home (what waits for them); auditors on their queue."""
    if is_admin(request.user):
        return review_home(request)
    return _queue(request)


@require_GET
@auditor_required
def my_queue(request: HtmxHttpRequest) -> HttpResponse:
    """The queue for admins too (they land on the review home)."""
    return _queue(request)


def _queue(request: HtmxHttpRequest) -> HttpResponse:
    """My assignments first (due order), my coding sent back, then every discussion I see."""
    form = QueueFilterForm(request.GET or None)
    status, q = "", ""
    if form.is_valid():
        status, q = form.cleaned_data["status"], form.cleaned_data["q"].strip()
    page, queue = discussion_queue_page(
        user=request.user,
        visible=hidden_discussion_filter(request.user),
        status=status,
        q=q,
        page=request.GET.get("page"),
        per_page=PAGE_SIZE,
    )
    unread = unread_comments(request).by_discussion(d.pk for d in queue)
    rows = [QueueRow.of(d, unread.get(d.pk, 0)) for d in queue]
    context = {"form": form, "page": page, "rows": rows, "status": status, "q": q}
    if not request.htmx:
        context |= my_work_context(request.user, unread=unread_comments(request))
    template = "audit/home.html#queue" if request.htmx else "audit/home.html"
    return render(request, template, context)


@require_GET
@admin_required
def review_queue(request: HtmxHttpRequest) -> HttpResponse:
    auditor_id = parse_id(request.GET.get("auditor"), name="auditor")
    page, groups, submitted_count = submitted_feedback_page(
        auditor_id=auditor_id, page=request.GET.get("page"), per_page=REVIEW_GROUPS
    )
    items = [f for g in groups for f in g["items"]]
    with_work = submitted_tallies().values("auditor_id")
    auditors = get_user_model().objects.filter(pk__in=with_work)
    context = {
        "page": page,
        "groups": groups,
        "submitted_count": submitted_count,
        "proposals": feedback_proposals(),
        "to_adjudicate": statements_to_adjudicate_why(limit=TO_ADJUDICATE),
        "to_adjudicate_limit": TO_ADJUDICATE,
        "adjudicable": adjudicable_statement_ids(statement_ids=[f.statement_id for f in items]),
        "auditors": auditors.order_by("username"),
        "auditor_id": auditor_id,
    }
    template = "audit/review_queue.html#queue" if request.htmx else "audit/review_queue.html"
    return render(request, template, context)


@require_POST
@admin_required
def bulk_approve(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Approve every submitted feedback of one auditor in one discussion."""
    discussion = get_object_or_404(Discussion, pk=pk)
    auditor_id = parse_id(request.POST.get("auditor"), name="auditor", required=True)
    auditor = get_object_or_404(get_user_model(), pk=auditor_id)
    try:
        approved = feedback_bulk_approve(
            discussion=discussion,
            auditor=auditor,
            admin=request.user,
            versions=reviewed_versions(request.POST.getlist("item")),
            replace=request.POST.get("replace") == "1",
        )
    except WorkflowError as exc:
        return error_fragment(
            request, [str(exc)], status=exc.status_code, target="#review-messages"
        )
    messages.success(
        request, f"Approved {len(approved)} statements coded by {auditor.get_username()}."
    )
    if request.htmx:
        page, groups, submitted_count = submitted_feedback_page(
            auditor_id=parse_id(request.POST.get("filter_auditor"), name="filter_auditor"),
            page=request.POST.get("page"),
            per_page=REVIEW_GROUPS,
        )
        context = {
            "page": page,
            "groups": groups,
            "submitted_count": submitted_count,
            "proposals": feedback_proposals(),
        }
        return render(request, "audit/review_queue.html#queue", context)
    return redirect(reverse("audit:review_queue"))


MY_LISTED = 20


def my_work_context(user, *, unread: UnreadComments) -> dict:
    """The auditor's assignments (due order), their figures, what was sent back and the
    threads with comments they have not read."""
    assignments, needs_changes = my_open_assignments(user=user), my_needs_changes(user=user)
    return {
        "my_assignments": assignments[:MY_LISTED],
        "my_open": my_open_count(user=user),
        "me": auditor_progress_stored(auditors=[user])[0],
        "needs_changes": needs_changes[:MY_LISTED],
        "needs_changes_total": needs_changes.count(),
        "threads": threads_unread(unread=unread),
        "today": timezone.localdate(),
    }


def reviewed_versions(items: list[str]) -> dict[int, int]:
    """The bulk form's "feedback id:version" pairs; anything else is a 400."""
    versions = {}
    for raw in items:
        match = ITEM.fullmatch(raw)
        if match is None:
            raise WorkflowError(f"Expected item=FEEDBACK_ID:VERSION, got {raw[:40]!r}.")
        versions[int(match[1])] = int(match[2])
    return versions
