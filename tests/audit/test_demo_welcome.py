"""`make run` ends with the address and the demo users (manage.py demo_welcome)."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command

from audit.services.demo import DEMO_USERS


@pytest.mark.usefixtures("transactional_db")
def test_welcome_waits_for_the_site_then_prints_address_and_users(live_server):
    out = io.StringIO()
    call_command("demo_welcome", live_server.url + "/", timeout=10, stdout=out)
    text = out.getvalue()
    assert f"evalsite is running: {live_server.url}/" in text
    for username, password, role in DEMO_USERS:
        assert username in text and password in text and f"({role})" in text
    assert "make run PORT=" in text
    assert text.rstrip().endswith("=" * 64)


def test_welcome_gives_up_waiting_after_the_timeout():
    out = io.StringIO()
    started = time.monotonic()
    call_command("demo_welcome", "http://127.0.0.1:9/", timeout=1, stdout=out)
    assert time.monotonic() - started < 6
    assert "http://127.0.0.1:9/" in out.getvalue()
