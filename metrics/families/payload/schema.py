"""The PDP-deltas payload schema and the ground-truth export schema, as JSON Schema.

One schema serves validation everywhere (import, API, UI) and is published for clients.
Errors are turned into specific messages: which item, which field, what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from metrics.families.json_input import MAX_JSON_DEPTH, text_problem
from metrics.families.payload.items import ENTITY_KINDS
from metrics.families.payload.rules import (
    CONFLICT,
    ISSUE_KINDS,
    MALFORMED,
    RULE,
    UNKNOWN,
    PayloadIssue,
)

GENDERS = ["male", "female", "abortion", "miscarriage", "unknown"]
EVENT_KINDS = [
    "bonded",
    "married",
    "birth",
    "adopted",
    "moved",
    "separated",
    "divorced",
    "shift",
    "death",
]
DIRECTIONS = ["up", "down", "same"]
RELATIONSHIPS = [
    "fusion",
    "conflict",
    "distance",
    "overfunctioning",
    "underfunctioning",
    "projection",
    "defined-self",
    "toward",
    "away",
    "inside",
    "outside",
    "cutoff",
]
DATE_CERTAINTIES = ["unknown", "approximate", "certain"]
SARF_VARIABLES = ("symptom", "anxiety", "relationship", "functioning")

_ID_RANGE = {"minimum": -(2**63 - 1), "maximum": 2**63 - 1}  # what any JSON input may hold
_ID = {"type": "integer", **_ID_RANGE}
_OPTIONAL_ID = {"type": ["integer", "null"], **_ID_RANGE}
_ID_LIST = {"type": "array", "items": _ID}
_TEXT = {"type": ["string", "null"], "maxLength": 10000}
_CONFIDENCE = {"type": ["number", "null"], "minimum": 0, "maximum": 1}


def _enum_or_null(values: list[str]) -> dict:
    return {"enum": [*values, None]}


PERSON_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id"],
    "properties": {
        "id": _ID,
        "name": _TEXT,
        "last_name": _TEXT,
        "gender": _enum_or_null(GENDERS),
        "parents": _OPTIONAL_ID,
        "parent_a": _OPTIONAL_ID,
        "parent_b": _OPTIONAL_ID,
        "confidence": _CONFIDENCE,
    },
}

EVENT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "kind"],
    "properties": {
        "id": _ID,
        "kind": {"enum": EVENT_KINDS},
        "person": _OPTIONAL_ID,
        "spouse": _OPTIONAL_ID,
        "child": _OPTIONAL_ID,
        "description": _TEXT,
        "notes": _TEXT,
        "location": _TEXT,
        "dateTime": _TEXT,
        "endDateTime": _TEXT,
        "dateCertainty": _enum_or_null(DATE_CERTAINTIES),
        "symptom": _enum_or_null(DIRECTIONS),
        "anxiety": _enum_or_null(DIRECTIONS),
        "relationship": _enum_or_null(RELATIONSHIPS),
        "relationshipTargets": _ID_LIST,
        "relationshipTriangles": _ID_LIST,
        "functioning": _enum_or_null(DIRECTIONS),
        "confidence": _CONFIDENCE,
    },
}

PAIR_BOND_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "person_a", "person_b"],
    "properties": {
        "id": _ID,
        "person_a": _ID,
        "person_b": _ID,
        "married": {"type": ["boolean", "null"]},
        "confidence": _CONFIDENCE,
    },
}

PDP_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "PDP deltas",
    "type": "object",
    "properties": {
        "people": {"type": "array", "items": PERSON_SCHEMA},
        "events": {"type": "array", "items": EVENT_SCHEMA},
        "pair_bonds": {"type": "array", "items": PAIR_BOND_SCHEMA},
        "delete": _ID_LIST,
    },
    "additionalProperties": False,
}

# Two validators of the one schema: the compiled one answers "valid?" (nearly every payload
# is), the Python one says what is wrong with one that is not, in the words of _describe.
_PDP_VALIDATOR = Draft202012Validator(PDP_SCHEMA)
_PDP_IS_VALID = jsonschema_rs.validator_for(PDP_SCHEMA).is_valid


ISSUE_STATUS = {MALFORMED: 400, UNKNOWN: 404, CONFLICT: 409, RULE: 422}


class PayloadError(ValueError):
    """A payload that does not follow the schema; carries every issue found."""

    def __init__(self, issues: list[PayloadIssue], *, where: str = ""):
        self.issues = issues
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(prefix + "; ".join(str(i) for i in issues))

    @property
    def status_code(self) -> int:
        """The gravest problem decides: malformed 400, unknown object 404, refused by an
        object's state 409, a rule between values 422."""
        kinds = {issue.kind for issue in self.issues}
        gravest = next((kind for kind in ISSUE_KINDS if kind in kinds), MALFORMED)
        return ISSUE_STATUS[gravest]

    def messages(self) -> list[str]:
        prefix = f"{self.where}." if self.where else ""
        return [f"{prefix}{i}" if i.path else str(i) for i in self.issues]


