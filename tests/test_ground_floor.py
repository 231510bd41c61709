"""The ground floor stays pure: audit's payload rules and the metric library import no framework.

Each check runs in a fresh interpreter without Django settings, so an import that pulls in
Django (even transitively) shows up in ``sys.modules`` instead of hiding behind the test run's
own Django setup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_AUDIT_MODULES = (
    "audit.jsonin",
    "audit.schemas",
    "audit.pdp",
    "audit.markdown",
    "audit.definitions",
)
FRAMEWORKS = ("django", "rest_framework", "celery", "evalsite", "drf_spectacular")

LOADED = """
import importlib, json, pkgutil, sys
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    if name == "metrics.families":
        for info in pkgutil.walk_packages(module.__path__, "metrics.families."):
            importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(*names: str) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", LOADED, *names],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def offenders(modules: list[str], *, allowed_audit: tuple[str, ...]) -> list[str]:
    """Framework modules, non-library metrics modules, audit modules beyond the pure ones."""
    bad = [m for m in modules if m.split(".")[0] in FRAMEWORKS]
    bad += [m for m in modules if m.startswith("metrics.") and not m.startswith("metrics.families")]
    bad += [m for m in modules if m.startswith("audit.") and m not in allowed_audit]
    return bad


@pytest.mark.parametrize("name", PURE_AUDIT_MODULES)
def test_the_pure_audit_modules_import_no_framework_and_no_metrics(name):
    modules = loaded_modules(name)
    assert name in modules
    assert offenders(modules, allowed_audit=PURE_AUDIT_MODULES) == []
    assert "metrics" not in modules


def test_every_library_module_imports_only_pure_python_and_the_ground_floor():
    modules = loaded_modules("metrics.families")
    assert "metrics.families.extraction.matching" in modules  # the walk did reach the library
    assert offenders(modules, allowed_audit=PURE_AUDIT_MODULES) == []


def test_the_check_catches_a_framework_import():
    assert offenders(
        ["django.db", "metrics.models", "audit.models", "audit.pdp"],
        allowed_audit=PURE_AUDIT_MODULES,
    ) == [
        "django.db",
        "metrics.models",
        "audit.models",
    ]


def banned_imports(source: str, *, path: str) -> list[str]:
    """The TID251 (banned import) findings ruff reports for ``source`` as if it lived at ``path``."""
    command = [sys.executable, "-m", "ruff", "check", "--select", "TID251"]
    result = subprocess.run(
        [*command, "--output-format", "json", "--stdin-filename", path, "-"],
        cwd=ROOT,
        input=source,
        capture_output=True,
        text=True,
    )
    return sorted(finding["message"].split("`")[1] for finding in json.loads(result.stdout))


def test_the_ruff_rule_bans_framework_and_project_imports_in_the_library():
    source = (
        "import django.db\nfrom rest_framework import serializers\nfrom celery import shared_task\n"
        "from evalsite import access\nfrom metrics.models import MetricResult\n"
        "from audit.models import Feedback\n"
    )
    banned = banned_imports(source, path="metrics/families/selective/new_module.py")
    assert banned == [
        "audit.models",
        "celery",
        "django",
        "evalsite",
        "metrics.models",
        "rest_framework",
    ]


def test_the_ruff_rule_lets_the_library_import_itself_and_the_pure_audit_modules():
    source = (
        "from audit.jsonin import parse_json\nfrom audit.pdp import ENTITY_KINDS\n"
        "from metrics.families.agreement import weighted_ccc\nfrom ..selective import Loss\n"
    )
    assert banned_imports(source, path="metrics/families/review_savings/new_module.py") == []
    # Outside the library the rule does not apply.
    assert banned_imports("import django.db\n", path="metrics/services_new.py") == []


def test_the_ruff_rule_names_every_module_of_metrics_and_audit_but_the_pure_ones():
    """A module added to metrics or audit must be banned in the library too."""
    banned = set(
        tomllib.loads((ROOT / "metrics/families/ruff.toml").read_text())["lint"][
            "flake8-tidy-imports"
        ]["banned-api"]
    )
    present = {
        f"{app}.{path.stem}"
        for app in ("metrics", "audit")
        for path in (ROOT / app).iterdir()
        if not path.name.startswith(("_", "."))
        and (path.suffix == ".py" or (path / "__init__.py").exists())
    }
    # Pure, but not for the library: the payload schema, the guidelines' Markdown and vocabulary.
    allowed = {"metrics.families", *PURE_AUDIT_MODULES} - {
        "audit.schemas",
        "audit.markdown",
        "audit.definitions",
    }
    assert sorted(present - allowed - banned) == []
