"""Imported evaluations in headless Chromium: upload through the page, watch the result appear,
compare two runs. Screenshots go to screenshots/ (gitignored) for a human to look at.

Drives Debian's /usr/bin/chromium (never a downloaded browser) against pytest-django's
live_server; Celery is eager in tests, so an upload is computed when its transaction commits.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from metrics.evaluations import services
from metrics.models import Evaluation
from tests.conftest import require_service
from tests.metrics.test_evaluations_fixtures import EXAMPLES, example_files

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(settings.BASE_DIR) / "screenshots"

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db", "media")]


@pytest.fixture(scope="module")
def browser() -> Iterator:
    require_service("Chromium", os.path.exists(CHROMIUM), "apt-get install chromium")
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page_for(browser, live_server, client):
    """A page logged in as the user (session cookie); JavaScript errors fail the test."""
    contexts, errors = [], []

    def open_page(user):
        client.force_login(user)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": live_server.url,
                }
            ]
        )
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert errors == []


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"evaluations_{name}.png"), full_page=True)


def test_admin_uploads_a_run_and_sees_its_cards(page_for, live_server, admin_user):
    page = page_for(admin_user)
    page.goto(live_server.url + reverse("metrics:evaluation_upload"))
    shot(page, "upload_selective")
    page.fill("input[name=name]", "Example run, few-shot")
    page.set_input_files("input[name=file_run]", str(EXAMPLES / "selective_run.json"))
    page.fill("input[name=option_mode]", "few_shot")
    page.fill("input[name=option_bootstrap_resamples]", "1000")
    page.click('button:has-text("Upload and compute")')
    page.wait_for_selector("[data-family=selective_prediction]")
    assert "Risk–coverage curve" in page.content()
    assert page.locator("svg.plot polyline").count() >= 1
    shot(page, "cards_selective")


def test_upload_refusal_is_shown_on_the_form(page_for, live_server, admin_user, tmp_path):
    bad = tmp_path / "tests.csv"
    bad.write_bytes((EXAMPLES / "agreement_tests.csv").read_bytes().replace(b",0.22,", b",x,", 1))
    page = page_for(admin_user)
    page.goto(live_server.url + reverse("metrics:evaluation_upload") + "?family=agreement")
    page.set_input_files("input[name=file_tests]", str(bad))
    page.click('button:has-text("Upload and compute")')
    page.wait_for_selector(".errorlist")
    assert "tests.csv at row 2 (line 3), column Agent_Effect_Size" in page.content()
    shot(page, "upload_refused")
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize("family", ["agreement", "verdicts", "reasoning"])
def test_family_cards(page_for, live_server, auditor, family):
    evaluation = services.evaluation_create(
        family=family, name=f"{family} example", files=example_files(family), options={}
    )
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE, evaluation.error
    page = page_for(auditor)
    page.goto(live_server.url + reverse("metrics:evaluation_detail", args=[evaluation.pk]))
    page.wait_for_selector(f"[data-family={family}]")
    shot(page, f"cards_{family}")


def test_progress_is_polled_until_the_card_appears(page_for, live_server, auditor):
    evaluation = services.evaluation_create(
        family="agreement",
        name="polled",
        files=example_files("agreement"),
        options={},
        queue=False,
    )
    page = page_for(auditor)
    page.goto(live_server.url + reverse("metrics:evaluation_detail", args=[evaluation.pk]))
    page.wait_for_selector(".progress.indeterminate")
    shot(page, "queued")
    services.evaluation_compute(evaluation_id=evaluation.pk)
    page.wait_for_selector("[data-family=agreement]", timeout=10_000)


def test_compare_with_paired_deltas(page_for, live_server, admin_user):
    runs = [
        services.evaluation_create(
            family="selective_prediction",
            name=name,
            files=example_files("selective_prediction"),
            options={"mode": mode, "bootstrap_resamples": 500},
        )
        for name, mode in (("zero-shot", "zero_shot"), ("few-shot", "few_shot"))
    ]
    page = page_for(admin_user)
    page.goto(live_server.url + reverse("metrics:evaluations"))
    page.check(f"input[name=left][value='{runs[0].pk}']")
    page.check(f"input[name=right][value='{runs[1].pk}']")
    page.click("text=Compare L and R side by side")
    page.click("text=Compute paired deltas")
    page.wait_for_selector("text=Δ")
    assert page.locator("[data-family=selective_prediction]").count() == 3
    shot(page, "compare")
    card = page.locator("[data-family=selective_prediction]").first
    card.screenshot(path=str(SHOTS / "evaluations_compare_paired_card.png"))
    page.goto(live_server.url + reverse("metrics:evaluations"))
    shot(page, "list")
