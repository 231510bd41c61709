"""Forms of the audit screens, and the feedback editor's POST <-> PDP payload mapping.

The editor posts one field per item attribute, named ``<kind>-<index>-<field>`` (for example
``events-2-dateTime``). Reading them back starts from the stored item with the same id, so
attributes the form does not show (notes, legacy parent_a/parent_b, ...) are kept as they are.
Values are taken as typed: the schema (``validate_pdp``) and the rules of ``metrics.families.payload.rules``
decide what is wrong and say so; ``metrics.families.payload.rules.mark_edited`` keeps untouched items as they were.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.http import QueryDict

from audit.definitions import code_definition
from audit.models import AuditLogEntry
from metrics.families.json_input import JsonInputError, parse_json, text_problem
from metrics.families.payload.items import ENTITY_KINDS
from metrics.families.payload.schema import (
    DATE_CERTAINTIES,
    DIRECTIONS,
    EVENT_KINDS,
    GENDERS,
    RELATIONSHIPS,
    PayloadError,
    PayloadIssue,
)

# Field name -> how the form posts it: "text", "enum", "id", "ids" (multi-select) or "bool".
FIELDS: dict[str, dict[str, str]] = {
    "people": {
        "name": "text",
        "last_name": "text",
        "gender": "enum",
        "parents": "id",
    },
    "events": {
        "kind": "enum",
        "person": "id",
        "spouse": "id",
        "child": "id",
        "dateTime": "text",
        "dateCertainty": "enum",
        "description": "text",
        "location": "text",
        "symptom": "enum",
        "anxiety": "enum",
        "relationship": "enum",
        "relationshipTargets": "ids",
        "relationshipTriangles": "ids",
        "functioning": "enum",
    },
    "pair_bonds": {"person_a": "id", "person_b": "id", "married": "bool"},
}

CHOICES = {
    "gender": GENDERS,
    "kind": EVENT_KINDS,
    "dateCertainty": DATE_CERTAINTIES,
    "symptom": DIRECTIONS,
    "anxiety": DIRECTIONS,
    "relationship": RELATIONSHIPS,
    "functioning": DIRECTIONS,
}
# The editor's selects: (value, its short definition or "") per field, for the options' tooltips.
CHOICE_TITLES = {
    name: [(value, code_definition(name, value)) for value in values]
    for name, values in CHOICES.items()
}


def _as_id(raw: str) -> Any:
    """An integer id, None for "no one", or the raw text so the schema can name the mistake."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        return raw


def _read(kind: str, name: str, data: QueryDict, key: str) -> Any:
    how = FIELDS[kind][name]
    if how == "ids":
        # A hidden empty input rides along so "nothing selected" is still posted.
        return [_as_id(v) for v in data.getlist(key) if v.strip()]
    raw = data.get(key, "")
    if how == "id":
        return _as_id(raw)
    if how == "bool":
        return {"yes": True, "no": False}.get(raw)
    return raw.strip() or None


def payload_from_post(data: QueryDict, stored: dict) -> dict:
    """The payload the editor form describes, on top of the stored one."""
    payload: dict[str, Any] = {}
    for kind in ENTITY_KINDS:
        stored_by_id = {item.get("id"): item for item in stored.get(kind) or []}
        items = []
        index = 0
        while f"{kind}-{index}-id" in data:
            ident = _as_id(data.get(f"{kind}-{index}-id", ""))
            item = copy.deepcopy(stored_by_id.get(ident) or {"id": ident})
            for name in FIELDS[kind]:
                key = f"{kind}-{index}-{name}"
                if key not in data:
                    continue
                value = _read(kind, name, data, key)
                # An empty control for an attribute the item never had adds nothing.
                if value in (None, []) and name not in item:
                    continue
                item[name] = value
            items.append(item)
            index += 1
        payload[kind] = items
    payload["delete"] = [_as_id(v) for v in data.getlist("delete") if v.strip()]
    return payload


def next_id(*payloads: dict) -> int:
    """A fresh negative id: new items use negative ids like the AI's, below every id in use."""
    used = [
        item.get("id")
        for payload in payloads
        for kind in ENTITY_KINDS
        for item in payload.get(kind) or []
        if isinstance(item.get("id"), int)
    ]
    return min([0, *used]) - 1


def apply_op(payload: dict, op: str, data: QueryDict, known: list[dict]) -> dict:
    """Add or remove an item as asked by the editor button that was pressed."""
    verb, _, rest = op.partition(":")
    kind, _, ident = rest.partition(":")
    if verb == "add" and kind in ENTITY_KINDS:
        payload[kind].append(new_item(kind, next_id(payload, *known), data))
    elif verb == "add" and kind == "delete":
        target = _as_id(data.get("delete-new", ""))
        if target is not None and target not in payload["delete"]:
            payload["delete"].append(target)
    elif verb == "remove_clear" and kind in ENTITY_KINDS:
        # One act: the item goes, and so does every pointer at it (asked once, in the editor).
        target = _as_id(ident)
        payload[kind] = [i for i in payload[kind] if i.get("id") != target]
        clear_references(payload, kind, target)
    elif verb == "remove" and kind in (*ENTITY_KINDS, "delete"):
        target = _as_id(ident)
        if kind == "delete":
            payload["delete"] = [i for i in payload["delete"] if i != target]
        else:
            payload[kind] = [i for i in payload[kind] if i.get("id") != target]
    return payload