def format_path(parts) -> str:
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _describe(error: SchemaError) -> str:
    """Say what was expected, in words a person coding a statement understands."""
    value = error.instance
    if error.validator == "enum" and isinstance(error.validator_value, list):
        allowed = ", ".join("null" if v is None else v for v in error.validator_value)
        return f"{value!r} is not one of: {allowed}"
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {expected}, got {_json_type(value)} {_short(value)}"
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"missing required field '{missing}'"
    if error.validator == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown key(s)")
    if error.validator in {"minimum", "maximum"}:
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        bounds = schema.get("minimum"), schema.get("maximum")
        return f"{_short(value)} is out of range (expected between {bounds[0]} and {bounds[1]})"
    if error.validator == "maxLength":
        return f"text is too long (at most {error.validator_value} characters)"
    return error.message


def excerpt(value: Any) -> str:
    """A value of the input as an error message may show it: a short excerpt, never more."""
    return _short(value)


def _short(value: Any) -> str:
    """A value as shown in a message: long texts, lists and huge numbers cut short."""
    shown = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else "a huge integer"
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _duplicate_id_issues(payload: dict) -> list[PayloadIssue]:
    issues = []
    for key in ENTITY_KINDS:
        seen: dict[int, int] = {}
        items = payload.get(key)
        for index, item in enumerate(items if isinstance(items, list) else []):
            item_id = item.get("id") if isinstance(item, dict) else None
            if not isinstance(item_id, int):
                continue
            if item_id in seen:
                issues.append(
                    PayloadIssue(
                        f"{key}[{index}].id",
                        f"duplicate id {item_id} (already used by {key}[{seen[item_id]}])",
                        kind=RULE,  # unique values across items: no JSON Schema keyword says it
                    )
                )
            seen[item_id] = index
    return issues


def pdp_issues(payload: Any, *, texts_checked: bool = False) -> list[PayloadIssue]:
    """Every problem with a PDP-deltas payload, in document order; empty when it is valid.
    ``texts_checked``: the payload was read by json_input within its limits (json_problem),
    so its texts and depth need no second look."""
    if not isinstance(payload, dict):
        return [PayloadIssue("", f"expected a JSON object, got {_json_type(payload)}")]
    text_issues = [] if texts_checked else _text_issues(payload)
    if text_issues:
        return text_issues
    if _schema_valid(payload):
        return _duplicate_id_issues(payload)
    errors = sorted(_PDP_VALIDATOR.iter_errors(payload), key=lambda e: list(map(str, e.path)))
    issues = [PayloadIssue(format_path(e.absolute_path), _describe(e)) for e in errors]
    return issues + _duplicate_id_issues(payload)


