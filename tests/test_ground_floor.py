"""The house's floors hold: the layering contracts (pyproject.toml, ``[tool.importlinter]``,
run by ``make test``) catch each kind of wrong import, and the library loads no framework.

The framework check runs in a fresh interpreter without Django settings, so an import that pulls
in Django (even transitively, or at run time) shows up in ``sys.modules`` instead of hiding
behind the test run's own Django setup.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ("django", "rest_framework", "celery", "evalsite", "drf_spectacular")

LOADED = """
import importlib, json, pkgutil, sys
module = importlib.import_module("metrics.families")
for info in pkgutil.walk_packages(module.__path__, "metrics.families."):
    importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def test_the_library_loads_no_framework_and_no_app():
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", LOADED], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    modules = json.loads(result.stdout)
    assert "metrics.families.extraction.matching" in modules  # the walk did reach the library
    # Pure payload rules still living in audit, until they move into the library.
    pure_audit = ("audit", "metrics.families.json_input", "metrics.families.payload.rules")
    bad = [m for m in modules if m.split(".")[0] in (*FRAMEWORKS, "audit") and m not in pure_audit]
    bad += [m for m in modules if m.startswith("metrics.") and not m.startswith("metrics.families")]
    assert bad == []


# One wrong import per contract, written into a copy of the tree.
WRONG_IMPORTS = {
    "metrics/families/extraction/wrong.py": "import django.db\nfrom metrics import models\n",
    "audit/wrong.py": "from metrics.models import MetricResult\n",
    "evalsite/wrong.py": "from audit.models import Feedback\n",
    "audit/selectors/wrong.py": "from audit.views import queue\n",
    "metrics/families/wrong_cycle_a.py": "from metrics.families import wrong_cycle_b\n",
    "metrics/families/wrong_cycle_b.py": "from metrics.families import wrong_cycle_a\n",
}


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--no-logo"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)


def test_the_contracts_catch_each_kind_of_wrong_import(tmp_path):
    for package in ("audit", "metrics", "evalsite"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    assert lint_imports(tmp_path).returncode == 0  # the copy itself keeps every contract
    for path, source in WRONG_IMPORTS.items():
        (tmp_path / path).write_text(source)
    result = lint_imports(tmp_path)
    assert result.returncode == 1
    broken = result.stdout.split("Broken contracts")[1]
    assert "metrics.families.extraction.wrong -> django (l.1)" in broken
    assert "metrics.families.extraction.wrong -> metrics.models (l.2)" in broken
    assert "audit.wrong -> metrics.models (l.1)" in broken
    assert "evalsite.wrong -> audit.models (l.1)" in broken
    assert "No cycles are allowed in metrics.families" in broken
    assert "audit.selectors.wrong -> audit.views.queue (l.1)" in broken
    assert "Contracts: 0 kept, 5 broken." in result.stdout
