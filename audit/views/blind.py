"""Blind double review (admins): mark a random sample of statements, see what is marked."""

from __future__ import annotations

import secrets

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audit.models import Discussion, Statement
from audit.selectors.lists import blind_reviews_page
from audit.services import WorkflowError
from audit.services.blind import MAX_SAMPLE, blind_review_sample, blind_review_unmark
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest

MARKS_PER_PAGE = 50


class BlindSampleForm(forms.Form):
    # A number, not a list: a site has thousands of discussions.
    discussion = forms.ModelChoiceField(
        queryset=Discussion.objects.all(),
        required=False,
        label="Discussion #",
        widget=forms.NumberInput(attrs={"min": 1}),
        help_text="Sample from one discussion (its number), or leave empty for every subject "
        "statement.",
    )
    size = forms.IntegerField(min_value=1, max_value=MAX_SAMPLE, initial=10)
    seed = forms.IntegerField(
        min_value=0, help_text="The same seed over the same statements picks the same sample."
    )


def _page(request: HtmxHttpRequest, form: BlindSampleForm, status: int = 200) -> HttpResponse:
    marks = blind_reviews_page(number=request.GET.get("page"), per_page=MARKS_PER_PAGE)
    return render(request, "audit/blind_reviews.html", {"form": form, "page": marks}, status=status)


@admin_required
def blind_reviews(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the sample form and the marked statements; POST: mark a new sample."""
    if request.method != "POST":
        return _page(request, BlindSampleForm(initial={"seed": secrets.randbelow(1_000_000)}))
    form = BlindSampleForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=422)
    data = form.cleaned_data
    try:
        marks = blind_review_sample(
            discussion=data["discussion"], size=data["size"], seed=data["seed"], admin=request.user
        )
    except WorkflowError as exc:
        form.add_error(None, str(exc))
        return _page(request, form, status=exc.status_code)
    where = f"discussion #{data['discussion'].pk}" if data["discussion"] else "all discussions"
    messages.success(
        request,
        f"Marked {len(marks)} statement{'s' if len(marks) != 1 else ''} of {where} for blind "
        f"review (seed {data['seed']}).",
    )
    return redirect("audit:blind_reviews")


@require_POST
@admin_required
def blind_unmark(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    statement = get_object_or_404(Statement, pk=pk)
    blind_review_unmark(statement=statement, admin=request.user)
    messages.success(request, f"Statement #{statement.order} is no longer marked for blind review.")
    return redirect("audit:blind_reviews")
