"""Match settings chosen by the deployment: environment variables, the check at start, the
admin dashboard, and stored results recomputed when the settings or the code change."""

from __future__ import annotations

import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from evalsite.match_settings import check_match_settings, match_settings
from evalsite.settings import env_match_settings
from metrics import tasks
from metrics.engine import services
from metrics.engine.recompute import results_mark_outdated, results_outdated
from metrics.families.extraction import MatchSettings
from metrics.models import ComputeJob, MetricResult
from tests.metrics.extraction_helpers import expected_run, run_row, system_row

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]
Status = MetricResult.Status
ENGINE = ("metrics.engine.services", "metrics.engine.recompute")  # the per-row and batch paths
# Name similarity must exceed 1.0: no person can match, so the figures must change.
STRICT = {"strategy": "greedy", "name_similarity_threshold": 1.0}


def extraction_rows():
    return MetricResult.objects.filter(family="extraction")


# --- environment ------------------------------------------------------------------------------


def test_environment_variables_override_single_fields(monkeypatch):
    monkeypatch.setenv("EXTRACTION_MATCH_STRATEGY", "greedy")
    monkeypatch.setenv("EXTRACTION_NAME_THRESHOLD", "0.9")
    monkeypatch.setenv("EXTRACTION_DATE_TOLERANCE_DAYS", "3")
    monkeypatch.setenv("EXTRACTION_DESCRIPTION_THRESHOLD", " ")  # blank: the default
    overrides = env_match_settings()
    assert overrides == {
        "strategy": "greedy",
        "name_similarity_threshold": 0.9,
        "date_tolerance_days": 3,
    }
    assert MatchSettings.from_dict(overrides).description_similarity_threshold == 0.5


@pytest.mark.parametrize(
    ("variable", "raw", "expected"),
    [
        ("EXTRACTION_NAME_THRESHOLD", "high", "EXTRACTION_NAME_THRESHOLD must be a number"),
        ("EXTRACTION_DATE_TOLERANCE_DAYS", "2.5", "must be a whole number, not '2.5'"),
    ],
)
def test_unparsable_environment_values_are_named(monkeypatch, variable, raw, expected):
    monkeypatch.setenv(variable, raw)
    with pytest.raises(ImproperlyConfigured, match=expected):
        env_match_settings()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"strategy": "best"}, r"EXTRACTION_MATCH_STRATEGY='best': strategy must be one of"),
        ({"name_similarity_threshold": 1.5}, r"EXTRACTION_NAME_THRESHOLD=1.5: .* between 0 and 1"),
        ({"date_tolerance_days": 0}, r"EXTRACTION_DATE_TOLERANCE_DAYS=0: .*positive"),
        ({"date_weight": -0.2}, r"EXTRACTION_DATE_WEIGHT=-0.2: date_weight must not be negative"),
    ],
)
def test_out_of_range_settings_stop_the_start(settings, overrides, expected):
    settings.EXTRACTION_MATCH_SETTINGS = overrides
    with pytest.raises(ImproperlyConfigured, match=expected):
        check_match_settings()


def test_valid_settings_start(settings):
    settings.EXTRACTION_MATCH_SETTINGS = STRICT
    check_match_settings()
    assert match_settings() == MatchSettings(**STRICT)


# --- stale and recomputed ---------------------------------------------------------------------


def test_changed_settings_mark_results_stale_and_recompute_them(approved, settings, run_committed):
    before = run_row(approved.run).values
    assert not results_outdated().exists()
    assert set(extraction_rows().values_list("status", flat=True)) == {Status.FRESH}

    settings.EXTRACTION_MATCH_SETTINGS = STRICT
    n_rows = extraction_rows().count()
    assert results_outdated().count() == n_rows  # statements, discussions, the run, the system
    marked = run_committed(results_mark_outdated)  # queues one job, run eagerly on commit

    assert marked == n_rows
    job = ComputeJob.objects.get()
    assert job.status == ComputeJob.Status.DONE and job.params["stale_only"]
    assert set(extraction_rows().values_list("status", flat=True)) == {Status.FRESH}
    recorded = extraction_rows().values_list("match_settings", flat=True)
    assert {MatchSettings.from_dict(stored) for stored in recorded} == {MatchSettings(**STRICT)}
    assert all(len(stored) == len(STRICT | MatchSettings().to_dict()) for stored in recorded)
    after = run_row(approved.run).values
    assert after["system"]["people_tp"] == 0 < before["system"]["people_tp"]
    expected = expected_run(approved.run)
    assert after["system"] == expected["system"] and after["cumulative"] == expected["cumulative"]
    assert system_row().values["runs"][0]["people_f1"] == after["system"]["people_f1"]
    assert not results_outdated().exists()
    assert run_committed(results_mark_outdated) == 0  # nothing left: no second job
    assert ComputeJob.objects.count() == 1


