"""Review triage in the product: settings, the stored threshold, the queue, the QA sample, the
monitor suspending triage, provisional ground truth kept apart, the API and the settings page."""

from __future__ import annotations

import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.models import (
    AuditLogEntry,
    Discussion,
    ExtractionRun,
    Feedback,
    Statement,
    TriageSettings,
    TriageStatement,
)
from audit.selectors.queues import discussion_queue, triage_counts
from audit.services.exports import ground_truth_export
from audit.services.triage import (
    TriageChoice,
    TriageSettingsError,
    triage_settings_update,
    triage_suspend,
)
from metrics.models import MetricResult
from metrics.own_data.triage import triage_result_compute
from metrics.registry import TRIAGE
from metrics.results import run_key
from tests.conftest import role_user_create
from tests.factories import (
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
    pdp,
    person,
)

pytest_plugins = ["tests.api_fixtures"]

N_CALIBRATION = 24  # > 22 discussions: enough to prove risk <= 10% at delta 10%


def _payload(name: str, confidence: float) -> dict:
    return pdp(people=[person(-1, name, confidence)])


@pytest.fixture(scope="module")
def made_once(django_db_setup, django_db_blocker) -> tuple[int, int, int, list[int]]:
    """The admin carol and the world's rows, made once for the module: each test runs in a
    savepoint of this transaction, which is rolled back after the last one. Their ids."""
    with django_db_blocker.unblock(), transaction.atomic():
        admin = role_user_create("carol", role="admin")
        run = ExtractionRunFactory()
        for i in range(N_CALIBRATION):
            statement = StatementFactory(discussion=DiscussionFactory())
            ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload(f"Ann{i}", 0.95))
            FeedbackFactory(
                statement=statement,
                edited_extraction=_payload(f"Ann{i}", 1.0),
                status=Feedback.Status.APPROVED,
                approved_by=admin,
                approved_at=timezone.now(),
            )
        fresh = DiscussionFactory()
        new = [StatementFactory(discussion=fresh) for _ in range(3)]
        for statement, confidence in zip(new, (0.97, 0.96, 0.30), strict=True):
            ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload("Bo", confidence))
        yield admin.pk, run.pk, fresh.pk, [s.pk for s in new]
        transaction.set_rollback(True)


@pytest.fixture
def admin_user(made_once, db, django_user_model):
    return django_user_model.objects.get(pk=made_once[0])


@pytest.fixture
def world(made_once, db):
    """A run that is right on 24 approved discussions (confident), and a new discussion with
    two confident statements and one hesitant one (read afresh from the rows made once)."""
    _, run, fresh, new = made_once
    statements = Statement.objects.in_bulk(new)
    return (
        ExtractionRun.objects.get(pk=run),
        Discussion.objects.get(pk=fresh),
        [statements[pk] for pk in new],
    )


def _turn_on(run, admin, **overrides):
    choice = {"enabled": True, "alpha": 0.1, "delta": 0.1, "acceptable_f1": 1.0}
    choice |= {"qa_rate": 0.0, "lowest_first": False, **overrides}
    return triage_settings_update(run=run, admin=admin, choice=TriageChoice(**choice))


def _values(run) -> dict:
    return MetricResult.objects.get(key=run_key(TRIAGE, run.pk)).values


def test_a_setting_out_of_range_is_refused_naming_it(world, admin_user):
    run, _, _ = world
    with pytest.raises(TriageSettingsError, match=r"alpha: expected a number in \(0.0, 0.5\]"):
        _turn_on(run, admin_user, alpha=0.0)
    assert not TriageSettings.objects.exists()


def test_off_computes_the_threshold_but_accepts_nothing(world, admin_user, auditor):
    run, fresh, _ = world
    _turn_on(run, admin_user, enabled=False)
    triage_result_compute(run_id=run.pk)
    values = _values(run)
    assert values["threshold"]["threshold"] == 0.95  # every approved statement scores 0.95
    assert values["threshold"]["bound"] <= 0.1 and values["n_above"] == 2
    assert not TriageStatement.objects.filter(provisional=True).exists()
    assert discussion_queue(user=auditor).get(pk=fresh.pk).n_subject == 3


def test_on_the_confident_statements_leave_the_queue(world, admin_user, auditor):
    run, fresh, new = world
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    provisional = set(TriageStatement.objects.provisional().values_list("statement_id", flat=True))
    assert provisional == {new[0].pk, new[1].pk}
    queued = discussion_queue(user=auditor).get(pk=fresh.pk)
    assert queued.n_subject == 1 and queued.next_uncoded == new[2].pk
    entry = AuditLogEntry.objects.get(action=AuditLogEntry.Action.TRIAGE_ACCEPT)
    assert "2 statements AI accepted" in entry.message
    assert _values(run)["n_saved"] == 2 and _values(run)["hours_saved"] > 0


