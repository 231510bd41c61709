"""Input errors and bounded JSON parsing for the metric families.

They live in ``audit.jsonin`` (the ground floor, shared with the API and the editors);
this module keeps the library's import path working.
"""

from audit.jsonin import (
    MAX_JSON_DEPTH,
    MAX_JSON_INT,
    InputError,
    JsonInputError,
    json_problem,
    load_json,
    load_jsonl,
    parse_json,
    text_problem,
)

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_INT",
    "InputError",
    "JsonInputError",
    "json_problem",
    "load_json",
    "load_jsonl",
    "parse_json",
    "text_problem",
]
