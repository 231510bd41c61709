"""The public import paths of the library keep exporting the names they had.

``public_names.json`` holds what each path exported before the families became packages
(their own names; standard-library and third-party names they happened to import left out).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from audit import jsonin
from metrics.families import common

EXPORTED = json.loads((Path(__file__).parent / "public_names.json").read_text())


@pytest.mark.parametrize("path", sorted(EXPORTED))
def test_a_public_path_still_exports_its_names(path):
    module = importlib.import_module(f"metrics.families.{path}")
    assert [name for name in EXPORTED[path] if not hasattr(module, name)] == []


def test_the_snapshot_covers_every_public_path():
    paths = ["agreement", "bootstrap", "calibration", "extraction", "reasoning", "selective"]
    assert sorted(EXPORTED) == sorted([*paths, "verdicts"])


def test_the_common_module_re_exports_the_ground_floor_json_parsing():
    for name in common.__all__:
        assert getattr(common, name) is getattr(jsonin, name)
