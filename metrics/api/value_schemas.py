"""The OpenAPI schemas of stored metric values, so a generated client reads typed figures.

Extraction F1's values are written from its result dataclasses (``to_dict``), so their schemas
are read from the same dataclasses: a field added there is in the schema. A result's
``values`` is one of these per family and scope, or (other families, rows stored by older code)
a plain object. Only the fields that tell the shapes apart are required, so a row written by
an older version still parses as its shape.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from metrics.families.extraction.results import (
    CumulativeF1Metrics,
    StatementF1Metrics,
    SystemCumulativeF1Metrics,
    SystemF1Metrics,
)
from metrics.families.extraction.settings import MatchSettings

REF = "#/components/schemas/"
MATCH_ROW = "ExtractionMatch"
# Component name per dataclass; the totals ComparisonMetrics.to_dict adds are named here too.
DATACLASS_COMPONENTS: dict[type, str] = {
    StatementF1Metrics: "ExtractionStatementValues",
    CumulativeF1Metrics: "ExtractionDiscussionValues",
    SystemF1Metrics: "ExtractionPooledStatementValues",
    SystemCumulativeF1Metrics: "ExtractionPooledDiscussionValues",
    MatchSettings: "ExtractionMatchSettings",
}
# The fields that tell the shapes apart (a client tries each shape in turn).
REQUIRED: dict[type, list[str]] = {
    StatementF1Metrics: ["statement_id", "aggregate_micro_f1"],
    CumulativeF1Metrics: ["statement_count", "aggregate_micro_f1"],
    SystemF1Metrics: ["total_statements"],
    SystemCumulativeF1Metrics: ["total_discussions"],
}
AGGREGATE_TOTALS = ("aggregate_tp", "aggregate_fp", "aggregate_fn")
RUN_VALUES = "ExtractionRunValues"
SYSTEM_VALUES = "ExtractionSystemValues"
RUN_SUMMARY = "ExtractionRunSummary"
UNIT = {
    "type": "string",
    "enum": ["statement", "discussion"],
    "description": "what one extraction of the run covers: a subject statement, or a whole "
    "discussion (then its statement figures are null: not applicable)",
}
# In the order a client tries them: the most specific first, a plain object last.
VALUE_SHAPES = (
    "ExtractionStatementValues",
    "ExtractionDiscussionValues",
    RUN_VALUES,
    SYSTEM_VALUES,
)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF + name}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return {"allOf": [schema], "nullable": True}
    return {**schema, "nullable": True}


def type_schema(hint: Any, *, name: str = "") -> dict[str, Any]:
    """An OpenAPI 3.0 schema for a field's type hint."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        present = [arg for arg in args if arg is not type(None)]
        schema = type_schema(present[0], name=name) if len(present) == 1 else {}
        return _nullable(schema) if type(None) in args else schema
    if origin is Literal:
        return {"type": "string", "enum": list(args)}
    if hint in DATACLASS_COMPONENTS:
        return _ref(DATACLASS_COMPONENTS[hint])
    if name.endswith("_matches"):
        return {"type": "array", "items": _ref(MATCH_ROW)}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object", "additionalProperties": type_schema(args[1]) if args else {}}
    simple = {int: "integer", float: "number", bool: "boolean", str: "string"}
    return {"type": simple[hint]} if hint in simple else {}


def dataclass_schema(cls: type) -> dict[str, Any]:
    hints = get_type_hints(cls)
    properties = {f.name: type_schema(hints[f.name], name=f.name) for f in dataclasses.fields(cls)}
    if "aggregate_micro_f1" in properties and "people_tp" in properties:
        properties.update({total: {"type": "integer"} for total in AGGREGATE_TOTALS})
    if "sarf_pairs" in properties:  # [ai value, gt value] per matched event pair
        pair = {"type": "array", "items": {"type": "string", "nullable": True}}
        properties["sarf_pairs"]["additionalProperties"] = {"type": "array", "items": pair}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if REQUIRED.get(cls):
        schema["required"] = REQUIRED[cls]
    if cls.__doc__:
        schema["description"] = " ".join(cls.__doc__.split())
    return schema


def _figure(description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "number", "nullable": True}
    return {**schema, "description": description} if description else schema


def metric_value_components() -> dict[str, dict[str, Any]]:
    """Every component the metric values refer to, by name."""
    components = {name: dataclass_schema(cls) for cls, name in DATACLASS_COMPONENTS.items()}
    components[MATCH_ROW] = {
        "type": "object",
        "description": "A matched pair: the AI's item id, the ground truth's, and their score.",
        "properties": {"ai_id": {}, "gt_id": {}, "score": {"type": "number"}},
    }
    components[RUN_VALUES] = {
        "type": "object",
        "description": "A run's extraction F1: pooled over its statements (system) and over "
        "its discussions' accumulated extractions (cumulative).",
        "required": ["system", "cumulative"],
        "properties": {
            "system": _nullable(_ref("ExtractionPooledStatementValues")),
            "cumulative": _ref("ExtractionPooledDiscussionValues"),
            "n_statements": {
                "type": "integer",
                "nullable": True,
                "description": "null for a discussion-unit run: not applicable",
            },
            "n_discussions": {"type": "integer"},
            "unit": UNIT,
            "n_left_out": {
                "type": "integer",
                "nullable": True,
                "description": "a discussion-unit run: discussions it extracted that were not "
                "scored, some subject statement having no approved ground truth",
            },
        },
    }
    components[RUN_SUMMARY] = {
        "type": "object",
        "properties": {
            "run_id": {"type": "integer", "nullable": True},
            "label": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
            "status": {"type": "string"},
            "aggregate_micro_f1": _figure(),
            "people_f1": _figure(),
            "events_f1": _figure(),
            "pair_bonds_f1": _figure(),
            "exact_match_rate": _figure(),
            "cumulative_f1": _figure("the run's cumulative (per discussion) aggregate F1"),
            "n_statements": {"type": "integer", "nullable": True},
            "n_discussions": {"type": "integer"},
            "unit": UNIT,
            "configuration_id": {"type": "integer"},
            "replicate": {"type": "integer"},
        },
    }
    components[SYSTEM_VALUES] = {
        "type": "object",
        "description": "The trend over runs: one summary per run, oldest first.",
        "required": ["runs"],
        "properties": {
            "runs": {"type": "array", "items": _ref(RUN_SUMMARY)},
            "n_approved": {"type": "integer"},
        },
    }
    return components


def metric_values_schema() -> dict[str, Any]:
    """The schema of a result's ``values``: extraction F1's per scope, or another object."""
    other = {
        "type": "object",
        "additionalProperties": {},
        "description": "another family's figures (docs/families.md)",
    }
    return {"anyOf": [*(_ref(name) for name in VALUE_SHAPES), other], "nullable": True}