# Which fields of an item point at another item, and of which kind.
REFERENCE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "people": (("parents", "pair_bonds"), ("parent_a", "people"), ("parent_b", "people")),
    "events": (
        ("person", "people"),
        ("spouse", "people"),
        ("child", "people"),
        ("relationshipTargets", "people"),
        ("relationshipTriangles", "people"),
    ),
    "pair_bonds": (("person_a", "people"), ("person_b", "people")),
}


def references_to(payload: dict, kind: str, ident: Any) -> list[tuple[str, int, str]]:
    """(kind, index, field) of each field of this payload's items that points at the item."""
    found = []
    for owner_kind, fields in REFERENCE_FIELDS.items():
        for index, item in enumerate(payload.get(owner_kind) or []):
            for name, target_kind in fields:
                value = item.get(name) if isinstance(item, dict) else None
                if target_kind == kind and (
                    value == ident or (isinstance(value, list) and ident in value)
                ):
                    found.append((owner_kind, index, name))
    return found


def clear_references(payload: dict, kind: str, ident: Any) -> None:
    """Every field that points at the item, emptied (a list loses just that id)."""
    for owner_kind, index, name in references_to(payload, kind, ident):
        item = payload[owner_kind][index]
        value = item[name]
        item[name] = [i for i in value if i != ident] if isinstance(value, list) else None


def new_item(kind: str, ident: int, data: QueryDict) -> dict:
    if kind == "people":
        return {"id": ident, "name": None, "last_name": None, "gender": None}
    if kind == "events":
        # "shift" is what most SARF coding adds; the kind select is right there to change it.
        return {"id": ident, "kind": "shift", "person": _as_id(data.get("events-new-person", ""))}
    return {
        "id": ident,
        "person_a": _as_id(data.get("pair_bonds-new-person_a", "")),
        "person_b": _as_id(data.get("pair_bonds-new-person_b", "")),
        "married": None,
    }


ISSUE_PATH = re.compile(r"^(people|events|pair_bonds)\[(\d+)\](?:\.(\w+))?")


def issue_field(issue_path: str) -> tuple[str, int, str] | None:
    """``events[2].relationshipTargets[0]`` -> ("events", 2, "relationshipTargets")."""
    match = ISSUE_PATH.match(issue_path)
    if match is None:
        return None
    return match.group(1), int(match.group(2)), match.group(3) or ""


def field_name(issue_path: str) -> str:
    """The editor input an issue is about (``events-2-kind``), or "" for whole-payload issues."""
    found = issue_field(issue_path)
    if found is None:
        return "delete" if issue_path.startswith("delete") else ""
    kind, index, name = found
    return f"{kind}-{index}-{name}" if name else ""


def parse_json_payload(text: str) -> Any:
    """The raw JSON editor's text as data, or a PayloadError saying where the syntax breaks."""
    try:
        return parse_json(text)
    except JsonInputError as exc:
        message = str(exc).removeprefix("invalid JSON: ")
        raise PayloadError([PayloadIssue("", f"not valid JSON: {message}")]) from None


COMMENT_MAX_LENGTH = 5000


def reviewer_note(data: QueryDict) -> str | None:
    """The note for the reviewer as typed, or None when the form did not post one."""
    note = data.get("comment")
    if note is not None and len(note) > COMMENT_MAX_LENGTH:
        raise forms.ValidationError(
            f"comment: the note for the reviewer is too long "
            f"(at most {COMMENT_MAX_LENGTH} characters, got {len(note)})."
        )
    problem = text_problem(note) if note else None
    if problem:  # a NUL cannot be stored in PostgreSQL text; the API refuses it too
        raise forms.ValidationError(f"comment: the note for the reviewer: {problem}.")
    return note


def base_version(data: QueryDict) -> int:
    """The version the edit started from; required so nobody's save is overwritten silently."""
    raw = data.get("version", "")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):  # not "²", not 5,000 digits
        raise forms.ValidationError("This form did not say which version it edits.")
    return int(raw)


class QueueFilterForm(forms.Form):
    STATUSES = [
        ("", "All"),
        ("not_started", "Not started"),
        ("in_progress", "In progress"),
        ("needs_changes", "Needs changes"),
        ("done", "Done"),
    ]
    status = forms.ChoiceField(choices=STATUSES, required=False)
    q = forms.CharField(required=False, max_length=200, label="Search summaries")


class RejectForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "What should the auditor change?"}),
        max_length=5000,
    )


class AuditLogFilterForm(forms.Form):
    """Who, what, when and which object, for the admins' audit log page."""

    actor: forms.ModelChoiceField[Any] = forms.ModelChoiceField(
        queryset=None, required=False, label="Who", empty_label="anyone"
    )
    action = forms.ChoiceField(required=False, label="What")
    since = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )
    object_type = forms.ChoiceField(required=False, label="Object")
    object_id = forms.CharField(required=False, max_length=64, label="Id")

    def __init__(self, *args, object_types: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        actor, action, object_type = (self.fields[n] for n in ("actor", "action", "object_type"))
        assert isinstance(actor, forms.ModelChoiceField)
        assert isinstance(action, forms.ChoiceField) and isinstance(object_type, forms.ChoiceField)
        actor.queryset = get_user_model().objects.order_by("username")
        action.choices = [("", "anything"), *AuditLogEntry.Action.choices]
        object_type.choices = [("", "any")] + [(t, t) for t in object_types]

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            self.add_error("until", "The end date is before the start date.")
        return data