def test_a_statement_someone_started_coding_stays_with_the_humans(world, admin_user, auditor):
    run, _, new = world
    FeedbackFactory(statement=new[0], auditor=auditor, status=Feedback.Status.DRAFT)
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    assert list(TriageStatement.objects.provisional().values_list("statement_id", flat=True)) == [
        new[1].pk
    ]


def test_the_qa_sample_stays_in_the_queue(world, admin_user, auditor):
    run, fresh, new = world
    _turn_on(run, admin_user, qa_rate=1.0)
    triage_result_compute(run_id=run.pk)
    assert set(TriageStatement.objects.qa().values_list("statement_id", flat=True)) == {
        new[0].pk,
        new[1].pk,
    }
    assert not TriageStatement.objects.provisional().exists()
    assert discussion_queue(user=auditor).get(pk=fresh.pk).n_subject == 3


def test_lowest_confidence_first_orders_the_queue(world, admin_user, auditor_client):
    run, fresh, new = world
    _turn_on(run, admin_user, lowest_first=True)
    triage_result_compute(run_id=run.pk)
    page = auditor_client.get(reverse("home"))
    first = page.context["rows"][0].discussion
    assert first.pk == fresh.pk and first.next_uncoded == new[2].pk


@pytest.mark.parametrize("shift", [0, 7, 19, 33])
def test_wrong_qa_results_trip_the_monitor_and_suspend_triage(world, admin_user, auditor, shift):
    """``shift``: rows made first, so the statements' ids (which the QA draw hashes) differ."""
    spare = DiscussionFactory()
    for _ in range(shift):
        StatementFactory(discussion=spare)
    run, _, _ = world
    _turn_on(run, admin_user, qa_rate=0.5)
    triage_result_compute(run_id=run.pk)
    # Injected errors: more confident statements the AI gets wrong; about half are drawn for
    # QA (24, so that the draw gives the monitor enough of them whatever the ids).
    more = [StatementFactory(discussion=DiscussionFactory()) for _ in range(24)]
    for statement in more:
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload("Wrong", 0.99))
    triage_result_compute(run_id=run.pk)
    qa = list(TriageStatement.objects.qa().values_list("statement_id", flat=True))
    assert qa and TriageStatement.objects.provisional().exists()
    for statement_id in qa:
        FeedbackFactory(
            statement_id=statement_id,
            auditor=auditor,
            edited_extraction=_payload("Right", 1.0),
            status=Feedback.Status.APPROVED,
            approved_by=admin_user,
            approved_at=timezone.now(),
        )
    triage_result_compute(run_id=run.pk)
    settings = TriageSettings.objects.get(run=run)
    monitor = _values(run)["monitor"]
    assert monitor["tripped"] and monitor["n_unacceptable"] >= 2
    assert settings.state == "suspended" and "QA monitor" in settings.suspended_reason
    assert not TriageStatement.objects.provisional().exists()
    assert AuditLogEntry.objects.filter(action=AuditLogEntry.Action.TRIAGE_SUSPEND).count() == 1
    # Turning it on again restarts the monitor from the QA results coded after that.
    _turn_on(run, admin_user, qa_rate=0.5)
    triage_result_compute(run_id=run.pk)
    assert _values(run)["monitor"]["n"] == 0


def counted_live(run) -> dict[str, int]:
    """What ``triage_counts`` stores, counted from the triage rows now (the oracle)."""
    rows = TriageStatement.objects.filter(run=run)
    qa = rows.filter(qa=True)
    approved = qa.filter(statement__feedback__status=Feedback.Status.APPROVED).distinct()
    return {
        "n_provisional": rows.filter(provisional=True).count(),
        "n_qa": qa.count(),
        "n_qa_approved": approved.count(),
    }


