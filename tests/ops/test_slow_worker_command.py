"""The slow worker's production command replaces a child whose peak passed the 500 MB budget
(``--max-memory-per-child``, docs/operations.md "Memory"): the
same limit in docker-compose.yml, the README and docs/operations.md, on the prefork pool (the
only one that honours it)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
LIMIT = re.compile(r"--max-memory-per-child=(\d+)")
BUDGET_KIB = 500 * 1024  # issue #18: slow-worker peak < 500 MB at 1,000 × 50


def _slow_worker_lines(path: str) -> list[str]:
    text = (ROOT / path).read_text()
    return [line for line in text.splitlines() if "celery -A evalsite worker -Q slow" in line]


def _limits(lines: list[str]) -> set[int]:
    return {int(found) for line in lines for found in LIMIT.findall(line)}


def test_compose_slow_worker_replaces_a_child_past_the_budget() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["worker-slow"]["command"]
    assert _limits([command]) == {BUDGET_KIB}
    # solo (or threads) would ignore the limit without a word: the default prefork pool it is.
    assert "--pool" not in command and "-P " not in command


def test_the_documented_commands_carry_the_same_limit() -> None:
    for path in ("README.md", "docs/operations.md"):
        lines = _slow_worker_lines(path)
        assert lines and all(_limits([line]) == {BUDGET_KIB} for line in lines), path