def _schema_valid(payload: dict) -> bool:
    """The compiled validator's answer; anything it cannot take (keys that are not text, a
    type JSON does not have) is left to the Python validator to describe."""
    try:
        return _PDP_IS_VALID(payload)
    except (ValueError, TypeError, OverflowError):
        return False


def _text_issues(payload: Any) -> list[PayloadIssue]:
    """Texts and keys that cannot be stored (NUL, lone surrogates) or nesting beyond the limit.

    Every entry point reaches this (the form editor posts no JSON, so its NUL characters
    are only seen here). Iterative, so deep nesting cannot exhaust the stack.
    """
    issues = []
    stack: list[tuple[Any, tuple]] = [(payload, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_JSON_DEPTH:
            return [PayloadIssue(format_path(path[:3]), f"nested deeper than {MAX_JSON_DEPTH}")]
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                issues.append(PayloadIssue(format_path(path), problem))
        elif isinstance(value, dict):
            for key, item in value.items():
                problem = text_problem(key) if isinstance(key, str) else None
                if problem:
                    issues.append(PayloadIssue(format_path(path), f"a key: {problem}"))
                stack.append((item, (*path, "(bad key)" if problem else key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(value))
    return sorted(issues, key=lambda issue: issue.path)


def validate_pdp(payload: Any, *, where: str = "") -> dict:
    """Return a normalised copy of a valid payload, or raise PayloadError."""
    issues = pdp_issues(payload)
    if issues:
        raise PayloadError(issues, where=where)
    return normalize_pdp(payload)


def normalize_pdp(payload: dict) -> dict:
    """Fill in the four lists so stored payloads always have the same shape."""
    normalized = {key: list(payload.get(key) or []) for key in (*ENTITY_KINDS, "delete")}
    return normalized


# --- Ground-truth export format ----------------------------------------------------------------

APPROVED_FEEDBACK_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["auditor", "edited_extraction", "approved"],
    "properties": {
        "auditor": {"type": "string"},
        "auditor_id": {"type": "string"},
        "edited_extraction": PDP_SCHEMA,
        "approved": {"const": True},
        "approved_by": {"type": ["string", "null"]},
        "approved_at": {"type": ["string", "null"]},
        "approval": {
            "enum": ["reviewed", "self", "imported"],
            "description": "reviewed by another admin, self-approved (one-admin deployment, "
            "with approval_reason) or imported (approved_by is the importing admin)",
        },
        "approval_reason": {"type": "string"},
        "guideline_version": {
            "type": ["integer", "null"],
            "description": "the coding guidelines version in force when the auditor submitted "
            "(see the top-level guidelines); null for imported or earlier ground truth",
        },
        "comment": {
            "type": "string",
            "description": "only with include_notes: the auditor's note on the coding (an "
            "import keeps it in the imported coding's note)",
        },
        "comments": {
            "type": "array",
            "description": "only with include_notes: the statement's comment thread, oldest "
            "first (an import ignores it)",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["author", "kind", "body"],
                "properties": {
                    "author": {"type": "string"},
                    "kind": {"enum": ["comment", "rejection"]},
                    "feedback": {
                        "type": ["integer", "null"],
                        "description": "the coding the comment is about; null: the statement",
                    },
                    "body": {"type": "string"},
                    "created_at": {"type": "string"},
                },
            },
        },
    },
}

RUN_REFERENCE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "description": "the extraction run: a registered run's external_id, or a configuration "
    "(model_name, prompt_version, optionally prompt_text or prompt_hash, parameters, unit) of "
    "which the import registers a new replicate (one per description in a file; with an "
    "external_id, once)",
    "properties": {
        "model_name": {"type": "string"},
        "prompt_version": {"type": ["string", "null"]},
        "prompt_text": {"type": "string"},
        "prompt_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "parameters": {
            "type": "object",
            "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
        },
        "unit": {"enum": ["statement", "discussion"]},
        "configuration_notes": {"type": "string"},
        "notes": {"type": "string"},
        "external_id": {"type": "string"},
    },
}

