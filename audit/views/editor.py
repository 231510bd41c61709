"""The editor's context: a coding's items as form rows (each with its problems and, beside it,
the AI item it corresponds to), its people and bonds to choose from, and the card it opens in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render

from audit.display import (
    FIELD_WORDS,
    Card,
    Labels,
    SubmitSummary,
    distinct_names,
    field_problem,
    item_words,
    problem_sentence,
    submit_summary,
)
from audit.forms import (
    CHOICE_TITLES,
    CHOICES,
    COMMENT_MAX_LENGTH,
    issue_field,
    references_to,
)
from audit.models import Feedback
from audit.selectors.alignment import item_alignment
from audit.services import (
    feedback_problems,
    feedback_warnings,
)
from audit.services.feedback import (
    feedback_can_submit,
)
from audit.views.discussion import card_context
from audit.views.presence import presence_others
from audit.views.rows import StatementRow, ai_payloads, coded_payloads
from evalsite.http import HtmxHttpRequest
from metrics.families.payload.dates import date_reading
from metrics.families.payload.items import ENTITY_KINDS, cumulative
from metrics.families.payload.schema import PayloadIssue


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
    items = editor_items(
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
        summary=coding_summary(feedback, payload, len(problems)),
    )


def marked(warnings: list[PayloadIssue]) -> list[PayloadIssue]:
    """Warnings as a row shows them beside its fields (after them, a problem of the same field
    wins: it is what blocks the submit)."""
    return [replace(w, message=f"warning: {w.message} (submit allowed)") for w in warnings]


def coding_summary(feedback: Feedback, payload: dict, problems: int) -> SubmitSummary:
    """The submit confirm's plain summary: changes against the AI's extraction the coding
    started from (blind coding starts from nothing)."""
    source = feedback.source_extraction
    ai = source.pdp_deltas if source is not None else None
    return submit_summary(feedback_id=feedback.pk, ai=ai, coded=payload, problems=problems)


def editor_items(
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
    """Put on each editor item the AI card the extraction matcher pairs it with
    (``audit.selectors.alignment``), and return the AI cards left unpaired per kind; None when
    the AI is hidden (blind coding) or absent."""
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


def row_errors(feedback: Feedback, issues: list[PayloadIssue]) -> list[dict]:
    """Every editor row's problems (empty ones too, so fixed problems disappear at once)."""
    rows = editor_items(feedback.edited_extraction, issues)
    return [dict(row, feedback=feedback) for kind in ENTITY_KINDS for row in rows[kind]]
