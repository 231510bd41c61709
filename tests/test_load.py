"""The site under load, briefly (benchmark_load: gunicorn and a worker on the test database and
this test's own redis-server): clients mixing page views, autosaves and approvals in the same
discussions get no 5xx, PostgreSQL counts no deadlock, and every write answered 200 is stored.
The full run (40 clients for 120 s) is the command's default: see docs/operations.md.
"""

from __future__ import annotations

import io
import re
import shutil

import pytest
from django.core.management import call_command
from django.db import connection

from tests.broker_fixtures import RedisServer
from tests.conftest import require_service

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def own_redis(tmp_path, settings, monkeypatch):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("redis-server", bool(shutil.which("redis-server")), "not on PATH")
    server = RedisServer(tmp_path)
    server.start()
    settings.REDIS_URL = server.url
    monkeypatch.setenv("REDIS_URL", server.url)
    yield server
    server.stop()


@pytest.mark.usefixtures("own_redis")
def test_page_views_autosaves_and_approvals_under_load_fail_nothing():
    out = io.StringIO()
    call_command(
        "benchmark_load",
        clients=5,  # two auditors, one approver and two readers at once
        seconds=4,
        discussions=2,
        statements=10,
        web_processes=2,
        stdout=out,
    )
    report = out.getvalue()
    print(report)  # the figures, p95 included, in the test's output
    assert "5xx answers: 0" in report, report
    assert "deadlocks: 0 (PostgreSQL's count" in report, report
    assert "'deadlock detected' in the web and worker logs: 0" in report, report
    writes = re.search(r"(\d+) codings autosaved, (\d+) approved; lost: (\d+)", report)
    assert writes is not None, report
    autosaved, approved, lost = map(int, writes.groups())
    assert autosaved > 0 and approved > 0 and lost == 0, report
    assert re.search(r"approve .* p95 +\d+\.\d ms", report), report
