"""The discussion audit page and the fragments its statement cards load."""

from __future__ import annotations

import json

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.models import Discussion, Statement
from audit.pdp import ENTITY_KINDS, cumulative
from audit.selectors import discussion_runs
from audit.services.transfer import NothingToExport, ground_truth_export
from audit.views.display import Labels, present
from audit.views.presence import presence_touch
from audit.views.rows import choose_run, coded_payloads, discussion_rows
from evalsite.access import admin_required, auditor_required
from evalsite.http import HtmxHttpRequest

FULL_CARDS = 20  # subject statements rendered in full on the first load of a discussion


def _statement(pk: int) -> Statement:
    return get_object_or_404(Statement.objects.select_related("discussion", "speaker"), pk=pk)


def statement_url(statement: Statement, run=None) -> str:
    """The statement's place on its discussion page (the working screen)."""
    url = reverse("audit:discussion", args=[statement.discussion_id])
    return f"{url}{f'?run={run.pk}' if run else ''}#stmt-{statement.pk}"


@require_GET
@auditor_required
def discussion(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    discussion = get_object_or_404(Discussion, pk=pk)
    runs = discussion_runs(discussion=discussion)
    run = choose_run(request, runs)
    # Full cards cost a few ms each to render: long discussions load the rest on scroll.
    rows = discussion_rows(discussion, request.user, run, full_cards=FULL_CARDS)
    subject_rows = [row for row in rows if row.statement.is_subject]
    context = {
        "discussion": discussion,
        "rows": rows,
        "runs": runs,
        "run": run,
        "coded": sum(1 for row in subject_rows if row.mine),
        "sent": sum(
            1 for row in subject_rows if row.mine and row.mine.status in ("submitted", "approved")
        ),
        "n_subject": len(subject_rows),
    }
    template = "audit/discussion.html#statements" if request.htmx else "audit/discussion.html"
    return render(request, template, context)


def card_context(request: HtmxHttpRequest, statement: Statement, *, owner=None) -> dict:
    """Context of one statement card (the `card` partial); `owner` codes it (default: me)."""
    runs = discussion_runs(discussion=statement.discussion)
    run = choose_run(request, runs)
    rows = discussion_rows(
        statement.discussion, request.user, run, upto_order=statement.order, owner=owner
    )
    return {
        "row": rows[-1],
        "rows": rows,
        "run": run,
        "runs": runs,
        "discussion": statement.discussion,
    }


@require_GET
@auditor_required
def statement(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One statement's card: its own page without JavaScript, a card refresh with htmx."""
    statement = _statement(pk)
    context = card_context(request, statement)
    if request.htmx:
        return render(request, "audit/components/card.html#card", context)
    context["state"] = state_context(request, statement, context["run"])
    return render(request, "audit/statement.html", context)


def state_context(request: HtmxHttpRequest, statement: Statement, run) -> dict:
    """The family as coded up to and including this statement (the viewer's coding, else AI)."""
    rows = discussion_rows(statement.discussion, request.user, run, upto_order=statement.order)
    payloads = coded_payloads(rows)
    state = cumulative(payloads)
    labels = Labels().feed(state)
    current = payloads[-1] if payloads and statement.is_subject else {}
    touched = {item.get("id") for kind in ENTITY_KINDS for item in current.get(kind) or []}
    view = present(state, labels)
    for _, cards in view.sections:
        for card in cards:
            card.state = "here" if card.id in touched else ""
    return {"view": view, "statement": statement}


@require_GET
@auditor_required
def statement_state(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    statement = _statement(pk)
    if not request.htmx:
        return redirect(reverse("audit:statement", args=[pk]) + "#state")
    runs = discussion_runs(discussion=statement.discussion)
    context = state_context(request, statement, choose_run(request, runs))
    return render(request, "audit/components/payload.html#state", context)


@require_GET
@auditor_required
def statement_f1(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The F1 badge and panel, polled while the stored result is being recomputed."""
    statement = _statement(pk)
    if not request.htmx:
        return redirect(reverse("audit:statement", args=[pk]))
    return render(request, "audit/components/f1.html#f1", card_context(request, statement))


@require_POST
@auditor_required
def presence(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Refreshed by the open editor every 15 s; answers with who else is editing."""
    statement = _statement(pk)
    others = presence_touch(statement.pk, request.user)
    return render(
        request, "audit/components/editor.html#presence", {"others": others, "statement": statement}
    )


@require_GET
@admin_required
def discussion_export(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The discussion's approved ground truth as a JSON download (export schema v1)."""
    discussion = get_object_or_404(Discussion, pk=pk)
    try:
        data = ground_truth_export(discussion_ids=[discussion.pk])
    except NothingToExport as exc:
        raise Http404("No approved ground truth in this discussion yet.") from exc
    response = HttpResponse(json.dumps(data, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="discussion-{pk}-ground-truth.json"'
    return response