def test_a_new_code_version_recomputes_too(approved, monkeypatch, run_committed):
    # Every module of the per-row services and of the batch path that reads it.
    for name, module in list(sys.modules.items()):
        if name.startswith(ENGINE) and hasattr(module, "CODE_VERSION"):
            monkeypatch.setattr(module, "CODE_VERSION", "extraction-f1/next")
    assert results_outdated().count() == extraction_rows().count()
    run_committed(results_mark_outdated)
    versions = set(extraction_rows().values_list("code_version", flat=True))
    assert versions == {"extraction-f1/next"}
    assert set(extraction_rows().values_list("status", flat=True)) == {Status.FRESH}


def test_the_sweep_and_a_starting_worker_find_outdated_results(approved, settings, run_committed):
    settings.EXTRACTION_MATCH_SETTINGS = STRICT
    counts = run_committed(tasks.recompute_stale)
    assert counts["outdated"] == extraction_rows().count()
    assert not results_outdated().exists()

    settings.EXTRACTION_MATCH_SETTINGS = {}
    run_committed(tasks.outdated_results_on_worker_start)
    assert not results_outdated().exists()
    assert run_row(approved.run).values == {
        k: v for k, v in expected_run(approved.run).items() if k != "totals"
    }


def test_a_failed_result_is_retried_once_per_change(approved, settings, run_committed):
    row = extraction_rows().filter(scope="statement").first()
    with services.failure_recorded(
        scope="statement", run_id=row.run_id, statement_id=row.statement_id
    ):
        raise RuntimeError("boom")
    row.refresh_from_db()
    assert row.status == Status.FAILED
    assert not results_outdated().filter(pk=row.pk).exists()  # failed with the settings in force

    settings.EXTRACTION_MATCH_SETTINGS = STRICT
    assert results_outdated().filter(pk=row.pk).exists()
    run_committed(results_mark_outdated)
    row.refresh_from_db()
    assert row.status == Status.FRESH and row.match_settings["strategy"] == "greedy"


# --- dashboard and API --------------------------------------------------------------------------


def test_admin_dashboard_shows_the_settings_in_force(approved, client, admin_user, settings):
    settings.EXTRACTION_MATCH_SETTINGS = {"strategy": "greedy"}
    client.force_login(admin_user)
    html = client.get(reverse("metrics:dashboard")).content.decode()
    assert 'data-testid="match-settings"' in html
    assert '<span class="small"><code>EXTRACTION_MATCH_STRATEGY</code></span>' in html
    assert ">greedy<" in html
    assert "<code>EXTRACTION_NAME_THRESHOLD</code> unset: default" in html
    # The stored results were computed with "optimal": flagged until recomputed.
    assert "1 run computed with other settings or code" in html
    assert "Computed with other matching settings than those in force" in html


def test_the_panel_counts_results_being_recomputed(approved, client, admin_user):
    MetricResult.objects.filter(family="extraction", scope="statement").update(status="stale")
    client.force_login(admin_user)
    html = client.get(reverse("metrics:dashboard")).content.decode()
    assert "6 results being recomputed" in html
    assert "computed with other settings or code" not in html


def test_auditors_do_not_see_the_settings_panel(approved, client, auditor):
    client.force_login(auditor)
    html = client.get(reverse("metrics:dashboard")).content.decode()
    assert 'data-testid="match-settings"' not in html


def test_api_run_result_carries_both_sarf_readings(approved, client, auditor):
    client.force_login(auditor)
    response = client.get("/api/v1/metric-results/", {"scope": "run", "run": approved.run.pk})
    system = response.json()["results"][0]["values"]["system"]
    assert system["symptom_macro_f1"] == expected_run(approved.run)["system"]["symptom_macro_f1"]
    for variable in ("symptom", "anxiety", "relationship", "functioning"):
        assert system[f"mean_statement_{variable}_macro_f1"] is not None
    assert response.json()["results"][0]["match_settings"] == match_settings().to_dict()


def test_the_settings_in_force_follow_a_change_of_the_setting(settings):
    settings.EXTRACTION_MATCH_SETTINGS = {}
    assert match_settings() == MatchSettings()
    settings.EXTRACTION_MATCH_SETTINGS = dict(STRICT)
    assert match_settings() == MatchSettings(**STRICT)
    settings.EXTRACTION_MATCH_SETTINGS["date_tolerance_days"] = 3  # changed in place too
    assert match_settings().date_tolerance_days == 3
