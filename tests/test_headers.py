"""Security headers: the Content-Security-Policy on every answer (checked in Chromium on the
main pages: no violation, htmx still runs) and X-Forwarded-Proto believed only behind a
trusted proxy (TRUSTED_PROXY=1)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.urls import reverse

from audit.services import feedback_start
from tests.audit.test_views_support import make_scene


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/accounts/login/", "/api/v1/feedback/", "/metrics/"])
def test_every_answer_has_a_csp_with_a_fresh_nonce(client, url):
    first, second = client.get(url), client.get(url)
    policy = first["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in policy
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy
    assert policy != second["Content-Security-Policy"]


def _proxy_setting(trusted: str | None) -> str:
    """SECURE_PROXY_SSL_HEADER as a fresh process computes it from the environment (the
    settings alone: setting the apps up would import every app's modules, seconds a process)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalsite.settings", "DEBUG": "0"}
    env["SECRET_KEY"] = "headers-test-only-key-" + "abcdefghijklmnopqrstuvwxyz0123456789"
    env.pop("TRUSTED_PROXY", None)
    if trusted is not None:
        env["TRUSTED_PROXY"] = trusted
    code = "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_x_forwarded_proto_is_ignored_unless_a_trusted_proxy_is_configured():
    assert _proxy_setting(None) == "None"
    assert _proxy_setting("0") == "None"
    assert _proxy_setting("1") == "('HTTP_X_FORWARDED_PROTO', 'https')"


@pytest.mark.django_db
def test_a_forged_x_forwarded_proto_does_not_make_a_request_secure(rf, settings):
    settings.SECURE_PROXY_SSL_HEADER = None
    request = rf.get("/", HTTP_X_FORWARDED_PROTO="https")
    assert not request.is_secure()


# --- in the browser ------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.usefixtures("transactional_db")
def test_main_pages_run_under_the_policy(open_as, live_server, auditor, admin_user):
    """open_as fails the test on any CSP violation reported in the console."""
    scene = make_scene()
    feedback = feedback_start(statement=scene.first, auditor=auditor)
    pages = [
        reverse("home"),
        reverse("audit:discussion", args=[scene.discussion.pk]),
        reverse("audit:statement", args=[scene.first.pk]),
        reverse("audit:feedback_edit", args=[feedback.pk]),
        reverse("audit:review_queue"),
        reverse("metrics:dashboard"),
        reverse("metrics:runs"),
        reverse("metrics:jobs"),
        reverse("metrics:evaluations"),
        reverse("metrics:evaluation_upload"),
        reverse("api-tokens"),
        reverse("api-docs"),
    ]
    page = open_as(admin_user)
    for url in pages:
        response = page.goto(live_server.url + url)
        assert response.status < 400, url
        page.wait_for_load_state("networkidle")
        if url != reverse("api-docs"):
            assert page.evaluate("typeof window.htmx") == "object", url
    assert page.locator(".swagger-ui").count() == 1
