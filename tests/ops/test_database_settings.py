"""PostgreSQL connections plan no parallel workers unless DB_PARALLEL_WORKERS says otherwise:
pages read small slices, and a parallel worker's start cost them more than it saved."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import require_service

pytestmark = pytest.mark.services

SHOW = """
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SHOW max_parallel_workers_per_gather")
    print(cursor.fetchone()[0])
"""


def _shown(parallel: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DB_PARALLEL_WORKERS"}
    if parallel is not None:
        env["DB_PARALLEL_WORKERS"] = parallel
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SHOW],
        cwd=settings.BASE_DIR,
        env=env,
        timeout=120,
        capture_output=True,
        text=True,
    )


@pytest.fixture
def postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _server_default() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT boot_val FROM pg_settings WHERE name = %s", ["max_parallel_workers_per_gather"]
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_connections_plan_no_parallel_workers_by_default(postgresql: None) -> None:
    assert _shown(None).stdout.split()[-1] == "0"
    assert _server_default() != "0"  # so the setting is what made it 0


@pytest.mark.django_db
def test_a_worker_can_take_the_servers_setting_or_a_number(postgresql: None) -> None:
    assert _shown("default").stdout.split()[-1] == _server_default()
    assert _shown("3").stdout.split()[-1] == "3"


def test_anything_else_is_refused_with_what_is_expected(postgresql: None) -> None:
    done = _shown("two")
    assert done.returncode != 0
    assert "DB_PARALLEL_WORKERS must be a number or 'default'" in done.stderr
