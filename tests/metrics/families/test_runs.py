"""The shared pieces of the run.py interface (metrics.families.runs)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from metrics.families.json_input import InputError
from metrics.families.runs import (
    Option,
    RunFile,
    check_roles,
    one_file_per_role,
    option_defaults,
    options_from,
)


@dataclass(frozen=True)
class Example:
    threshold: float = 0.5
    variants: tuple[str, ...] = ("a", "b")
    derived: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")


def test_options_from_builds_the_dataclass_and_refuses_unknown_names():
    assert options_from(Example, {"threshold": 0.2}) == Example(threshold=0.2)
    assert options_from(Example, None) == Example()
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['colour'\]"):
        options_from(Example, {"colour": "red"})
    with pytest.raises(ValueError, match="unknown option"):
        options_from(Example, {"derived": 3})  # derived, not an option
    with pytest.raises(ValueError, match="threshold"):
        options_from(Example, {"threshold": 2})


def test_option_defaults_are_json_shaped_and_leave_derived_fields_out():
    assert option_defaults(Example) == {"threshold": 0.5, "variants": ["a", "b"]}


def test_an_option_kind_is_one_the_registry_can_coerce():
    assert Option("seed", "int", minimum=0).kind == "int"
    with pytest.raises(ValueError, match="kind"):
        Option("seed", "integer")


def test_files_by_role():
    files = {"results": [RunFile("r.json", b"[]")], "reviews": []}
    assert one_file_per_role(files) == {"results": b"[]"}
    assert RunFile("r.json", b"[]").size == 2
    check_roles({"results": b""}, required=("results",), optional=("reviews",))
    with pytest.raises(InputError, match="unknown file role") as unknown:
        check_roles({"results": b"", "extra": b""}, required=("results",))
    assert unknown.value.file == "extra"
    with pytest.raises(InputError, match="required file is missing") as missing:
        check_roles({}, required=("results",))
    assert missing.value.file == "results"
