"""The one interface of a family that reads uploaded runs: its ``run.py``.

Every such family (selective, agreement, verdicts, reasoning) has a ``run.py`` offering:

``OPTIONS: tuple[Option, ...]``
    How each option is asked for (kind, help, allowed values, bounds), in form order.
``Options``
    A frozen dataclass of the option values. Its field defaults are the option defaults and
    ``__post_init__`` raises ValueError naming a bad value, so an ``Options`` is always valid.
    ``options_from(Options, mapping)`` builds one from stored or posted values.
``parse(files, options) -> parsed``
    ``files`` maps a file role to its ``RunFile``s. Raises ``InputError`` (``metrics.families.json_input``)
    naming the file, where in it and what was expected; problems the family only finds while
    computing are found here too (a dry run), so a bad upload is refused before anything is stored.
``compute(parsed, options) -> dict``
    The JSON-ready artifact.
``report(artifact) -> str``
    The plain-text summary the management commands print.
``card(artifact) -> dict``
    The context of the family's card template (``templates/metrics/cards/family_<name>.html``):
    figures formatted for reading (``metrics.families.formatting``), plots as inline SVG
    (``metrics.families.plots``). Usually written in the package's ``card.py``.

The registry (``metrics.evaluations.registry``) declares, per family, only what is not
computation: its name, label, description and file roles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any, TypeVar

from metrics.families.json_input import InputError

T = TypeVar("T")

OPTION_KINDS = ("str", "int", "float", "bool", "choice", "str_list", "float_list", "mapping")


@dataclass(frozen=True)
class RunFile:
    """One input file: its original name and its bytes."""

    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)


Files = Mapping[str, Sequence[RunFile]]


@dataclass(frozen=True)
class Option:
    """How one option is asked for; its default is the ``Options`` field's."""

    name: str
    kind: str
    help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in OPTION_KINDS:
            raise ValueError(f"option {self.name!r}: kind must be one of {OPTION_KINDS}")


def options_from(cls: type[T], values: Mapping[str, Any] | None) -> T:
    """``cls(**values)``, refusing names ``cls`` does not have (ValueError names them)."""
    values = dict(values or {})
    known = {field.name for field in fields(cls) if field.init}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}; known: {sorted(known)}")
    return cls(**values)


def option_defaults(cls: type) -> dict[str, Any]:
    """Field name -> default of an ``Options`` dataclass (tuples as lists, as JSON has them)."""
    defaults = {}
    for field in fields(cls):
        if not field.init:
            continue  # derived from the options, not one of them
        value = field.default if field.default_factory is MISSING else field.default_factory()
        defaults[field.name] = list(value) if isinstance(value, tuple) else value
    return defaults


def one_file_per_role(files: Files) -> dict[str, bytes]:
    """``{role: bytes}`` for a family taking at most one file per role."""
    return {role: items[0].data for role, items in files.items() if items}


def check_roles(
    files: Mapping[str, Any], *, required: Sequence[str], optional: Sequence[str] = ()
) -> None:
    """Every role known and every required one given; InputError names the role."""
    known = (*required, *optional)
    for role in files:
        if role not in known:
            raise InputError(role, "", f"unknown file role; expected one of {', '.join(known)}")
    for role in required:
        if role not in files:
            raise InputError(role, "", "required file is missing")
