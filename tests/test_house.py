"""The house stays readable (docs/architecture.md): no application module is over 600 lines
(migrations aside), and the tops of audit/ and metrics/ hold at most 15 modules each; what
grows past that becomes a package named after what its parts hold."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("audit", "metrics", "evalsite")
MAX_LINES = 600
MAX_TOP_MODULES = 15


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def application_modules() -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.relative_to(ROOT).parts
    )


def test_no_application_module_is_over_600_lines():
    modules = application_modules()
    assert len(modules) > 100  # the walk found the apps
    too_long = {
        str(path.relative_to(ROOT)): line_count(path)
        for path in modules
        if line_count(path) > MAX_LINES
    }
    assert too_long == {}


def test_the_tops_of_audit_and_metrics_hold_at_most_15_modules():
    # The module files at the top (a package is a folder: its modules fall under the line limit).
    for app in ("audit", "metrics"):
        modules = sorted(path.name for path in (ROOT / app).glob("*.py"))
        assert len(modules) <= MAX_TOP_MODULES, (app, modules)
