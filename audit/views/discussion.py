"""The discussion audit page and the fragments its statement cards load."""

from __future__ import annotations

import json
import re

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from audit.context_processors import unread_comments
from audit.display import Labels, present, problem_sentence
from audit.models import Discussion, Statement
from audit.selectors.queues import discussion_progress, discussion_runs, discussion_window_bounds
from audit.services.exports import NothingToExport, ground_truth_export
from audit.views.comments import thread_context
from audit.views.presence import presence_touch
from audit.views.rows import (
    choose_run,
    coded_payloads,
    discussion_window,
    lazy_batches,
    statement_rows,
)
from evalsite.access import admin_required, auditor_required
from evalsite.http import HtmxHttpRequest
from evalsite.params import BadParameter, parse_id
from metrics.families.payload.items import ENTITY_KINDS, cumulative

# Subject statements of a window rendered in full, the rest load as they scroll into view. A
# full card is 640-1,010 px tall at 1,440 px wide (2,000-3,100 at 390): three fill two to
# three screens, so what the reader sees first is in the page and nothing more is rendered.
FULL_CARDS = 3
WINDOW = 20  # statements per window: the page renders one, scrolling loads the next
# Placeholders loaded together: a far card's request is mostly reading the names above it
# (payloads of every earlier statement), which one request then does once for four cards.
LAZY_BATCH = 4
AT_CONTEXT = 2  # statements shown above the one a link points at (?at=)
ORDER = re.compile(r"[0-9]{1,9}", re.ASCII)


def _statement(pk: int) -> Statement:
    return get_object_or_404(Statement.objects.select_related("discussion", "speaker"), pk=pk)


def discussion_url(discussion_id: int, run=None, **query: int) -> str:
    """The discussion page's address: with the run shown (?run=), if one was chosen, then
    `query`."""
    if run is not None:
        query = {"run": run.pk, **query}
    url = reverse("audit:discussion", args=[discussion_id])
    return f"{url}?{urlencode(query)}" if query else url


def statement_url(statement: Statement, run=None) -> str:
    """The statement's place on its discussion page (the working screen): the window that
    holds it (?at=), scrolled to it (#stmt-)."""
    return f"{discussion_url(statement.discussion_id, run, at=statement.pk)}#stmt-{statement.pk}"


def _order_param(request: HtmxHttpRequest, name: str) -> int | None:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return None
    if not ORDER.fullmatch(raw):
        raise BadParameter(name, raw, "a statement number (0 or more)")
    return int(raw)


def window_start(request: HtmxHttpRequest, discussion: Discussion) -> tuple[int, int | None]:
    """Where the page's window starts, and the statement a link points at (rendered in full):
    ?from= (a statement number), or a little above the statement ?at= names (its id), else the
    top. With ?before= (htmx), the window that ends just above that statement number."""
    at = parse_id(request.GET.get("at"), name="at")
    if at is not None:
        order = discussion.statements.filter(pk=at).values_list("order", flat=True).first()
        if order is None:
            raise Http404(f"Statement {at} is not in discussion {discussion.pk}.")
        return (0 if order < WINDOW else order - AT_CONTEXT), at
    before = _order_param(request, "before")
    if before is not None:
        _, _, previous = discussion_window_bounds(discussion=discussion, start=before, size=WINDOW)
        return (0 if previous is None else previous), None
    return _order_param(request, "from") or 0, None


@require_GET
@auditor_required
def discussion(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The audit page renders one window of statements; a sentinel at its foot loads the next
    when scrolled into view (a plain ?from= link without JavaScript), one at its head the
    earlier ones (?before=)."""
    discussion = get_object_or_404(Discussion, pk=pk)
    runs = discussion_runs(discussion=discussion)
    run = choose_run(request, runs)
    start, focus = window_start(request, discussion)
    last, next_from, previous_from = discussion_window_bounds(
        discussion=discussion, start=start, size=WINDOW
    )
    through = _order_param(request, "through")
    if request.htmx and through is not None and last is not None:
        return _batch(request, discussion, run, start, min(through, last))
    before = _order_param(request, "before")
    rows = []
    if last is not None:
        # Full cards cost a few ms each to render: the rest of a window loads on scroll.
        rows = discussion_window(
            discussion,
            request.user,
            run,
            first_order=start,
            last_order=last if before is None else before - 1,
            unread=unread_comments(request),
            full_cards=FULL_CARDS,
            focus=focus,
        )
    context = {
        "discussion": discussion,
        "items": lazy_batches(rows, size=LAZY_BATCH, url=discussion_url(discussion.pk, run)),
        "rows": rows,
        "runs": runs,
        "run": run,
        "next_from": None if before is not None else next_from,
        "previous_from": previous_from,
        "start": start,
        **discussion_progress(discussion=discussion, user=request.user),
    }
    if request.htmx and request.htmx.target in ("load-more", "load-earlier"):
        return render(request, "audit/discussion.html#window", context)
    template = "audit/discussion.html#statements" if request.htmx else "audit/discussion.html"
    return render(request, template, context)


def _batch(request: HtmxHttpRequest, discussion: Discussion, run, first: int, last: int):
    """The cards of a batch of placeholders (?from=&through=, at most a window), in full."""
    rows = discussion_window(
        discussion, request.user, run, first_order=first, last_order=last,
        unread=unread_comments(request),
    )  # fmt: skip
    return render(request, "audit/discussion.html#batch", {"rows": rows, "run": run})


def card_context(request: HtmxHttpRequest, statement: Statement, *, owner=None) -> dict:
    """Context of one statement card (the `card` partial); `owner` codes it (default: me)."""
    runs = discussion_runs(discussion=statement.discussion)
    run = choose_run(request, runs)
    rows = statement_rows(request, statement, run, owner=owner)
    return {
        "row": rows[-1],
        "rows": rows,
        "run": run,
        "runs": runs,
        "discussion": statement.discussion,
        "place_url": statement_url(statement, run),
    }


def problem_lines(request: HtmxHttpRequest, feedback, issues: list) -> list[str]:
    """A refused submit's problems as sentences about the coding on screen, naming people of
    earlier statements too (read only when a submit is refused)."""
    payload = feedback.edited_extraction
    labels = earlier_labels(request, feedback).feed(payload)
    return [problem_sentence(issue.path, issue.message, payload, labels) for issue in issues]


def earlier_labels(request: HtmxHttpRequest, feedback) -> Labels:
    """The names of the people, events and bonds of the coder's earlier statements in this
    discussion (read only to word a problem)."""
    rows = card_context(request, feedback.statement, owner=feedback.auditor)["rows"]
    return Labels().feed(cumulative(coded_payloads(rows)[:-1]))


@require_GET
@auditor_required
def statement(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One statement's card: its own page without JavaScript, a card refresh with htmx."""
    statement = _statement(pk)
    context = card_context(request, statement)
    if request.htmx:
        return render(request, "audit/components/card.html#card", context)
    # The card's rows are the viewer's own up to this statement: the family so far reads them.
    context["state"] = state_context(request, statement, context["run"], rows=context["rows"])
    context["thread"] = thread_context(request, statement)
    return render(request, "audit/statement.html", context)


def state_context(
    request: HtmxHttpRequest, statement: Statement, run, *, rows: list | None = None
) -> dict:
    """The family as coded up to and including this statement (the viewer's coding, else AI);
    `rows`: the viewer's rows up to it, when the caller has read them already."""
    if rows is None:
        rows = statement_rows(request, statement, run)
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
