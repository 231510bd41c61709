"""Coding a statement: start, edit (form or raw JSON), autosave, submit, history and restore."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.display import (
    FIELD_WORDS,
    Card,
    Labels,
    SubmitSummary,
    distinct_names,
    field_problem,
    item_words,
    json_problem_sentence,
    problem_sentence,
    readable_labels,
    submit_summary,
)
from audit.forms import (
    CHOICE_TITLES,
    CHOICES,
    COMMENT_MAX_LENGTH,
    apply_op,
    base_version,
    field_name,
    issue_field,
    parse_json_payload,
    payload_from_post,
    references_to,
    reviewer_note,
)
from audit.models import Feedback, Statement
from audit.selectors.alignment import item_alignment
from audit.selectors.history import feedback_revisions
from audit.selectors.queues import discussion_runs
from audit.services import (
    NotReady,
    StaleVersion,
    WorkflowError,
    feedback_problems,
    feedback_record_conflict,
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
    feedback_warnings,
)
from audit.services.feedback import (
    feedback_can_submit,
    feedback_opens_in_editor,
    feedback_unsubmit,
    feedback_unsubmit_refusal,
)
from audit.views.access import error_fragment, safe_next, visible_feedback
from audit.views.discussion import card_context, earlier_labels, problem_lines, statement_url
from audit.views.presence import presence_others
from audit.views.rows import StatementRow, ai_payloads, choose_run, coded_payloads
from audit.views.team import open_next
from evalsite.access import auditor_required, is_admin
from evalsite.http import HtmxHttpRequest
from metrics.families.payload.rules import ENTITY_KINDS, cumulative, date_reading, mark_edited
from metrics.families.payload.schema import PayloadError, PayloadIssue, validate_pdp

# "submit" stays on the statement; "submit_next" then opens the next one that needs me.
SUBMIT_OPS = ("submit", "submit_next")

# --- the editor's context ---------------------------------------------------------------------


@dataclass
class Editor:
    feedback: Feedback
    items: dict[str, list[dict]]
    people: list[tuple[Any, str]]
    bonds: list[tuple[Any, str]]
    deletable: list[tuple[Any, str]]
    delete_rows: list[tuple[Any, str]]
    others: list[dict]
    json_text: str
    is_owner: bool
    can_submit: bool
    choices: dict = field(default_factory=lambda: CHOICES)
    titled: dict = field(default_factory=lambda: CHOICE_TITLES)
    issues: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # drafts may keep them; submit refuses
    warnings: list[str] = field(default_factory=list)  # shown at their fields; never refused
    comment_max: int = COMMENT_MAX_LENGTH
    # A section with more items than this starts folded (its count shows in the heading).
    fold_above: int = 12
    # Each item shows the AI item it corresponds to beside it (items[kind][i]["ai"]), and
    # ai_only[kind] the AI items nothing in the coding corresponds to.
    aligned: bool = False
    ai_only: dict[str, list[Card]] = field(default_factory=dict)
    summary: SubmitSummary | None = None  # what the submit confirm says will be submitted


def _issue_map(issues: list) -> dict[tuple[str, int], dict[str, str]]:
    """Schema issues and problems by (kind, index) and field, to mark the right input."""
    found: dict[tuple[str, int], dict[str, str]] = {}
    for issue in issues:
        located = issue_field(issue.path)
        if located:
            kind, index, name = located
            found.setdefault((kind, index), {})[name] = issue.message
    return found


def build_editor(
    request: HtmxHttpRequest, feedback: Feedback, rows: list, *, payload=None, error=None
) -> Editor:
    """Pickers list the people and bonds known so far: the coding of earlier statements
    (the feedback owner's, else the AI's) plus this statement's own items."""
    payload = payload if payload is not None else feedback.edited_extraction
    coded_before = coded_payloads(rows)[:-1]
    read = [*coded_before, *ai_payloads(rows)[:-1]]
    problems = feedback_problems(feedback=feedback, payload=payload, earlier=read)
    before = cumulative(coded_before)
    labels = Labels().feed(before).feed(payload)
    people = distinct_names(_options(before["people"], payload.get("people"), labels.person))
    bonds = _options(before["pair_bonds"], payload.get("pair_bonds"), labels.bond)
    _keep_dangling(people, bonds, payload, labels)
    warnings = feedback_warnings(feedback=feedback, payload=payload)
    items = _editor_items(
        payload, marked(warnings) + problems + (error.issues if error else []), labels
    )
    ai_only = _align_with_ai(items, rows[-1] if rows else None, payload)
    return Editor(
        feedback=feedback,
        items=items,
        aligned=ai_only is not None,
        ai_only=ai_only or {},
        people=people,
        bonds=bonds,
        deletable=[(i.get("id"), labels.any(i.get("id"))) for k in ENTITY_KINDS for i in before[k]],
        delete_rows=[(i, labels.any(i)) for i in payload.get("delete") or []],
        others=presence_others(feedback.statement_id, request.user),
        json_text=json.dumps(feedback.edited_extraction, indent=2),
        is_owner=feedback.auditor_id == request.user.pk,
        can_submit=feedback_can_submit(feedback=feedback, user=request.user),
        issues=error.messages() if error else [],
        problems=[problem_sentence(p.path, p.message, payload, labels) for p in problems],
        warnings=[str(warning) for warning in warnings],
        summary=_summary(feedback, payload, len(problems)),
    )


