"""The building blocks of the family registry: input files, file roles, typed options, families.

See `metrics.evaluations.registry` for the entries themselves. Options are typed: a value may
come as JSON (API) or as text (form field, ``key=value`` on the command line) and is coerced;
a bad one raises `OptionError` naming the option.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

from metrics.families.json_input import JsonInputError, parse_json
from metrics.families.runs import Option as OptionSpec
from metrics.families.runs import RunFile

TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})


class OptionError(ValidationError):
    """A bad option (unknown name, wrong type, value not allowed); the message names it."""

    def __init__(self, name: str | None, message: str) -> None:
        self.option = name
        super().__init__(f"option {name!r}: {message}" if name else message)


class UnknownFamilyError(ValidationError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.family = name
        super().__init__(f"unknown metric family {name!r}; known: {', '.join(known)}")


# One uploaded (or read) input file: its original name and its bytes.
InputFile = RunFile
Files = Mapping[str, Sequence[RunFile]]


@dataclass(frozen=True)
class FileRole:
    """An input file the family accepts."""

    name: str
    label: str
    formats: tuple[str, ...]
    required: bool = True
    max_files: int = 1
    example: str | None = None  # a file name under EXAMPLES_DIR
    help: str = ""

    @property
    def accept(self) -> str:
        """For <input type=file accept=...>."""
        return ",".join(f".{fmt}" for fmt in self.formats)


@dataclass(frozen=True)
class Option(OptionSpec):
    """A family option as the registry offers it: the family's declaration (kind: str, int,
    float, bool, choice, str_list, float_list, mapping) with its default, coerced from JSON
    or text."""

    default: Any = None

    def coerce(self, value: Any) -> Any:
        """The typed value (from JSON or from text such as a form field or `key=value`);
        None or empty text gives the default. OptionError names this option."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return self.default
        try:
            return _COERCERS[self.kind](self, value)
        except (TypeError, ValueError) as exc:
            raise OptionError(self.name, str(exc)) from exc

    def as_text(self, value: Any) -> str:
        """A value as the text a form field or the command line would give."""
        if value is None:
            return ""
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind in ("str_list", "float_list"):
            return ", ".join(str(item) for item in value)
        if self.kind == "mapping":
            return json.dumps(value)
        return str(value)


@dataclass(frozen=True)
class Family:
    name: str
    label: str
    description: str
    roles: tuple[FileRole, ...]
    options: tuple[Option, ...]
    parse: Callable[[Mapping[str, Sequence[InputFile]], Mapping[str, Any]], Any]
    compute: Callable[[Any, Mapping[str, Any]], dict]
    card_context: Callable[[Mapping[str, Any]], dict]
    # Deeper checks of the resolved options by the family itself (raises ValueError).
    check_options: Callable[[Mapping[str, Any]], None] | None = None
    # Plain-text summary for the management commands.
    report: Callable[[Mapping[str, Any]], str] | None = None
    # Whether two evaluations' inputs can be recomputed together into a paired artifact.
    pairable: bool = False

    @property
    def card_template(self) -> str:
        return f"metrics/cards/family_{self.name}.html"

    def role(self, name: str) -> FileRole | None:
        return next((role for role in self.roles if role.name == name), None)

    def option(self, name: str) -> Option | None:
        return next((option for option in self.options if option.name == name), None)

    def defaults(self) -> dict[str, Any]:
        return {option.name: option.default for option in self.options}

    def resolve_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Every declared option, typed, defaults filled in. Unknown names are refused."""
        options = dict(options or {})
        unknown = sorted(set(options) - {option.name for option in self.options})
        if unknown:
            known = ", ".join(option.name for option in self.options) or "none"
            raise OptionError(unknown[0], f"unknown option for {self.name}; known: {known}")
        resolved = {option.name: option.coerce(options.get(option.name)) for option in self.options}
        if self.check_options is not None:
            try:
                self.check_options(resolved)
            except ValueError as exc:
                raise OptionError(None, str(exc)) from exc
        return resolved


# --- coercion --------------------------------------------------------------------------------


def _text(option: Option, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {value!r}")
    return value.strip()


def _int(option: Option, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected an integer, got {value!r}")
    if isinstance(value, str):
        if len(value.strip()) > 20:
            raise ValueError(f"expected an integer, got a text of {len(value)} characters")
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f"expected an integer, got {value!r}") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    if abs(value) > 2**63 - 1:
        raise ValueError("expected an integer of at most 64 bits")
    return _in_range(option, value)


def _float(option: Option, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    return _in_range(option, float(value))


def _in_range(option: Option, value: float) -> Any:
    if option.minimum is not None and value < option.minimum:
        raise ValueError(f"must be at least {option.minimum}, got {value}")
    if option.maximum is not None and value > option.maximum:
        raise ValueError(f"must be at most {option.maximum}, got {value}")
    return value


def _bool(option: Option, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise ValueError(f"expected true or false, got {value!r}")


def _choice(option: Option, value: Any) -> str:
    text = _text(option, value)
    if text not in option.choices:
        raise ValueError(f"expected one of {', '.join(option.choices)}, got {text!r}")
    return text


def _items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple):
        return list(value)
    raise ValueError(f"expected a list (or comma-separated text), got {value!r}")


def _str_list(option: Option, value: Any) -> list[str]:
    items = _items(value)
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"expected a list of texts, got {value!r}")
    if option.choices:
        for item in items:
            if item not in option.choices:
                raise ValueError(f"{item!r} is not one of {', '.join(option.choices)}")
    return items


def _float_list(option: Option, value: Any) -> list[float]:
    return [_float(option, item) for item in _items(value)]


def _mapping(option: Option, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = parse_json(value)
        except JsonInputError as exc:
            raise ValueError(f"expected a JSON object: {exc}") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a JSON object, got {value!r}")
    return dict(value)


_COERCERS: dict[str, Callable[[Option, Any], Any]] = {
    "str": _text,
    "int": _int,
    "float": _float,
    "bool": _bool,
    "choice": _choice,
    "str_list": _str_list,
    "float_list": _float_list,
    "mapping": _mapping,
}
