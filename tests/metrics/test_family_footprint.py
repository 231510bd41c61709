"""A new metric family touches few files, by the rule of docs/architecture.md ("Where a new
family goes"): a family of uploaded runs three (its library package, its entry in
metrics/evaluations/registry.py, its card template), a family computed from our own data four
(its library package, its wing in metrics/own_data/, its entry in metrics/registry.py, its card
template). Everything else (task, URL, view, template tag, API, sweep) dispatches through the
registry, so no other module may name a family.

Interauditor and triage are families plus a feature of their own (the team page's agreement,
the triage settings that act on audit's queues); their feature's files are not the family's.
"""

from __future__ import annotations

import re
from importlib import import_module
from pathlib import Path

import pytest

from metrics.registry import EXTRACTION, FAMILIES, Family

ROOT = Path(__file__).resolve().parents[2]
OWN_DATA_FILES = 4
UPLOADED_FILES = 3
WITH_A_FEATURE = {"interauditor", "triage"}
# The modules that dispatch through the registry: none of them may name a family.
DISPATCH = [
    "metrics/tasks.py",
    "metrics/urls.py",
    "metrics/cards.py",
    "metrics/views",
    "metrics/api",
    "metrics/templatetags",
    "metrics/engine",
    "metrics/evaluations",
    "metrics/own_data/common.py",
]  # audit and evalsite cannot name one: they import nothing of metrics but the library


def source_file(dotted: str) -> str:
    module = import_module(dotted.rsplit(".", 1)[0])
    return str(Path(module.__file__ or "").relative_to(ROOT))


def library_package(wing: str) -> str:
    """The library package a wing module builds on: the first metrics.families package it imports."""
    found = re.search(r"^from metrics\.families\.(\w+)", (ROOT / wing).read_text(), re.M)
    assert found, f"{wing} imports no library package"
    return f"metrics/families/{found.group(1)}/"


def footprint(family: Family) -> set[str]:
    """The files a family consists of, read from its registry entry."""
    template = f"templates/{family.card}"
    if family.upload is not None:
        run = str(Path(source_file(f"{family.upload.parse.__module__}.x")).parent) + "/"
        return {run, "metrics/evaluations/registry.py", template}
    wing = source_file(family.compute)
    assert source_file(family.card_context) == wing  # the card context lives in the wing
    return {library_package(wing), wing, "metrics/registry.py", template}


def dispatch_sources() -> dict[str, str]:
    files: list[Path] = []
    for place in DISPATCH:
        path = ROOT / place
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return {str(f.relative_to(ROOT)): f.read_text() for f in files if "migrations" not in f.parts}


NEW_LIKE = [name for name in FAMILIES if name != EXTRACTION and name not in WITH_A_FEATURE]


@pytest.mark.parametrize("name", [name for name in FAMILIES if name != EXTRACTION])
def test_a_family_consists_of_the_files_the_rule_names(name):
    family = FAMILIES[name]
    files = footprint(family)
    assert all((ROOT / f).exists() for f in files), files
    limit = UPLOADED_FILES if family.upload is not None else OWN_DATA_FILES
    assert len(files) <= limit, sorted(files)


@pytest.mark.parametrize("name", NEW_LIKE)
def test_no_dispatching_module_names_a_family(name):
    named = re.compile(rf"\b{name.upper()}\b|[\"']{name}[\"']")
    own = footprint(FAMILIES[name])
    naming = [path for path, text in dispatch_sources().items() if named.search(text)]
    assert sorted(set(naming) - own) == []


def test_the_check_sees_a_module_that_names_a_family():
    named = re.compile(r"\bREVIEW_SAVINGS\b|[\"']review_savings[\"']")
    assert named.search('if family == "review_savings":')
    assert named.search("from metrics.registry import REVIEW_SAVINGS")
    assert not named.search("review savings on the dashboard")
