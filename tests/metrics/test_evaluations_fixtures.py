"""Fixtures and helpers shared by the imported-evaluation tests (no tests here).

Import what a module needs by name, e.g.
``from tests.metrics.test_evaluations_fixtures import EXAMPLE_UPLOADS, media, run_on_commit``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from metrics.evaluations.registry import EXAMPLES_DIR, InputFile

EXAMPLES = Path(settings.BASE_DIR) / EXAMPLES_DIR

# Per family: {role: [example file names]} and options that keep the bootstrap quick.
EXAMPLE_UPLOADS = {
    "selective_prediction": (
        {"run": ["selective_run.json"]},
        {"mode": "few_shot", "bootstrap_resamples": 200},
    ),
    "agreement": ({"tests": ["agreement_tests.csv"]}, {}),
    "verdicts": (
        {"results": ["verdict_results.json"], "ground_truth": ["verdict_ground_truth.json"]},
        {},
    ),
    "reasoning": (
        {
            "generations": ["reasoning_generations.jsonl"],
            "vignettes": ["reasoning_vignettes.json"],
            "bias_cases": ["reasoning_bias_cases.json"],
        },
        {"bootstrap_resamples": 200},
    ),
}


def example_bytes(name: str) -> bytes:
    return (EXAMPLES / name).read_bytes()


def example_files(family: str) -> dict[str, list[InputFile]]:
    roles, _ = EXAMPLE_UPLOADS[family]
    return {
        role: [InputFile(name, example_bytes(name)) for name in names]
        for role, names in roles.items()
    }


def example_options(family: str) -> dict:
    return dict(EXAMPLE_UPLOADS[family][1])


def stored_files(media_root: Path) -> list[Path]:
    return [path for path in media_root.rglob("*") if path.is_file()]


@pytest.fixture
def media(settings, tmp_path) -> Path:
    """Uploaded files go to a temporary MEDIA_ROOT."""
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = root
    return root


@pytest.fixture
def run_on_commit(django_capture_on_commit_callbacks):
    """Run on-commit callbacks (the task queueing) inside the test transaction; Celery is
    eager in tests, so the evaluation is computed before the block ends."""

    def capture():
        return django_capture_on_commit_callbacks(execute=True)

    return capture
