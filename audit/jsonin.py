"""Bounded JSON parsing and input errors, shared by every JSON entry point.

API bodies, the JSON editor, imports and the metric families' evaluation files all parse
JSON here, within the same limits. Pure Python (no Django), so the metric library may
import it: it sits on audit's ground floor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass
class InputError(Exception):
    """A bad input file: names the file, where in it, and what was expected."""

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return f"{self.file}{where}: {self.message}"


# Limits every JSON input shares (API bodies, the JSON editor, imports, evaluation files).
MAX_JSON_DEPTH = 64
MAX_JSON_INT = 2**63 - 1


class JsonInputError(ValueError):
    """JSON text that is malformed or outside the limits; ``location`` says where if known."""

    def __init__(self, message: str, location: str = ""):
        self.message = message
        self.location = location
        super().__init__(f"{message} ({location})" if location else message)


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(int(text)) > MAX_JSON_INT:
        shown = text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"
        raise JsonInputError(f"integer {shown} is out of range (at most 2**63-1 in size)")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JsonInputError(f"number {text[:24]} is out of range")
    return value


def _parse_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON number")


def json_problem(data: Any) -> str | None:
    """Why parsed JSON data is refused (absurd nesting, NUL, lone surrogates), or None.

    Iterative, so deeply nested data cannot exhaust the stack. PostgreSQL cannot store NUL
    characters or lone UTF-16 surrogates, so they are refused here rather than failing later.
    """
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                return problem
        elif isinstance(value, dict):
            for key, item in value.items():
                stack.append((key, depth))
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return None


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored as text (NUL, lone surrogate), or None."""
    if "\x00" in text:
        return "text must not contain NUL (\\u0000) characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        return f"text must not contain a lone surrogate (\\u{code:04x})"
    return None


def parse_json(text: str) -> Any:
    """Parse JSON text within the shared limits, or raise JsonInputError saying what is wrong.

    Refused: syntax errors, NaN/Infinity, numbers that overflow (1e400), integers beyond
    64 bits, nesting deeper than MAX_JSON_DEPTH, NUL characters and lone surrogates.
    """
    try:
        data = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except json.JSONDecodeError as exc:
        raise JsonInputError(
            f"invalid JSON: {exc.msg}", f"line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise JsonInputError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    problem = json_problem(data)
    if problem:
        raise JsonInputError(problem)
    return data


def _decode(data: bytes | str, *, file: str) -> str:
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(file, "", f"not UTF-8 text ({exc.reason})") from exc
    return data


def load_json(data: bytes | str, *, file: str) -> Any:
    """Parse a JSON file within the shared limits, turning a problem into an InputError."""
    try:
        return parse_json(_decode(data, file=file))
    except JsonInputError as exc:
        raise InputError(file, exc.location, exc.message) from None


def load_jsonl(data: bytes | str, *, file: str) -> list[Any]:
    """Parse JSON Lines; blank lines are skipped, a bad line is named."""
    rows = []
    for number, line in enumerate(_decode(data, file=file).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(parse_json(line))
        except JsonInputError as exc:
            raise InputError(file, f"line {number}", exc.message) from None
    return rows
