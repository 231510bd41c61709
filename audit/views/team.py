"""A team's coding workflow: assigning work (admins), the skipped list, the team page, the
review home; for auditors: skip, submit-and-next and "code my next statement"."""

from __future__ import annotations

import json

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.context_processors import unread_comments
from audit.derived.team_figures import discussion_figures_sorted
from audit.forms import base_version
from audit.models import Assignment, Discussion, Feedback, Statement
from audit.selectors.adjudication import statements_to_adjudicate_why
from audit.selectors.progress import (
    COLUMNS,
    ProgressRow,
    auditor_progress_stored,
    auditors_with_work,
    rows_sorted,
    stored_row,
    team_progress,
)
from audit.selectors.stream import (
    assigned_discussion_ids,
    assignment_groups,
    discussions_to_assign,
    review_stream_next,
    review_waiting_by_auditor,
    review_waiting_by_discussion,
    review_waiting_count,
    review_waiting_discussions,
    skipped_assignments,
)
from audit.selectors.threads import threads_unread
from audit.services import NotReady, WorkflowError, feedback_start
from audit.services.assignments import (
    MAX_OVERLAP_K,
    AssignmentPlan,
    Strategy,
    assignment_next,
    assignment_reassign,
    assignments_create,
    assignments_reassign,
    assignments_unassign,
    statement_skip,
)
from audit.services.feedback import feedback_submit_next
from audit.views.access import error_fragment, visible_feedback
from audit.views.discussion import problem_lines
from evalsite.access import admin_required, auditor_required
from evalsite.csv_cells import csv_writer
from evalsite.http import HtmxHttpRequest, page_redirect
from evalsite.params import parse_id

# --- assigning (admins) -------------------------------------------------------------------------


def _auditors():
    return get_user_model().objects.filter(groups__name="auditor").order_by("username")


class DiscussionFilterForm(forms.Form):
    """Which discussions the assign page offers (a site has thousands: they come a page at a
    time, and "all matching" assigns every one the filter finds)."""

    q = forms.CharField(required=False, max_length=200, label="Search discussions")
    unassigned = forms.BooleanField(required=False, label="Only those nobody is assigned")

    def matching(self) -> QuerySet[Discussion]:
        data = self.cleaned_data if self.is_valid() else {}
        return discussions_to_assign(
            search=data.get("q", ""), unassigned=data.get("unassigned", False)
        )