ENTITY_LISTS_SCHEMA = {
    "type": "object",
    "description": "by kind: people, events, pair_bonds",
    "additionalProperties": {"type": "array", "items": {"type": "object"}},
}

EXPORT_STATEMENT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "order", "text", "speaker_type"],
    "properties": {
        "id": {"type": "integer"},
        "order": {"type": "integer"},
        "text": {"type": "string"},
        "speaker_type": {"enum": ["Subject", "Expert", "subject", "expert"]},
        "speaker": {"type": ["string", "null"]},
        "pdp_deltas": {"oneOf": [PDP_SCHEMA, {"type": "null"}]},
        "extraction_run": {"oneOf": [RUN_REFERENCE_SCHEMA, {"type": "null"}]},
        "ground_truth": {
            "oneOf": [PDP_SCHEMA, {"type": "null"}],
            "description": "legacy files: the approved extraction without its metadata",
        },
        "approved_feedback": {"oneOf": [APPROVED_FEEDBACK_SCHEMA, {"type": "null"}]},
        "f1": {
            "type": ["object", "null"],
            "description": "only with include_f1: the chosen run's F1 of the statement "
            "against its approved coding, computed by the export (null: no approved coding, "
            "or the run did not extract it), the items matched (AI id, "
            "ground-truth id, score), missed (ground-truth items) and spurious (AI items); an "
            "import ignores it",
            "additionalProperties": False,
            "properties": {
                "run": RUN_REFERENCE_SCHEMA,
                "status": {"enum": ["fresh", "stale", "failed"]},
                "computed_at": {"type": ["string", "null"]},
                "figures": {
                    "type": "object",
                    "additionalProperties": {"type": ["number", "boolean", "null"]},
                },
                "matched": ENTITY_LISTS_SCHEMA,
                "missed": ENTITY_LISTS_SCHEMA,
                "spurious": ENTITY_LISTS_SCHEMA,
            },
        },
        "provisional_ground_truth": {
            "type": ["object", "null"],
            "description": "only with include_provisional: the run's extraction review triage "
            "accepted without review (not human ground truth; an import ignores it)",
            "additionalProperties": False,
            "properties": {
                "run": RUN_REFERENCE_SCHEMA,
                "confidence": {"type": "number"},
                "pdp_deltas": {"oneOf": [PDP_SCHEMA, {"type": "null"}]},
            },
        },
    },
}

GROUND_TRUTH_EXPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "/api/schema/ground-truth.json",
    "title": "evalsite ground-truth export",
    "type": "object",
    "required": ["schema_version", "exported_at", "discussions"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": "1"},
        "exported_at": {"type": "string"},
        "guidelines": {
            "type": "array",
            "description": "every version of the coding guidelines, oldest first (an import "
            "ignores them)",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["version", "text"],
                "properties": {
                    "version": {"type": "integer"},
                    "text": {"type": "string"},
                    "note": {"type": "string"},
                    "author": {"type": "string"},
                    "created_at": {"type": "string"},
                },
            },
        },
        "discussions": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "summary", "statements"],
                "properties": {
                    "id": {"type": "integer"},
                    "external_id": {"type": ["string", "null"]},
                    "summary": {"type": "string"},
                    "date": {"type": ["string", "null"]},
                    "created_at": {"type": "string"},
                    "discussion_extraction": {
                        "type": ["object", "null"],
                        "description": "a discussion-unit run's extraction: one PDP for the "
                        "whole discussion",
                        "additionalProperties": False,
                        "required": ["pdp"],
                        "properties": {"extraction_run": RUN_REFERENCE_SCHEMA, "pdp": PDP_SCHEMA},
                    },
                    "statements": {"type": "array", "items": EXPORT_STATEMENT_SCHEMA},
                },
            },
        },
    },
}