def marked(warnings: list[PayloadIssue]) -> list[PayloadIssue]:
    """Warnings as a row shows them beside its fields (after them, a problem of the same field
    wins: it is what blocks the submit)."""
    return [replace(w, message=f"warning: {w.message} (submit allowed)") for w in warnings]


def _summary(feedback: Feedback, payload: dict, problems: int) -> SubmitSummary:
    """The submit confirm's plain summary: changes against the AI's extraction the coding
    started from (blind coding starts from nothing)."""
    source = feedback.source_extraction
    ai = source.pdp_deltas if source is not None else None
    return submit_summary(feedback_id=feedback.pk, ai=ai, coded=payload, problems=problems)


def _editor_items(
    payload: dict, issues: list[PayloadIssue], labels: Labels | None = None
) -> dict[str, list[dict]]:
    """Each item with its input-name prefix, the issues about it (a later one wins, each
    with the field's plain name) and what in this coding points at it."""
    found = _issue_map(issues)
    labels = labels or Labels().feed(payload)
    return {
        kind: [
            {
                "index": i,
                "kind": kind,
                "prefix": f"{kind}-{i}-",
                "item": item,
                "errors": found.get((kind, i), {}),
                "error_lines": [
                    (name, FIELD_WORDS.get(name, name), field_problem(message))
                    for name, message in found.get((kind, i), {}).items()
                ],
                "date_reading": date_reading(item.get("dateTime")) if kind == "events" else "",
                "refs": _pointers(payload, kind, item.get("id"), labels),
            }
            for i, item in enumerate(payload.get(kind) or [])
        ]
        for kind in ENTITY_KINDS
    }


def _pointers(payload: dict, kind: str, ident: Any, labels: Labels) -> list[str]:
    """What points at an item, in words ("Emily Walker's parents"), for the remove question."""
    if ident is None:
        return []
    return [
        f"{item_words(owner, payload[owner][index], labels)}'s {FIELD_WORDS.get(name, name)}"
        for owner, index, name in references_to(payload, kind, ident)
    ]


def _align_with_ai(
    items: dict[str, list[dict]], row: StatementRow | None, payload: dict
) -> dict[str, list[Card]] | None:
    """Put on each editor item the AI card the extraction matcher pairs it with (through
    audit.figures), and return the AI cards left unpaired per kind; None when the AI is hidden
    (blind coding), absent, or no matcher is registered."""
    if row is None or row.ai_view is None or row.extraction is None:
        return None
    pairs = item_alignment(ai=row.ai_payload, coded=payload)
    if not pairs:
        return None
    unpaired: dict[str, list[Card]] = {}
    for kind, cards in row.ai_view.sections:
        by_id = {card.id: card for card in cards}
        ai_for = {coded_id: ai_id for ai_id, coded_id in pairs.get(kind, [])}
        used = set(ai_for.values())
        for entry in items[kind]:
            ident = entry["item"].get("id")
            ai_id = ai_for.get(ident)
            # A coded item started from the AI's keeps its id: changed past what the matcher
            # pairs, it still sits beside the AI item it came from.
            if ai_id is None and ident in by_id and ident not in used:
                ai_id = ident
                used.add(ident)
            entry["ai"] = by_id.get(ai_id)
        unpaired[kind] = [card for card in cards if card.id not in used]
    return unpaired


