"""Imported evaluations in headless Chromium: upload through the page, watch the result appear,
compare two runs. Screenshots go to screenshots/ (gitignored) for a human to look at.

Drives Debian's /usr/bin/chromium (never a downloaded browser) against pytest-django's
live_server; Celery is eager in tests, so an upload is computed when its transaction commits.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from metrics.evaluations import services
from metrics.models import Evaluation
from tests.conftest import SCREENSHOTS, screenshot
from tests.metrics.test_evaluations_fixtures import EXAMPLE_UPLOADS, EXAMPLES, example_files

pytest_plugins = ["tests.metrics.test_evaluations_fixtures"]
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("transactional_db", "media")]


def shot(page, name: str) -> None:
    screenshot(page, f"evaluations_{name}")


def test_admin_uploads_a_run_and_sees_its_cards(open_as, live_server, admin_user):
    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:evaluation_upload"))
    shot(page, "upload_selective")
    page.fill("input[name=name]", "Example run, few-shot")
    page.set_input_files("input[name=file_run]", str(EXAMPLES / "selective_run.json"))
    page.wait_for_selector("select[name=option_mode] option[value=few_shot]", state="attached")
    page.select_option("select[name=option_mode]", "few_shot")
    page.fill("input[name=option_bootstrap_resamples]", "1000")
    page.click('button:has-text("Upload and compute")')
    page.wait_for_selector("[data-family=selective_prediction]")
    assert "Risk–coverage curve" in page.content()
    assert page.locator("svg.plot polyline").count() >= 1
    shot(page, "cards_selective")


def test_upload_refusal_is_shown_on_the_form(open_as, live_server, admin_user, tmp_path):
    bad = tmp_path / "tests.csv"
    bad.write_bytes((EXAMPLES / "agreement_tests.csv").read_bytes().replace(b",0.22,", b",x,", 1))
    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:evaluation_upload") + "?family=agreement")
    page.set_input_files("input[name=file_tests]", str(bad))
    page.click('button:has-text("Upload and compute")')
    page.wait_for_selector(".errorlist")
    assert "tests.csv at row 2 (line 3), column Agent_Effect_Size" in page.content()
    shot(page, "upload_refused")
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize("family", ["agreement", "verdicts", "reasoning"])
def test_family_cards(open_as, live_server, auditor, family):
    evaluation = services.evaluation_create(
        family=family, name=f"{family} example", files=example_files(family), options={}
    )
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE, evaluation.error
    page = open_as(auditor)
    page.goto(live_server.url + reverse("metrics:evaluation_detail", args=[evaluation.pk]))
    page.wait_for_selector(f"[data-family={family}]")
    shot(page, f"cards_{family}")


def test_progress_is_polled_until_the_card_appears(open_as, live_server, auditor):
    evaluation = services.evaluation_create(
        family="agreement",
        name="polled",
        files=example_files("agreement"),
        options={},
        queue=False,
    )
    page = open_as(auditor)
    page.goto(live_server.url + reverse("metrics:evaluation_detail", args=[evaluation.pk]))
    page.wait_for_selector(".progress.indeterminate")
    shot(page, "queued")
    services.evaluation_compute(evaluation_id=evaluation.pk)
    page.wait_for_selector("[data-family=agreement]", timeout=10_000)


def test_compare_with_paired_deltas(open_as, live_server, admin_user):
    runs = [
        services.evaluation_create(
            family="selective_prediction",
            name=name,
            files=example_files("selective_prediction"),
            options={"mode": mode, "bootstrap_resamples": 500},
        )
        for name, mode in (("zero-shot", "zero_shot"), ("few-shot", "few_shot"))
    ]
    page = open_as(admin_user)
    page.goto(live_server.url + reverse("metrics:evaluations"))
    page.check(f"input[name=left][value='{runs[0].pk}']")
    page.check(f"input[name=right][value='{runs[1].pk}']")
    page.click("text=Compare L and R side by side")
    page.click("text=Compute paired deltas")
    page.wait_for_selector("text=Δ")
    assert page.locator("[data-family=selective_prediction]").count() == 3
    shot(page, "compare")
    card = page.locator("[data-family=selective_prediction]").first
    card.screenshot(path=str(SCREENSHOTS / "evaluations_compare_paired_card.png"))
    page.goto(live_server.url + reverse("metrics:evaluations"))
    shot(page, "list")


def test_example_files_upload_as_they_are(open_as, live_server, admin_user):
    """Every family's example files, chosen on the upload page with every option left at its
    default, are accepted and computed."""
    page = open_as(admin_user)
    for family, (roles, _) in EXAMPLE_UPLOADS.items():
        page.goto(live_server.url + reverse("metrics:evaluation_upload") + f"?family={family}")
        for role, names in roles.items():
            page.set_input_files(f"input[name=file_{role}]", [str(EXAMPLES / n) for n in names])
        page.click('button:has-text("Upload and compute")')
        page.wait_for_selector(f"[data-family={family}]")
    assert Evaluation.objects.filter(status=Evaluation.Status.DONE).count() == len(EXAMPLE_UPLOADS)
    assert Evaluation.objects.get(family="selective_prediction").options["mode"] == "zero_shot"


def test_mode_is_a_select_of_the_modes_in_the_file(open_as, live_server, admin_user):
    page = open_as(admin_user)
    page.goto(
        live_server.url + reverse("metrics:evaluation_upload") + "?family=selective_prediction"
    )
    mode = page.locator("select[name=option_mode]")
    assert mode.locator("option").all_inner_texts() == ["first in the file"]
    page.set_input_files("input[name=file_run]", str(EXAMPLES / "selective_run.json"))
    page.wait_for_selector("select[name=option_mode] option[value=few_shot]", state="attached")
    assert mode.locator("option").all_inner_texts() == [
        "first in the file",
        "zero_shot",
        "few_shot",
    ]
    second = page.locator("select[name=option_second_mode] option").all_inner_texts()
    assert second == ["none", "zero_shot", "few_shot"]


def test_chosen_file_is_kept_after_a_validation_error(open_as, live_server, admin_user):
    page = open_as(admin_user)
    page.goto(
        live_server.url + reverse("metrics:evaluation_upload") + "?family=selective_prediction"
    )
    page.set_input_files("input[name=file_run]", str(EXAMPLES / "selective_run.json"))
    page.fill("input[name=option_bootstrap_resamples]", "lots")
    page.click('button:has-text("Upload and compute")')
    page.wait_for_selector(".errorlist")
    assert not Evaluation.objects.exists()
    assert "selective_run.json" in page.locator("[data-kept=file_run]").inner_text()
    # The modes of the kept file are offered without choosing it again.
    assert "few_shot" in page.locator("select[name=option_mode]").inner_text()
    page.fill("input[name=option_bootstrap_resamples]", "200")
    page.click('button:has-text("Upload and compute")')
    page.wait_for_selector("[data-family=selective_prediction]")
    evaluation = Evaluation.objects.get()
    assert evaluation.status == Evaluation.Status.DONE
    assert evaluation.files.get().original_name == "selective_run.json"


def test_verdict_card_shows_the_confusion_of_verdicts(open_as, live_server, auditor):
    """True against predicted verdict as a heatmap and a table; a count off the diagonal opens
    to the samples behind it."""
    evaluation = services.evaluation_create(
        family="verdicts", name="verdicts", files=example_files("verdicts"), options={}
    )
    evaluation.refresh_from_db()
    matrix = evaluation.artifact["details"]["verdict_confusion"]["matrix"]
    page = open_as(auditor)
    page.goto(live_server.url + reverse("metrics:evaluation_detail", args=[evaluation.pk]))
    card = page.locator("[data-family=verdicts]")
    assert card.locator("[data-testid=verdict-confusion] svg").count() == 1
    table = card.locator("table.confusion-table")
    shown = [
        [int(c) for c in row.split("\t")[1:]] for row in table.locator("tbody tr").all_inner_texts()
    ]
    assert shown == matrix
    misses = [(i, j) for i, row in enumerate(matrix) for j, n in enumerate(row) if n and i != j]
    if misses:  # the example run has wrong verdicts: open one and see its samples
        cell = table.locator(".cell-samples").first
        cell.locator("summary").click()
        assert cell.locator("span").inner_text().strip()
    assert card.get_by_text("Judgement accuracy per field").count() == 1
    shot(page, "cards_verdicts_confusion")
