"""PostgreSQL connections plan no parallel workers unless DB_PARALLEL_WORKERS says otherwise
(pages read small slices, and a parallel worker's start cost them more than it saved)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import require_service

pytestmark = pytest.mark.services

PARALLEL = ("DB_PARALLEL_WORKERS", "max_parallel_workers_per_gather")


def _shown(setting: tuple[str, str], value: str | None) -> subprocess.CompletedProcess:
    """What a connection of a fresh process shows. A connection takes its options from the
    settings alone, so the process reads them without setting the apps up (that imports every
    app's modules: seconds a process, for nothing here)."""
    variable, name = setting
    env = {k: v for k, v in os.environ.items() if k != variable}
    env["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    if value is not None:
        env[variable] = value
    show = (
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        f"    cursor.execute('SHOW {name}')\n"
        "    print('shown:', cursor.fetchone()[0])\n"
    )
    return subprocess.run(
        [sys.executable, "-c", show],
        cwd=settings.BASE_DIR,
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )


def _value(setting: tuple[str, str], value: str | None) -> str:
    done = _shown(setting, value)
    shown = [line.split()[-1] for line in done.stdout.splitlines() if line.startswith("shown:")]
    assert len(shown) == 1, (done.stdout, done.stderr)
    return shown[0]


@pytest.fixture
def postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _server_default(setting: tuple[str, str]) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT boot_val FROM pg_settings WHERE name = %s", [setting[1]])
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_connections_plan_no_parallel_workers_by_default(postgresql: None) -> None:
    assert _value(PARALLEL, None) == "0"
    assert _server_default(PARALLEL) != "0"  # so the setting is what made it 0


@pytest.mark.django_db
def test_a_worker_can_take_the_servers_setting_or_a_number(postgresql: None) -> None:
    assert _value(PARALLEL, "default") == _server_default(PARALLEL)
    assert _value(PARALLEL, "3") == "3"


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        (PARALLEL, "two", "DB_PARALLEL_WORKERS must be a whole number, not 'two'"),
        (PARALLEL, "-1", "DB_PARALLEL_WORKERS must be a whole number of at least 0, not '-1'"),
    ],
)
def test_anything_else_is_refused_with_what_is_expected(
    postgresql: None, setting: tuple[str, str], value: str, expected: str
) -> None:
    done = _shown(setting, value)
    assert done.returncode != 0
    assert expected in done.stderr
