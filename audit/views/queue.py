"""The two queues: the auditor's discussions, and the admins' submitted feedback."""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.forms import QueueFilterForm
from audit.models import Discussion, Feedback, Speaker, Statement
from audit.services import WorkflowError, feedback_bulk_approve
from audit.views.access import error_fragment
from evalsite.access import admin_required, auditor_required
from evalsite.params import parse_id

S = Feedback.Status
ITEM = re.compile(r"(\d{1,12}):(\d{1,9})", re.ASCII)
SENT = (S.SUBMITTED, S.APPROVED)
PAGE_SIZE = 50


def queue_for(user) -> QuerySet[Discussion]:
    """Discussions with per-user and overall progress counts, in one query."""
    subject = Q(statements__speaker__type=Speaker.Type.SUBJECT)
    mine = Q(statements__feedback__auditor=user)
    next_uncoded = (
        Statement.objects.subjects()
        .filter(discussion=OuterRef("pk"))
        .exclude(feedback__auditor=user)
        .order_by("order")
        .values("pk")[:1]
    )
    return Discussion.objects.annotate(
        n_subject=Count("statements", filter=subject, distinct=True),
        mine_coded=Count("statements__feedback", filter=mine, distinct=True),
        mine_sent=Count(
            "statements__feedback", filter=mine & Q(statements__feedback__status__in=SENT), distinct=True
        ),
        mine_approved=Count(
            "statements__feedback", filter=mine & Q(statements__feedback__status=S.APPROVED), distinct=True
        ),
        mine_rejected=Count(
            "statements__feedback", filter=mine & Q(statements__feedback__status=S.REJECTED), distinct=True
        ),
        all_coded=Count("statements", filter=Q(statements__feedback__isnull=False), distinct=True),
        all_sent=Count("statements", filter=Q(statements__feedback__status__in=SENT), distinct=True),
        all_approved=Count("statements", filter=Q(statements__feedback__status=S.APPROVED), distinct=True),
        next_uncoded=Subquery(next_uncoded),
    )  # fmt: skip


def filter_queue(queryset: QuerySet[Discussion], status: str, q: str) -> QuerySet[Discussion]:
    """Filter by progress; done means every subject statement is submitted (or approved) by me."""
    if q:
        queryset = queryset.filter(summary__icontains=q)
    if status == "not_started":
        queryset = queryset.filter(mine_coded=0)
    elif status == "needs_changes":
        queryset = queryset.filter(mine_rejected__gt=0)
    elif status == "done":
        queryset = queryset.filter(n_subject__gt=0, mine_sent__gte=F("n_subject"))
    elif status == "in_progress":
        queryset = queryset.filter(mine_coded__gt=0, mine_rejected=0, mine_sent__lt=F("n_subject"))
    return queryset


def queue_status(d: Discussion) -> tuple[str, str]:
    """(label, chip tone) for one annotated discussion."""
    if d.mine_rejected:
        return "Needs changes", "bad"
    if d.n_subject and d.mine_sent >= d.n_subject:
        return "Done", "good"
    if d.mine_coded:
        return "In progress", "warn"
    return "Not started", ""


@require_GET
@auditor_required
def home(request: HttpRequest) -> HttpResponse:
    form = QueueFilterForm(request.GET or None)
    status, q = "", ""
    if form.is_valid():
        status, q = form.cleaned_data["status"], form.cleaned_data["q"].strip()
    discussions = filter_queue(queue_for(request.user), status, q).order_by("id")
    page = Paginator(discussions, PAGE_SIZE).get_page(request.GET.get("page"))
    for d in page:
        d.queue_label, d.queue_tone = queue_status(d)
        # Stacked progress bar segments: approved, then sent but not approved, then drafts.
        d.bar_sent, d.bar_coded = d.mine_sent - d.mine_approved, d.mine_coded - d.mine_sent
    context = {"form": form, "page": page, "status": status, "q": q}
    template = "audit/home.html#queue" if request.htmx else "audit/home.html"
    return render(request, template, context)


def review_groups(auditor_id: int | None) -> tuple[list[dict], list[Feedback]]:
    """Submitted feedback grouped per discussion and auditor (bulk approval works on groups).

    Each item knows whether its statement already has approved ground truth (``replaces``),
    which approving it would replace.
    """
    approved_elsewhere = Feedback.objects.filter(
        statement_id=OuterRef("statement_id"), status=S.APPROVED
    ).exclude(pk=OuterRef("pk"))
    submitted = Feedback.objects.filter(status=S.SUBMITTED).annotate(
        replaces=Subquery(approved_elsewhere.values("auditor__username")[:1])
    )
    if auditor_id:
        submitted = submitted.filter(auditor_id=auditor_id)
    items = list(
        submitted.select_related("statement__discussion", "auditor").order_by(
            "statement__discussion_id", "auditor_id", "statement__order"
        )[:1000]
    )
    groups: dict[tuple[int, int], dict] = {}
    for f in items:
        key = (f.statement.discussion_id, f.auditor_id)
        group = groups.setdefault(
            key,
            {
                "discussion": f.statement.discussion,
                "auditor": f.auditor,
                "items": [],
                "n_replace": 0,
            },
        )
        group["items"].append(f)
        group["n_replace"] += bool(f.replaces)
    return list(groups.values()), items


def proposals() -> QuerySet[Feedback]:
    """Changes to approved ground truth waiting for another admin."""
    return (
        Feedback.objects.filter(status=S.APPROVED, proposed_extraction__isnull=False)
        .select_related("statement__discussion", "auditor", "proposed_by")
        .order_by("statement__discussion_id", "statement__order")
    )


@require_GET
@admin_required
def review_queue(request: HttpRequest) -> HttpResponse:
    auditor_id = parse_id(request.GET.get("auditor"), name="auditor")
    groups, items = review_groups(auditor_id)
    auditors = get_user_model().objects.filter(feedback__status=S.SUBMITTED).distinct()
    context = {
        "groups": groups,
        "submitted_count": len(items),
        "proposals": proposals(),
        "auditors": auditors.order_by("username"),
        "auditor_id": auditor_id,
    }
    template = "audit/review_queue.html#queue" if request.htmx else "audit/review_queue.html"
    return render(request, template, context)


@require_POST
@admin_required
def bulk_approve(request: HttpRequest, pk: int) -> HttpResponse:
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
        groups, items = review_groups(
            parse_id(request.POST.get("filter_auditor"), name="filter_auditor")
        )
        context = {"groups": groups, "submitted_count": len(items), "proposals": proposals()}
        return render(request, "audit/review_queue.html#queue", context)
    return redirect(reverse("audit:review_queue"))


def reviewed_versions(items: list[str]) -> dict[int, int]:
    """The bulk form's "feedback id:version" pairs; anything else is a 400."""
    versions = {}
    for raw in items:
        match = ITEM.fullmatch(raw)
        if match is None:
            raise WorkflowError(f"Expected item=FEEDBACK_ID:VERSION, got {raw[:40]!r}.")
        versions[int(match[1])] = int(match[2])
    return versions
