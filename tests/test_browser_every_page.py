"""Every page on the demo data, as auditor and as admin, in headless Chromium:

- axe-core (from npm, tests/node_modules) finds nothing serious or critical, folded sections
  included;
- keyboard focus is visible (a focused link draws an outline);
- at 390 × 844 the page does not scroll sideways (tables scroll in their own box); a page
  that does is saved as screenshots/phone_<role>_<page>.png for a person to look at (every
  page with PHONE_SCREENSHOTS=1).
"""

from __future__ import annotations

import os
from unittest import mock

import pytest
from django.core.management import call_command

from audit.models import ExtractionRun
from audit.services.demo import demo_seed, demo_triage_seed
from metrics.engine.derived import error_analysis_result_compute
from metrics.evaluations import services
from tests.conftest import SCREENSHOTS, TEST_PASSWORD, require_service
from tests.metrics.test_evaluations_fixtures import example_files, example_options
from tests.site_pages import AXE_JS, axe_serious, describe, site_pages

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db", "media")]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
FAMILIES = ["selective_prediction", "agreement", "verdicts", "reasoning"]
# A page too wide for the phone is saved as a screenshot; every page with PHONE_SCREENSHOTS=1.
EVERY_SCREENSHOT = os.environ.get("PHONE_SCREENSHOTS") == "1"


@pytest.fixture
def demo_site(django_user_model):
    """The demo data with computed figures and one evaluation per family; demo users get the
    test password so `open_as` can sign them in."""
    require_service("axe-core", AXE_JS.exists(), "npm ci --prefix tests (make test does)")
    # The extraction results are computed below by recompute_metrics, in batches: computed one
    # task each as the seed announces them (tasks run in this process), twice the work. Then
    # the error analyses those tasks would have left: the same stored figures either way.
    with mock.patch("metrics.engine.services.stale._queue_recompute"):
        demo_seed()
        demo_triage_seed()  # as seed_demo: the second run's review triage is on
    call_command("recompute_metrics", stdout=open("/dev/null", "w"))  # noqa: SIM115
    for run_id in ExtractionRun.objects.order_by("pk").values_list("pk", flat=True):
        error_analysis_result_compute(run_id=run_id)
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


# Counts the page's own requests (htmx's XMLHttpRequests, fetch) and the frames drawn since the
# last one started or ended: a page is settled once it has loaded and none has been in flight
# for a few frames (lazy content in view has arrived and swapped in). Instead of waiting for
# the network to be idle for half a second after every load.
SETTLED_JS = """(() => {
  let busy = 0, quiet = 0;
  const changed = (by) => { busy += by; quiet = 0; };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    changed(1);
    this.addEventListener("loadend", () => changed(-1));
    return send.apply(this, args);
  };
  const fetched = window.fetch;
  window.fetch = (...args) => { changed(1); return fetched(...args).finally(() => changed(-1)); };
  const frame = () => { if (busy === 0) quiet += 1; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  window.__settled = () => document.readyState === "complete" && busy === 0 && quiet >= 5;
})();"""


def _settle(page) -> None:
    page.wait_for_function("() => window.__settled !== undefined && window.__settled()")


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
    on a phone. Both roles walk one seeded site (seeding it takes most of a minute). Each page
    loads once: the focus and the phone's width are checked on it as loaded, then axe-core
    (which opens every folded section) at the desktop's width."""
    found, too_wide = {}, {}
    for role in ("auditor", "admin"):
        page = open_as(demo_site[role])  # at the desktop's width
        page.context.add_init_script(SETTLED_JS)
        page.context.add_init_script(path=AXE_JS)  # on every page, instead of sent to each
        for name, path in site_pages(admin=role == "admin"):
            where = f"{role}: {name}"
            response = page.goto(live_server.url + path)
            assert response.status == 200, (where, path, response.status)
            _settle(page)
            if page.locator("main a[href]").count():
                assert _focus_is_visible(page), f"no visible focus on {where}"
                page.evaluate("() => document.activeElement.blur()")
            page.set_viewport_size(PHONE)
            page.wait_for_function(f"() => window.innerWidth === {PHONE['width']}")
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                too_wide[where] = width
            if width > PHONE["width"] or EVERY_SCREENSHOT:  # for a person to look at
                page.screenshot(path=SCREENSHOTS / f"phone_{role}_{name}.png", full_page=True)
            page.set_viewport_size(DESKTOP)
            _settle(page)  # what the phone's width brought into view has arrived too
            if violations := axe_serious(page):
                found[where] = violations
    assert found == {}, describe(found)
    assert too_wide == {}, too_wide
