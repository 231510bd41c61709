"""Every page on the demo data, as auditor and as admin, in headless Chromium:

- axe-core (from npm, tests/node_modules) finds nothing serious or critical, folded sections
  included;
- keyboard focus is visible (a focused link draws an outline);
- at 390 × 844 the page does not scroll sideways (tables scroll in their own box); a
  screenshot of each goes to screenshots/phone_<role>_<page>.png for a person to look at.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command

from audit.services.demo import demo_seed, demo_triage_seed
from metrics.evaluations import services
from tests.conftest import TEST_PASSWORD, require_service, screenshot
from tests.metrics.test_evaluations_fixtures import example_files, example_options
from tests.site_pages import AXE_JS, axe_serious, describe, site_pages

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db", "media")]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
FAMILIES = ["selective_prediction", "agreement", "verdicts", "reasoning"]


@pytest.fixture
def demo_site(django_user_model):
    """The demo data with computed figures and one evaluation per family; demo users get the
    test password so `open_as` can sign them in."""
    require_service("axe-core", AXE_JS.exists(), "npm ci --prefix tests (make test does)")
    demo_seed()
    demo_triage_seed()  # as seed_demo: the second run's review triage is on
    call_command("recompute_metrics", stdout=open("/dev/null", "w"))  # noqa: SIM115
    for family in FAMILIES:
        services.evaluation_create(
            family=family,
            name=f"{family} example",
            files=example_files(family),
            options=example_options(family),
        )
    users = {}
    for username, role in [("auditor1", "auditor"), ("admin", "admin")]:
        user = django_user_model.objects.get(username=username)
        user.set_password(TEST_PASSWORD)
        user.save()
        users[role] = user
    return users


def _focus_is_visible(page) -> bool:
    """Tab to the first link in the main content and check that it draws an outline."""
    page.focus("main a[href]")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    return page.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
                   return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2; }"""
    )


def test_every_page_is_accessible_and_fits_a_phone(open_as, live_server, demo_site):
    """Every page an auditor and an admin open: axe-core, a visible focus, no sideways scroll
    on a phone. Both roles walk one seeded site (seeding it takes most of a minute)."""
    found, too_wide = {}, {}
    for role in ("auditor", "admin"):
        page = open_as(demo_site[role])
        for name, path in site_pages(admin=role == "admin"):
            where = f"{role}: {name}"
            page.set_viewport_size(DESKTOP)
            response = page.goto(live_server.url + path)
            assert response.status == 200, (where, path, response.status)
            page.wait_for_load_state("networkidle")
            if violations := axe_serious(page):
                found[where] = violations
            page.reload()
            if page.locator("main a[href]").count():
                assert _focus_is_visible(page), f"no visible focus on {where}"
            page.set_viewport_size(PHONE)
            page.wait_for_timeout(100)
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                too_wide[where] = width
            screenshot(page, f"phone_{role}_{name}")
    assert found == {}, describe(found)
    assert too_wide == {}, too_wide