def test_the_stored_counts_follow_every_change_of_the_marks(world, admin_user, auditor):
    """Counted when triage applies its outcome, approves QA statements (through the
    recompute an approval queues), is suspended and turned off: always what the rows say."""
    run, _, _ = world
    assert triage_counts(run_id=run.pk) == {"n_provisional": 0, "n_qa": 0, "n_qa_approved": 0}
    _turn_on(run, admin_user, qa_rate=0.5)
    more = [StatementFactory(discussion=DiscussionFactory()) for _ in range(24)]
    for statement in more:
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload("Wrong", 0.99))
    triage_result_compute(run_id=run.pk)
    counts = triage_counts(run_id=run.pk)
    assert counts == counted_live(run) and counts["n_provisional"] and counts["n_qa"]
    qa = list(TriageStatement.objects.qa().values_list("statement_id", flat=True))
    for statement_id in qa[:2]:
        FeedbackFactory(
            statement_id=statement_id, auditor=auditor, status=Feedback.Status.APPROVED,
            edited_extraction=_payload("Right", 1.0), approved_by=admin_user,
            approved_at=timezone.now(),
        )  # fmt: skip
    triage_result_compute(run_id=run.pk)
    counts = triage_counts(run_id=run.pk)
    assert counts == counted_live(run) and counts["n_qa_approved"] == 2
    triage_suspend(run_id=run.pk, reason="test")
    assert triage_counts(run_id=run.pk) == counted_live(run)
    assert triage_counts(run_id=run.pk)["n_provisional"] == 0
    _turn_on(run, admin_user, qa_rate=0.5)
    triage_result_compute(run_id=run.pk)
    assert triage_counts(run_id=run.pk) == counted_live(run)
    _turn_on(run, admin_user, enabled=False)
    assert triage_counts(run_id=run.pk) == counted_live(run)


def test_the_dashboard_reads_the_counts_without_reading_the_triage_rows(
    world, admin_user, admin_client
):
    run, _, _ = world
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(reverse("metrics:dashboard"))
    shown = re.search(rb'data-testid="triage-provisional">(\d+)<', page.content)
    assert shown and int(shown.group(1)) == counted_live(run)["n_provisional"] == 2
    assert not [q for q in queries.captured_queries if "audit_triagestatement" in q["sql"]]


def test_provisional_ground_truth_is_never_human_ground_truth(world, admin_user):
    run, fresh, new = world
    FeedbackFactory(
        statement=new[2],
        edited_extraction=_payload("Bo", 1.0),
        status=Feedback.Status.APPROVED,
        approved_by=admin_user,
        approved_at=timezone.now(),
    )
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    assert not Feedback.objects.filter(statement__in=new[:2]).exists()
    default = ground_truth_export(discussion_ids=[fresh.pk])
    statements = default["discussions"][0]["statements"]
    assert all("provisional_ground_truth" not in s for s in statements)
    assert [s["approved_feedback"] is not None for s in statements] == [False, False, True]
    marked = ground_truth_export(discussion_ids=[fresh.pk], include_provisional=True)
    provisional = [s["provisional_ground_truth"] for s in marked["discussions"][0]["statements"]]
    assert provisional[0]["pdp_deltas"]["people"][0]["name"] == "Bo"
    assert provisional[2] is None


# --- the API -------------------------------------------------------------------------------------


def test_api_turns_triage_on_and_lists_the_provisional_statements(world, api, admin_user):
    run, _, new = world
    client = api(admin_user)
    url = reverse("api-triage", args=[run.pk])
    body = {"enabled": True, "alpha": 0.1, "delta": 0.1, "acceptable_f1": 1.0, "qa_rate": 0.0}
    answer = client.put(url, {**body, "lowest_first": False}, format="json")
    assert answer.status_code == 200 and answer.json()["state"] == "active"
    triage_result_compute(run_id=run.pk)
    got = client.get(url).json()
    assert got["threshold"]["threshold"] == 0.95 and got["counts"]["n_provisional"] == 2
    listed = client.get(reverse("api-triage-statements", args=[run.pk]) + "?provisional=true")
    rows = listed.json()["results"]
    assert [r["statement"] for r in rows] == [new[0].pk, new[1].pk]
    assert rows[0]["provisional_ground_truth"]["people"][0]["name"] == "Bo"


def test_api_refuses_bad_settings_naming_the_field(world, api, admin_user):
    run, _, _ = world
    url = reverse("api-triage", args=[run.pk])
    body = {"enabled": True, "alpha": "0.1", "delta": 0.1, "acceptable_f1": 1.0}
    answer = api(admin_user).put(
        url, {**body, "qa_rate": 0.1, "lowest_first": False}, format="json"
    )
    assert answer.status_code == 400 and "alpha" in str(answer.json())
    answer = api(admin_user).put(
        url, {**body, "alpha": 0.9, "qa_rate": 0.1, "lowest_first": False}, format="json"
    )
    assert answer.status_code == 400 and "alpha" in str(answer.json())
    assert not TriageSettings.objects.exists()


