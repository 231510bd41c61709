"""The adjudication screen of one statement: its codings aligned item by item, the agreed items
merged, the disputed ones coloured for the reviewer to decide (one key per choice)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from audit.models import Speaker, Statement
from audit.services.adjudication_state import (
    AdjudicationState,
    adjudication_choice_set,
    adjudication_reset,
    adjudication_state,
    adjudication_submit,
)
from audit.services.errors import WorkflowError
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest, error_fragment
from metrics.families.extraction.adjudication import DELETE_KEY, AlignedItem
from metrics.families.json_input import JsonInputError, parse_json

_CODER = re.compile(r"[0-9]{1,9}")
KIND_LABELS = {"people": "Person", "events": "Event", "pair_bonds": "Pair bond", "delete": "Delete"}
# Fields shown for each kind, in this order (links are shown by name).
SHOWN = {
    "people": ("name", "last_name", "gender", "parents"),
    "events": ("kind", "person", "spouse", "child", "description", "dateTime", "endDateTime",
               "dateCertainty", "location", "notes", "symptom", "anxiety", "relationship",
               "relationshipTargets", "relationshipTriangles", "functioning"),
    "pair_bonds": ("person_a", "person_b", "married"),
}  # fmt: skip
LINKS = {"person", "spouse", "child", "person_a", "person_b", "parent_a", "parent_b"}
LINK_LISTS = {"relationshipTargets", "relationshipTriangles"}


def _statement(pk: int) -> Statement:
    return get_object_or_404(
        Statement.objects.select_related("discussion", "speaker"),
        pk=pk,
        speaker__type=Speaker.Type.SUBJECT,
    )


def _names(state: AdjudicationState) -> dict[Any, str]:
    """Merged person id -> a readable name (the first coder's spelling), and ("bond", id) ->
    its two partners' names (a person's parents name a bond)."""
    names: dict[Any, str] = {}
    for item in state.alignment.items:
        if item.kind == "people":
            first = next(v for v in item.versions if v is not None)
            full = " ".join(str(first.get(k) or "") for k in ("name", "last_name")).strip()
            names[item.merged_id] = full or f"person {item.merged_id}"
    for item in state.alignment.items:
        if item.kind == "pair_bonds":
            first = next(v for v in item.versions if v is not None)
            partners = [
                names.get(first.get(k), f"#{first.get(k)}") for k in ("person_a", "person_b")
            ]
            names[("bond", item.merged_id)] = " & ".join(partners)
    return names


def _shown(value: Any, name: str, names: dict[Any, str]) -> str:
    if value in (None, "", []):
        return ""
    if name in LINKS:
        return names.get(value, f"#{value}")
    if name in LINK_LISTS and isinstance(value, list):
        return ", ".join(names.get(v, f"#{v}") for v in value)
    if name == "parents" and not isinstance(value, list):
        return names.get(("bond", value), f"bond {value}")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _fields(item: AlignedItem, version: Any, names: dict[Any, str]) -> list[tuple[str, str]]:
    if version is None:
        return []
    if item.kind == DELETE_KEY:
        return [("ids", ", ".join(map(str, version)) or "nothing")]
    return [
        (name, shown)
        for name in SHOWN[item.kind]
        if (shown := _shown(version.get(name), name, names))
    ]


def _row(item: AlignedItem, state: AdjudicationState, names: dict[Any, str]) -> dict[str, Any]:
    versions = [_fields(item, v, names) for v in item.versions]
    differing = {
        name
        for fields in versions
        for name, shown in fields
        if any(dict(other).get(name) != shown for other in versions)
    }
    choice = state.choices.get(item.key) or {}
    chosen = choice.get("coder")
    edited = "edit" in choice
    return {
        "key": item.key,
        "dom_id": "adj-" + item.key.replace(":", "_").replace("-", "m"),
        "kind": KIND_LABELS[item.kind],
        "unanimous": item.unanimous,
        "decided": item.unanimous or bool(choice),
        "edited": edited,
        "edited_fields": _fields(item, choice.get("edit"), names) if edited else [],
        "versions": [
            {
                "index": i,
                "number": i + 1,
                "coder": name,
                "fields": [(n, s, n in differing) for n, s in fields],
                "absent": item.versions[i] is None,
                "chosen": chosen == i,
            }
            for i, (name, fields) in enumerate(zip(state.coder_names, versions, strict=True))
        ],
        "agreed": _fields(item, item.agreed, names) if item.unanimous else [],
        "edit_text": json.dumps(
            choice.get("edit") or next((v for v in item.versions if v is not None), None),
            indent=1,
        ),
    }


def adjudication_context(statement: Statement, state: AdjudicationState) -> dict[str, Any]:
    names = _names(state)
    rows = [_row(item, state, names) for item in state.alignment.items]
    feedback = state.feedback
    return {
        "statement": statement,
        "discussion": statement.discussion,
        "coders": state.coder_names,
        "disputed": [r for r in rows if not r["unanimous"]],
        "agreed": [r for r in rows if r["unanimous"]],
        "n_unanimous": state.alignment.unanimous_count,
        "n_disputed": state.alignment.disputed_count,
        "n_unresolved": len(state.unresolved),
        "enough": len(state.codings) >= 2,
        "feedback": feedback,
        "locked": feedback is not None and feedback.is_approved,
        "resets": _resets(state),
    }


def _resets(state: AdjudicationState) -> list[dict[str, Any]]:
    """Earlier choices reset since the codings changed, grouped by reason, each choice named."""
    names = state.coder_names
    groups: dict[str, list[str]] = {}
    for entry in state.reset_choices:
        choice = entry.get("choice") or {}
        coder = choice.get("coder")
        if "edit" in choice:
            what = "your edit"
        elif isinstance(coder, int) and 0 <= coder < len(names):
            what = f"coder {coder + 1}'s version"
        else:
            what = "a coder's version"
        groups.setdefault(entry.get("reason", ""), []).append(f"{entry['key']} ({what})")
    return [
        {
            "count": len(items),
            "summary": f"{len(items)} earlier choice{' was' if len(items) == 1 else 's were'} "
            f"reset: {reason}",
            "items": items,
        }
        for reason, items in groups.items()
    ]


def _render(request: HtmxHttpRequest, statement: Statement, notice: str = "") -> HttpResponse:
    context = adjudication_context(statement, adjudication_state(statement=statement))
    context["notice"] = notice
    template = "audit/adjudication.html#adjudication" if request.htmx else "audit/adjudication.html"
    return render(request, template, context)


@require_GET
@admin_required
def adjudicate(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    return _render(request, _statement(pk))


def _act(
    request: HtmxHttpRequest, pk: int, act: Callable[[Statement], Any], notice: str
) -> HttpResponse:
    """Run one adjudication act; after it the updated screen (htmx) or a redirect to it, and a
    refusal as a 4xx fragment naming the problem."""
    statement = _statement(pk)
    try:
        act(statement)
    except WorkflowError as exc:
        return error_fragment(
            request, [str(exc)], status=exc.status_code, target=f"#adj-msg-{statement.pk}"
        )
    if request.htmx:
        return _render(request, statement, notice)
    messages.success(request, notice)
    return redirect(reverse("audit:adjudicate", args=[statement.pk]))


@require_POST
@admin_required
def choose(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """One disputed item decided: a coder's version (coder=n) or an edit (edit=JSON)."""
    key = request.POST.get("key", "")

    def decide(statement: Statement) -> None:
        choice = _posted_choice(request)
        adjudication_choice_set(statement=statement, admin=request.user, key=key, choice=choice)

    return _act(request, pk, decide, f"Decided {key}.")


def _posted_choice(request: HtmxHttpRequest) -> dict[str, Any]:
    if "edit" in request.POST:
        try:  # the limits of every JSON input: depth, numbers, NUL, lone surrogates
            return {"edit": parse_json(request.POST["edit"])}
        except JsonInputError as exc:
            raise WorkflowError(f"edit: not valid JSON ({exc}); nothing was changed.") from None
    coder = request.POST.get("coder", "")
    if not _CODER.fullmatch(coder):  # ASCII digits only: "²" is a digit to str.isdigit()
        shown = repr(coder) if len(coder) <= 20 else f"{coder[:12]!r}... ({len(coder)} characters)"
        raise WorkflowError(f"coder: a coder's number is required, not {shown}.")
    return {"coder": int(coder)}


@require_POST
@admin_required
def remerge(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    def reset(statement: Statement) -> None:
        adjudication_reset(statement=statement, admin=request.user)

    return _act(request, pk, reset, "Re-merged: back to the automatic merge.")


@require_POST
@admin_required
def produce(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    def submit(statement: Statement) -> None:
        adjudication_submit(statement=statement, admin=request.user)

    return _act(request, pk, submit, "Submitted the adjudicated coding: another admin approves it.")