class AssignForm(forms.Form):
    # Rendered by the page from the filter's page of discussions, never as one list of all.
    discussions = forms.ModelMultipleChoiceField(
        queryset=Discussion.objects.order_by("pk"), required=False
    )
    all_matching = forms.BooleanField(
        required=False, label="Every discussion that matches the filter"
    )
    auditors = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(), widget=forms.CheckboxSelectMultiple
    )
    strategy = forms.ChoiceField(
        choices=Strategy.CHOICES, initial=Strategy.ROUND_ROBIN, widget=forms.RadioSelect
    )
    first_order = forms.IntegerField(
        required=False, min_value=0, label="From statement #", help_text="one discussion only"
    )
    last_order = forms.IntegerField(required=False, min_value=0, label="to #")
    overlap_percent = forms.IntegerField(
        min_value=0, max_value=100, initial=0, label="Overlap sample (%)",
        help_text="this share of the statements is coded by k auditors, for agreement",
    )  # fmt: skip
    overlap_k = forms.IntegerField(
        min_value=2, max_value=MAX_OVERLAP_K, initial=2, label="k (auditors per sampled statement)"
    )
    blind = forms.BooleanField(required=False, label="Blind sample (coded from an empty start)")
    due = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    seed = forms.IntegerField(min_value=0, initial=0, required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        auditors = self.fields["auditors"]
        assert isinstance(auditors, forms.ModelMultipleChoiceField)
        auditors.queryset = _auditors()

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("all_matching"):
            data["discussions"] = list(DiscussionFilterForm(self.data).matching())
        if not data.get("discussions"):
            self.add_error(
                "discussions", "Choose at least one discussion, or every one the filter matches."
            )
        return data

    def plan(self) -> AssignmentPlan:
        data = self.cleaned_data
        return AssignmentPlan(
            discussions=list(data["discussions"]),
            auditors=list(data["auditors"]),
            strategy=data["strategy"],
            first_order=data["first_order"],
            last_order=data["last_order"],
            overlap_share=data["overlap_percent"] / 100,
            overlap_k=data["overlap_k"],
            blind=data["blind"],
            due=data["due"],
            seed=data["seed"] or 0,
        )


ASSIGN_DISCUSSIONS_PER_PAGE = 25
GROUPS_DISCUSSIONS_PER_PAGE = 20


def _assign_page(request: HtmxHttpRequest, form: AssignForm, status: int = 200) -> HttpResponse:
    """The form with one page of the filtered discussions to choose from, and who has what in
    one page of the assigned discussions."""
    shown = DiscussionFilterForm(request.POST if request.method == "POST" else request.GET)
    picker = Paginator(shown.matching(), ASSIGN_DISCUSSIONS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    # Bounded, so the offset stays a number the database takes.
    groups_page = min(parse_id(request.GET.get("groups"), name="groups") or 1, 10**6)
    per_page = GROUPS_DISCUSSIONS_PER_PAGE
    assigned = assigned_discussion_ids(offset=(groups_page - 1) * per_page, limit=per_page + 1)
    context = {
        "form": form,
        "filter": shown,
        "picker": picker,
        "chosen": {str(pk) for pk in form["discussions"].value() or []},
        "groups": assignment_groups(discussion_ids=assigned[:per_page]),
        "groups_page": groups_page,
        "more_groups": len(assigned) > per_page,
        "auditors": _auditors(),
    }
    return render(request, "audit/assignments.html", context, status=status)


@admin_required
def assignments(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the assign form and who has what; POST: assign."""
    if request.method != "POST":
        return _assign_page(request, AssignForm())
    form = AssignForm(request.POST)
    if not form.is_valid():
        return _assign_page(request, form, status=400)
    try:
        created = assignments_create(plan=form.plan(), admin=request.user)
    except WorkflowError as exc:
        form.add_error(None, str(exc))
        return _assign_page(request, form, status=exc.status_code)
    overlap = len({a.statement_id for a in created if a.overlap})
    messages.success(
        request,
        f"Assigned {len(created)} statement(s)"
        + (f", {overlap} of them in the overlap sample." if overlap else "."),
    )
    return redirect(reverse("audit:assignments"))


def _open_in_discussion(request: HtmxHttpRequest) -> QuerySet[Assignment]:
    """The open assignments of the posted auditor in the posted discussion."""
    discussion = parse_id(request.POST.get("discussion"), name="discussion", required=True)
    auditor = parse_id(request.POST.get("auditor"), name="auditor", required=True)
    return Assignment.objects.open().filter(statement__discussion_id=discussion, auditor_id=auditor)


@require_POST
@admin_required
def unassign(request: HtmxHttpRequest) -> HttpResponse:
    """Take back one auditor's open assignments in one discussion (or one assignment)."""
    chosen = _open_in_discussion(request)
    try:
        n = assignments_unassign(assignments=chosen, admin=request.user)
    except WorkflowError as exc:
        return error_fragment(request, [str(exc)], status=exc.status_code, target="#assign-msg")
    messages.success(request, f"Unassigned {n} open statement(s).")
    return redirect(reverse("audit:assignments"))


@require_POST
@admin_required
def reassign_open(request: HtmxHttpRequest) -> HttpResponse:
    """Give one auditor's open assignments in one discussion to another auditor."""
    to_id = parse_id(request.POST.get("to"), name="to", required=True)
    to = get_object_or_404(get_user_model(), pk=to_id)
    chosen = _open_in_discussion(request)
    try:
        n = assignments_reassign(assignments=chosen, auditor=to, admin=request.user)
    except WorkflowError as exc:
        return error_fragment(request, [str(exc)], status=exc.status_code, target="#assign-msg")
    messages.success(request, f"Reassigned {n} open statement(s) to {to.get_username()}.")
    return redirect(reverse("audit:assignments"))


@require_POST
@admin_required
def reassign(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    assignment = get_object_or_404(Assignment, pk=pk)
    auditor_id = parse_id(request.POST.get("auditor"), name="auditor", required=True)
    auditor = get_object_or_404(get_user_model(), pk=auditor_id)
    try:
        assignment_reassign(assignment=assignment, auditor=auditor, admin=request.user)
    except WorkflowError as exc:
        return error_fragment(request, [str(exc)], status=exc.status_code, target="#skipped-msg")
    messages.success(request, f"Statement reassigned to {auditor.get_username()}.")
    return redirect(reverse("audit:skipped"))


SKIPPED_PER_PAGE = 50


@require_GET
@admin_required
def skipped(request: HtmxHttpRequest) -> HttpResponse:
    """Skipped statements, newest first, a page at a time."""
    page = Paginator(skipped_assignments(), SKIPPED_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "audit/skipped.html", {"page": page, "auditors": _auditors()})


# --- the team page --------------------------------------------------------------------------------

LABELS = {
    "label": "Name",
    "assigned": "Assigned",
    "coded": "Coded",
    "submitted": "Submitted",
    "approved": "Approved",
    "rejected": "Rejected",
    "skipped": "Skipped",
    "active_minutes": "Active min",
    "median_minutes": "Median min / statement",
    "per_day": "Statements / day",
    "agreement_gt": "F1 vs approved GT",
    "agreement_coders": "F1 vs other coders",
}


def _headers(sort: str) -> list[dict]:
    """Each column with the link that sorts by it (again: the other way round)."""
    current = sort.lstrip("-")
    headers = []
    for name, label in LABELS.items():
        descending = current == name and not sort.startswith("-")
        headers.append(
            {
                "name": name,
                "label": label,
                "sort": f"-{name}" if descending else name,
                "active": current == name,
                "aria": ("descending" if sort.startswith("-") else "ascending")
                if current == name
                else "none",
            }
        )
    return headers


def _download(rows: dict[str, list[ProgressRow]], kind: str) -> HttpResponse:
    if kind == "json":
        body = {name: [r.as_dict() for r in found] for name, found in rows.items()}
        response = HttpResponse(json.dumps(body, indent=2), content_type="application/json")
    else:
        response = HttpResponse(content_type="text/csv")
        writer = csv_writer(response)
        writer.writerow(["table", "id", "label", *COLUMNS])
        for name, found in rows.items():
            for r in found:
                writer.writerow([name, r.id, r.label, *(getattr(r, c) for c in COLUMNS)])
    response["Content-Disposition"] = f'attachment; filename="team-progress.{kind}"'
    return response


TEAM_DISCUSSIONS = 50  # rows of the per-discussion table a page shows (downloads hold all)


@require_GET
@admin_required
def team(request: HtmxHttpRequest) -> HttpResponse:
    """Per auditor and per discussion figures, sortable, with CSV / JSON downloads.

    The page reads the stored rows (``audit.derived.team_figures``): the auditors' and one page of the
    discussions in the order of its sort's index; a download computes every row."""
    download = request.GET.get("download", "")
    if download in ("csv", "json"):
        return _download(team_progress(user=request.user), download)
    sort = request.GET.get("sort", "label")
    dsort = request.GET.get("dsort", "id")
    discussions = Paginator(discussion_figures_sorted(dsort), TEAM_DISCUSSIONS)
    dpage = discussions.get_page(request.GET.get("dpage"))
    auditors = auditor_progress_stored(auditors=auditors_with_work())
    tables = [
        {
            "name": "auditors",
            "caption": "Per auditor",
            "rows": rows_sorted(auditors, sort),
            "headers": _headers(sort),
            "param": "sort",
            "other_param": "dsort",
            "other_sort": dsort,
        },
        {
            "name": "discussions",
            "caption": "Per discussion",
            "rows": [stored_row(row, id=row.pk, label=row.label) for row in dpage.object_list],
            "page": dpage,
            "headers": _headers(dsort),
            "param": "dsort",
            "other_param": "sort",
            "other_sort": sort,
        },
    ]
    context = {"tables": tables, "idle_minutes": round(settings.CODING_IDLE_SECONDS / 60, 1)}
    return render(request, "audit/team.html", context)


# --- the review home (admins' landing page) ----------------------------------------------------


REVIEW_HOME_DISCUSSIONS = 20  # the rest are on the review queue's pages
# Statements to adjudicate the home lists (the review queue lists more): each is aligned to say
# why it needs a decision.
REVIEW_HOME_TO_ADJUDICATE = 20


def review_home(request: HtmxHttpRequest) -> HttpResponse:
    first = review_stream_next()
    context = {
        "waiting": review_waiting_count(),
        "by_discussion": review_waiting_by_discussion(limit=REVIEW_HOME_DISCUSSIONS),
        "n_discussions": review_waiting_discussions(),
        "by_auditor": review_waiting_by_auditor(),
        "first": first,
        "skipped": skipped_assignments().count(),
        "threads": threads_unread(unread=unread_comments(request)),
        "to_adjudicate": statements_to_adjudicate_why(limit=REVIEW_HOME_TO_ADJUDICATE),
        "to_adjudicate_limit": REVIEW_HOME_TO_ADJUDICATE,
    }
    return render(request, "audit/review_home.html", context)


# --- auditors: skip, submit and next, my next statement -----------------------------------------


class SkipForm(forms.Form):
    reason = forms.ChoiceField(choices=Assignment.SkipReason.choices)
    note = forms.CharField(required=False, max_length=5000)


def open_next(request: HtmxHttpRequest, after: Statement | None) -> HttpResponse:
    """Start (or reopen) the next statement that needs this auditor, in its editor."""
    statement = assignment_next(user=request.user, after=after)
    following = (
        None if statement is None else feedback_start(statement=statement, auditor=request.user)
    )
    return next_editor(request, following)


def next_editor(
    request: HtmxHttpRequest, following: Feedback | None, *, submitted: Feedback | None = None
) -> HttpResponse:
    """The next coding's editor; with nothing left, back to the queue. htmx follows with
    HX-Redirect (a whole new page). `submitted`: the coding just sent, which the next editor
    offers to take back."""
    if following is None:
        messages.success(request, "Nothing left that needs you. Thank you!")
        return page_redirect(request, reverse("home"))
    target = reverse("audit:feedback_edit", args=[following.pk])
    if submitted is not None:
        target += f"?submitted={submitted.pk}"
    return page_redirect(request, target)


@require_POST
@auditor_required
def code_next(request: HtmxHttpRequest) -> HttpResponse:
    """ "Code my next statement": the first that needs me, opened in the editor."""
    try:
        return open_next(request, None)
    except WorkflowError as exc:
        return error_fragment(request, [str(exc)], status=exc.status_code, target="#queue-msg")


@require_POST
@auditor_required
def submit_next(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Submit, then open the next statement that needs me (one key: n)."""
    feedback = visible_feedback(request, pk)
    try:
        submitted, following = feedback_submit_next(
            feedback=feedback, user=request.user, base_version=base_version(request.POST)
        )
        messages.success(request, f"Submitted statement #{submitted.statement.order}.")
        return next_editor(request, following, submitted=submitted)
    except ValidationError as exc:  # no version it edits
        target = f"#card-msg-{feedback.statement_id}"
        return error_fragment(request, exc.messages, status=400, target=target)
    except WorkflowError as exc:
        target = f"#card-msg-{feedback.statement_id}"
        lines = exc.messages() if hasattr(exc, "messages") else [str(exc)]
        if isinstance(exc, NotReady):
            lines = problem_lines(request, feedback, exc.issues)
        extra = {"heading": exc.detail} if hasattr(exc, "detail") else None
        return error_fragment(request, lines, status=exc.status_code, target=target, extra=extra)


@require_POST
@auditor_required
def skip(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Skip with a reason, then open the next statement that needs me."""
    statement = get_object_or_404(Statement.objects.select_related("speaker", "discussion"), pk=pk)
    form = SkipForm(request.POST)
    target = f"#card-msg-{statement.pk}"
    if not form.is_valid():
        problems = [
            f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items()
        ]
        return error_fragment(request, problems, status=400, target=target)
    try:
        statement_skip(
            statement=statement, auditor=request.user,
            reason=form.cleaned_data["reason"], note=form.cleaned_data["note"],
        )  # fmt: skip
        messages.success(request, f"Skipped statement #{statement.order}.")
        return open_next(request, statement)
    except WorkflowError as exc:
        return error_fragment(request, [str(exc)], status=exc.status_code, target=target)
