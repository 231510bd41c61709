"""In Chromium: an admin imports the spec's example on the import page and reads its summary,
the counts, the run it made and the warning; axe-core finds nothing serious, before and after,
and the page fits a phone."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from audit.models import Feedback
from tests.conftest import screenshot
from tests.site_pages import axe_serious, describe

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db")]
EXAMPLE = Path(__file__).with_name("import_files") / "spec_example.json"


def test_an_admin_imports_a_file_and_reads_its_summary(open_as, live_server, admin_user):
    from playwright.sync_api import expect

    page = open_as(admin_user)
    page.goto(live_server.url + reverse("audit:import"))
    assert axe_serious(page) == [], describe(axe_serious(page))
    page.get_by_label("File").set_input_files(str(EXAMPLE))
    page.get_by_role("button", name="Import").click()
    summary = page.get_by_test_id("import-summary")
    expect(summary).to_contain_text(
        "1 discussions created, 0 already present, 3 statements, 2 extractions, "
        "2 approved ground truths imported"
    )
    expect(summary).to_contain_text("read as: single discussion")
    expect(summary).to_contain_text("extractions in run: import · spec_example.json")
    expect(summary.locator("li.warning")).to_have_text(
        "warning: statements[2].approved_feedback.edited_extraction.events[0].person: "
        "a shift event needs a person"
    )
    assert Feedback.objects.approved().count() == 2
    assert axe_serious(page) == [], describe(axe_serious(page))
    screenshot(page, "import-summary-1440")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "import-summary-390")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
