"""Shared pieces of the metric families: input errors and parsing helpers."""

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


def load_json(data: bytes | str, *, file: str) -> Any:
    """Parse JSON text, turning a syntax error into an InputError naming the line."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(file, "", f"not UTF-8 text ({exc.reason})") from exc
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise InputError(
            file, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from exc


def load_jsonl(data: bytes | str, *, file: str) -> list[Any]:
    """Parse JSON Lines; blank lines are skipped, a bad line is named."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(file, "", f"not UTF-8 text ({exc.reason})") from exc
    rows = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(file, f"line {number}", f"invalid JSON: {exc.msg}") from exc
    return rows