def test_api_is_for_admins_only(world, api, auditor):
    run, _, _ = world
    assert api(auditor).get(reverse("api-triage", args=[run.pk])).status_code == 403
    assert api().get(reverse("api-triage", args=[run.pk])).status_code in (401, 403)
    assert api(auditor).get(reverse("api-triage-statements", args=[run.pk])).status_code == 403


# --- the settings page and the card --------------------------------------------------------------


def test_settings_page_saves_and_refuses_bad_numbers(world, admin_client):
    run, _, _ = world
    url = reverse("metrics:triage_settings", args=[run.pk])
    assert admin_client.get(url).status_code == 200
    form = {"enabled": "on", "alpha": "0.7", "delta": "0.1", "acceptable_f1": "1", "qa_rate": "0.1"}
    form["score"] = "raw"
    bad = admin_client.post(url, form)
    assert bad.status_code == 400 and "alpha" in bad.content.decode()
    good = admin_client.post(url, {**form, "alpha": "0.05"})
    assert good.status_code == 302 and TriageSettings.objects.get(run=run).is_active


def test_settings_page_reads_the_run_with_its_label_in_one_query(world, admin_client):
    run, _, _ = world
    url = reverse("metrics:triage_settings", args=[run.pk])
    admin_client.get(url)
    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(url).content.decode()
    assert run.label in page
    alone = [q for q in queries if q["sql"].lstrip().startswith('SELECT "audit_runconfiguration"')]
    assert alone == []


def test_settings_page_is_for_admins_only(world, auditor_client):
    run, _, _ = world
    url = reverse("metrics:triage_settings", args=[run.pk])
    assert auditor_client.get(url).status_code == 403


def test_the_card_shows_tau_bound_coverage_and_the_monitor(world, admin_client, admin_user):
    run, _, _ = world
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    html = admin_client.get(reverse("metrics:triage_card", args=[run.pk])).content.decode()
    assert "τ = 0.950" in html and "QA monitor" in html and "<svg" in html
    assert 'data-testid="triage-state">active<' in html


def test_api_export_adds_provisional_ground_truth_only_on_request(world, api, admin_user):
    run, fresh, new = world
    FeedbackFactory(
        statement=new[2],
        edited_extraction=_payload("Bo", 1.0),
        status=Feedback.Status.APPROVED,
        approved_by=admin_user,
        approved_at=timezone.now(),
    )
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    url = reverse("api-ground-truth-export") + f"?discussion_ids={fresh.pk}"
    plain = api(admin_user).get(url).json()["discussions"][0]["statements"]
    assert all("provisional_ground_truth" not in s for s in plain)
    marked = api(admin_user).get(url + "&include_provisional=true").json()
    provisional = [s["provisional_ground_truth"] for s in marked["discussions"][0]["statements"]]
    assert provisional[0]["confidence"] == 0.97 and provisional[2] is None


def test_assignments_skip_what_triage_accepted(world, admin_user, auditor):
    from audit.models import Assignment
    from audit.services.assignments import AssignmentPlan, assignment_next, assignments_create

    run, fresh, new = world
    _turn_on(run, admin_user)
    triage_result_compute(run_id=run.pk)
    plan = AssignmentPlan(discussions=[fresh], auditors=[auditor])
    assignments_create(plan=plan, admin=admin_user)
    assert list(Assignment.objects.values_list("statement_id", flat=True)) == [new[2].pk]
    assert assignment_next(user=auditor) == new[2]


def test_calibrated_scores_rank_by_what_other_discussions_teach(world, admin_user):
    run, _, new = world
    for i in range(6):  # the run is wrong where it hesitates
        statement = StatementFactory(discussion=DiscussionFactory())
        ExtractionFactory(statement=statement, run=run, pdp_deltas=_payload(f"Zed{i}", 0.4))
        FeedbackFactory(
            statement=statement,
            edited_extraction=_payload(f"Amy{i}", 1.0),
            status=Feedback.Status.APPROVED,
            approved_by=admin_user,
            approved_at=timezone.now(),
        )
    _turn_on(run, admin_user, score="calibrated")
    triage_result_compute(run_id=run.pk)
    values = _values(run)
    assert values["score"].startswith("Calibrated") and values["settings"]["score"] == "calibrated"
    scores = {int(k): v for k, v in values["scores"].items()}
    assert all(0.0 < v < 1.0 for v in scores.values())
    assert scores[new[0].pk] > 0.5 > scores[new[2].pk]
    assert values["threshold"]["threshold"] is not None and values["n_above"] == 2


def test_an_unknown_score_is_refused(world, admin_user):
    run, _, _ = world
    with pytest.raises(TriageSettingsError, match="score: expected one of raw, calibrated"):
        _turn_on(run, admin_user, score="magic")