def _options(earlier: list[dict], current: list[dict] | None, label) -> list[tuple[Any, str]]:
    by_id = {item.get("id"): item for item in earlier}
    by_id.update({item.get("id"): item for item in current or [] if isinstance(item, dict)})
    return [(ident, label(ident)) for ident in by_id]


def _keep_dangling(people: list, bonds: list, payload: dict, labels: Labels) -> None:
    """A link to someone the pickers do not know must stay selectable, or saving would drop it."""
    known_people, known_bonds = {i for i, _ in people}, {i for i, _ in bonds}
    for ident in referenced_people(payload) - known_people:
        people.append((ident, "someone not in this coding"))
    for person in payload.get("people") or []:
        bond = person.get("parents") if isinstance(person, dict) else None
        if bond is not None and bond not in known_bonds:
            bonds.append((bond, "a pair bond not in this coding"))
            known_bonds.add(bond)


def referenced_people(payload: dict) -> set:
    ids = set()
    for event in payload.get("events") or []:
        ids |= {event.get(k) for k in ("person", "spouse", "child")}
        ids |= set(event.get("relationshipTargets") or []) | set(
            event.get("relationshipTriangles") or []
        )
    for bond in payload.get("pair_bonds") or []:
        ids |= {bond.get("person_a"), bond.get("person_b")}
    return {i for i in ids if isinstance(i, int)}


def editor_card(
    request: HtmxHttpRequest,
    feedback: Feedback,
    *,
    payload=None,
    error=None,
    status: int = 200,
    template: str = "audit/components/card.html#card",
    extra: dict | None = None,
) -> HttpResponse:
    """The statement card with the editor open on this feedback."""
    context = card_context(request, feedback.statement, owner=feedback.auditor)
    context["editor"] = build_editor(
        request, feedback, context["rows"], payload=payload, error=error
    )
    context.update(extra or {})
    return render(request, template, context, status=status)


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
        request, [_message(exc)], status=status, target=target, extra={"feedback": feedback}
    )


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc)


# --- views ------------------------------------------------------------------------------------


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
        return error_fragment(request, [_message(exc)], status=status, target=target)
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
    saved = feedback
    try:
        saved = _save_form(request, feedback, payload)
        if op in SUBMIT_OPS:
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
    return _saved_reply(request, saved, stored, op)


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


def _saved_reply(request: HtmxHttpRequest, saved: Feedback, before: dict, op: str) -> HttpResponse:
    if op == "submit_next":
        messages.success(request, f"Submitted statement #{saved.statement.order}.")
        return open_next(request, saved.statement, submitted=saved)
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
        "summary": _summary(saved, saved.edited_extraction, len(problems)),
    }
    return render(request, "audit/components/editor.html#saved", context)


def row_errors(feedback: Feedback, issues: list[PayloadIssue]) -> list[dict]:
    """Every editor row's problems (empty ones too, so fixed problems disappear at once)."""
    rows = _editor_items(feedback.edited_extraction, issues)
    return [dict(row, feedback=feedback) for kind in ENTITY_KINDS for row in rows[kind]]


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
        messages.error(request, exc.detail if isinstance(exc, NotReady) else _message(exc))
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
            request, [_message(exc)], status=getattr(exc, "status_code", 400), target=target
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
        return error_fragment(request, [_message(exc)], status=status, target=target)
    if request.htmx:
        return render(
            request, "audit/components/card.html#card", card_context(request, feedback.statement)
        )
    messages.success(request, "Submitted for review.")
    return redirect(safe_next(request, statement_url(feedback.statement)))


# --- history ----------------------------------------------------------------------------------


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
        return error_fragment(request, [_message(exc)], status=status, target="#history-msg")
    messages.success(request, f"Restored revision {revision.label} as version {feedback.version}.")
    if request.htmx:
        return render(request, "audit/history.html#history", history_context(request, feedback))
    return redirect(reverse("audit:feedback_history", args=[feedback.pk]))
