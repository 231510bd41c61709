"""The own-data results follow their inputs: marked stale when ground truth, extractions or
auditors' coding change, recomputed by their tasks, failures recorded, older results never
overwrite newer ones."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import Feedback, history_purge
from audit.services import feedback_approve, feedback_save, feedback_start, feedback_submit
from audit.services.inputs import inputs_delete
from metrics import tasks
from metrics.engine.services import results_mark_stale
from metrics.models import MetricResult
from metrics.own_data import common
from metrics.own_data import review_savings as selective
from metrics.own_data.common import (
    INTERAUDITOR_KEY,
    own_results_mark_stale,
    result_store,
)
from metrics.registry import CALIBRATION, INTERAUDITOR, REVIEW_SAVINGS, TRIAGE
from metrics.results import run_key
from tests.factories import (
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
)

STALE, FRESH, FAILED = "stale", "fresh", "failed"


@pytest.fixture(autouse=True)
def few_resamples(settings):
    settings.OWN_DATA_BOOTSTRAP_RESAMPLES = 20


def status(key: str) -> str | None:
    row = MetricResult.objects.filter(key=key).first()
    return row.status if row else None


@pytest.fixture
def approved_statement(auditor, admin_user):
    run = ExtractionRunFactory()
    extraction = ExtractionFactory(run=run)
    FeedbackFactory(
        statement=extraction.statement, auditor=auditor, status=Feedback.Status.APPROVED
    )
    return run, extraction.statement


@pytest.mark.django_db
class TestMarkStale:
    def test_placeholders_for_runs_with_ground_truth(self, approved_statement) -> None:
        run, _ = approved_statement
        ExtractionRunFactory()  # a run without ground truth gets no row
        own_results_mark_stale(reason="test")
        assert status(run_key(REVIEW_SAVINGS, run.pk)) == STALE
        assert status(run_key(CALIBRATION, run.pk)) == STALE
        assert status(INTERAUDITOR_KEY) == STALE
        assert MetricResult.objects.filter(family__in=[REVIEW_SAVINGS, CALIBRATION]).count() == 2

    def test_runs_with_ground_truth_are_those_that_extracted_an_approved_statement(
        self, approved_statement, auditor
    ) -> None:
        run, statement = approved_statement
        also = ExtractionRunFactory()
        ExtractionFactory(run=also, statement=statement)
        only_submitted = ExtractionRunFactory()
        submitted = ExtractionFactory(run=only_submitted).statement
        FeedbackFactory(statement=submitted, auditor=auditor, status=Feedback.Status.SUBMITTED)
        ExtractionRunFactory()  # extracted nothing
        assert common.runs_with_ground_truth() == sorted([run.pk, also.pk])
        assert common.runs_with_ground_truth(besides=[run.pk]) == [also.pk]

    def test_a_run_that_gains_ground_truth_after_the_first_marking_gets_its_rows(
        self, approved_statement, django_capture_on_commit_callbacks, monkeypatch
    ) -> None:
        """The search for runs with ground truth skips runs that have rows; a new one is found."""
        run, statement = approved_statement
        queued = []
        monkeypatch.setattr(common, "_queue_one", lambda family, run_id: queued.append(run_id))
        with django_capture_on_commit_callbacks(execute=True):
            own_results_mark_stale(reason="first")
        later = ExtractionRunFactory()
        ExtractionFactory(run=later, statement=statement)
        MetricResult.objects.filter(run_id=run.pk).update(status=FRESH)
        with django_capture_on_commit_callbacks(execute=True):
            assert own_results_mark_stale(reason="second") == 6  # each run's three rows
        assert status(run_key(REVIEW_SAVINGS, later.pk)) == STALE
        assert status(run_key(CALIBRATION, run.pk)) == STALE
        assert sorted(queued[4:]) == [run.pk] * 3 + [later.pk] * 3

    def test_queued_tasks_recompute_after_commit(
        self, approved_statement, django_capture_on_commit_callbacks
    ) -> None:
        run, _ = approved_statement
        with django_capture_on_commit_callbacks(execute=True):
            own_results_mark_stale(reason="test")
        for key in (
            run_key(REVIEW_SAVINGS, run.pk),
            run_key(CALIBRATION, run.pk),
            INTERAUDITOR_KEY,
        ):
            assert status(key) == FRESH
        assert (
            MetricResult.objects.get(key=run_key(REVIEW_SAVINGS, run.pk)).values["n_statements"]
            == 1
        )

    @pytest.mark.usefixtures("approved_statement")
    def test_a_burst_of_changes_queues_one_computation_per_row(
        self, django_capture_on_commit_callbacks, monkeypatch
    ) -> None:
        queued = []
        monkeypatch.setattr(common, "_queue_one", lambda family, run_id: queued.append(family))
        with django_capture_on_commit_callbacks(execute=True):
            assert own_results_mark_stale(reason="first") == 4
        with django_capture_on_commit_callbacks(execute=True):
            assert own_results_mark_stale(reason="second") == 0  # all stale already
        assert sorted(queued) == [CALIBRATION, INTERAUDITOR, REVIEW_SAVINGS, TRIAGE]

    def test_extraction_results_hook(
        self, approved_statement, django_capture_on_commit_callbacks
    ) -> None:
        """results_mark_stale (every ground-truth / extraction change) also marks these."""
        run, statement = approved_statement
        selective.review_savings_result_compute(run_id=run.pk)
        assert status(run_key(REVIEW_SAVINGS, run.pk)) == FRESH
        with django_capture_on_commit_callbacks(execute=False):
            results_mark_stale(statement_ids=[statement.pk], reason="test")
        assert status(run_key(REVIEW_SAVINGS, run.pk)) == STALE
        assert status(INTERAUDITOR_KEY) == STALE

    def test_approval_recomputes_review_savings(
        self, auditor, second_auditor, admin_user, make_user, django_capture_on_commit_callbacks
    ) -> None:
        run = ExtractionRunFactory()
        extraction = ExtractionFactory(run=run)
        with django_capture_on_commit_callbacks(execute=True):
            feedback = feedback_start(statement=extraction.statement, auditor=auditor)
            feedback = feedback_submit(feedback=feedback, user=auditor)
            feedback_approve(feedback=feedback, admin=admin_user)
        row = MetricResult.objects.get(key=run_key(REVIEW_SAVINGS, run.pk))
        assert row.is_fresh and row.values["n_statements"] == 1
        assert row.values["mean_loss"] == 0.0  # the auditor kept the AI's extraction
        # An admin edits the ground truth and another approves it: the figures follow.
        with django_capture_on_commit_callbacks(execute=True):
            proposed = feedback_save(
                feedback=Feedback.objects.get(pk=feedback.pk),
                user=admin_user,
                edited_extraction={"people": [{"id": 1, "name": "Somebody Else"}]},
                base_version=None,
            )
            feedback_approve(feedback=proposed, admin=make_user("admin2", role="admin"))
        row.refresh_from_db()
        assert row.is_fresh and row.values["mean_loss"] == 1.0


@pytest.mark.django_db
class TestCodingChanges:
    def test_submitting_coding_marks_agreement_stale(
        self, auditor, django_capture_on_commit_callbacks
    ) -> None:
        statement = StatementFactory()
        ExtractionFactory(statement=statement)
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            feedback = feedback_start(statement=statement, auditor=auditor)
        # A draft is not coding yet: nothing of the metrics goes stale (the team page's
        # active time, audit's own, is replayed for any revision).
        assert [c for c in callbacks if c.__module__ != "audit.derived.coding_times"] == []
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            feedback_submit(feedback=feedback, user=auditor)
        assert len(callbacks) >= 1
        row = MetricResult.objects.get(key=INTERAUDITOR_KEY)
        assert row.is_fresh and row.values["n_codings"] == 1

    def test_one_recompute_per_transaction(self, auditor, django_capture_on_commit_callbacks):
        statements = [StatementFactory() for _ in range(3)]
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            for statement in statements:
                FeedbackFactory(statement=statement, auditor=auditor)
            with history_purge():
                inputs_delete(rows=Feedback.objects.filter(statement__in=statements))
        # Besides the team page's active time (audit's own: its queue once per change, the
        # first to run queues the task).
        assert len([c for c in callbacks if c.__module__ != "audit.derived.coding_times"]) == 1

    def test_deleting_coding_marks_agreement_stale(
        self, auditor, django_capture_on_commit_callbacks
    ) -> None:
        feedback = FeedbackFactory(auditor=auditor, status=Feedback.Status.DRAFT)
        Feedback.objects.filter(pk=feedback.pk).update(status=Feedback.Status.SUBMITTED)
        feedback.refresh_from_db()
        with django_capture_on_commit_callbacks(execute=True), history_purge():
            inputs_delete(rows=Feedback.objects.filter(pk=feedback.pk))
        row = MetricResult.objects.get(key=INTERAUDITOR_KEY)
        assert row.is_fresh and row.values["n_codings"] == 0


@pytest.mark.django_db
class TestComputing:
    def test_task_records_a_failure(self, approved_statement, monkeypatch) -> None:
        run, _ = approved_statement

        def broken(*args, **kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(selective, "review_savings_values", broken)
        tasks.compute_own_data.delay(family="review_savings", run_id=run.pk)
        row = MetricResult.objects.get(key=run_key(REVIEW_SAVINGS, run.pk))
        assert row.status == FAILED and "boom" in row.error
        monkeypatch.undo()
        tasks.compute_own_data.delay(
            family="review_savings", run_id=run.pk
        )  # a failed row is recomputed
        row.refresh_from_db()
        assert row.status == FRESH and row.error == ""

    def test_tasks(self, approved_statement) -> None:
        run, _ = approved_statement
        tasks.compute_own_data.delay(family="calibration", run_id=run.pk)
        tasks.compute_own_data.delay(family="interauditor")
        assert status(run_key(CALIBRATION, run.pk)) == FRESH
        assert status(INTERAUDITOR_KEY) == FRESH

    def test_older_inputs_never_overwrite_newer(self) -> None:
        now = timezone.now()
        fields = {
            "family": INTERAUDITOR,
            "key": INTERAUDITOR_KEY,
            "scope": "system",
            "run_id": None,
        }
        result_store(**fields, values={"n": "new"}, input_hash="b", read_at=now)
        row = result_store(
            **fields, values={"n": "old"}, input_hash="a", read_at=now - timedelta(seconds=1)
        )
        assert row.values["n"] == "new" and row.input_hash == "b"

    def test_a_change_during_the_computation_keeps_the_row_stale(
        self, approved_statement, django_capture_on_commit_callbacks, monkeypatch
    ) -> None:
        run, _ = approved_statement
        own_results_mark_stale(reason="change")  # stale_since = now
        queued = []
        monkeypatch.setattr(common, "_queue_one", lambda family, run_id: queued.append(run_id))
        read_before_the_change = timezone.now() - timedelta(minutes=1)
        fields = {"family": REVIEW_SAVINGS, "key": run_key(REVIEW_SAVINGS, run.pk)}
        with django_capture_on_commit_callbacks(execute=True):
            row = result_store(
                **fields,
                scope="run",
                run_id=run.pk,
                values={"n_statements": 1},
                input_hash="x",
                read_at=read_before_the_change,
            )
        assert row.status == STALE and row.values["n_statements"] == 1
        assert queued == [run.pk]  # computed again, from the new inputs
        row = selective.review_savings_result_compute(run_id=run.pk)
        assert row.status == FRESH

    def test_sweep_computes_stale_rows(self, approved_statement) -> None:
        run, _ = approved_statement
        own_results_mark_stale(reason="lost tasks")
        for family, run_id in [
            (REVIEW_SAVINGS, run.pk),
            (CALIBRATION, run.pk),
            (TRIAGE, run.pk),
            (INTERAUDITOR, None),
        ]:
            common.own_sweep_mark_clear(family=family, run_id=run_id)
        # review savings, calibration, triage, inter-auditor: queued (run at once, eager)
        assert common.own_results_queue_stale() == 4
        assert status(run_key(REVIEW_SAVINGS, run.pk)) == FRESH
        assert common.own_results_queue_stale() == 0

    def test_the_periodic_sweep_queues_stale_rows_once_each(
        self, approved_statement, monkeypatch
    ) -> None:
        """The sweep may run on a fast worker: whole runs go to their own queue, not computed
        there; while the slow worker is busy, later sweeps do not pile up more of them."""
        run, _ = approved_statement
        own_results_mark_stale(reason="lost tasks")
        MetricResult.objects.update(stale_since=timezone.now() - timedelta(hours=1))
        queued: list[tuple] = []
        monkeypatch.setattr(
            common, "_queue_one", lambda family, run_id: queued.append((family, run_id))
        )
        targets = [
            (REVIEW_SAVINGS, run.pk),
            (CALIBRATION, run.pk),
            (TRIAGE, run.pk),
            (INTERAUDITOR, None),
        ]
        for family, run_id in targets:  # a shared cache may hold marks of an earlier test
            common.own_sweep_mark_clear(family=family, run_id=run_id)

        assert tasks.recompute_stale.delay().get()["own_data"] == 4
        assert sorted(queued, key=str) == sorted(targets, key=str)
        assert status(run_key(REVIEW_SAVINGS, run.pk)) == STALE  # not computed in the sweep
        assert common.own_results_queue_stale() == 0  # one waits already
        monkeypatch.undo()
        tasks.compute_own_data(REVIEW_SAVINGS, run.pk)  # the task starts: its mark goes
        assert status(run_key(REVIEW_SAVINGS, run.pk)) == FRESH
        common.own_results_mark_stale(reason="changed again")
        queued.clear()
        monkeypatch.setattr(
            common, "_queue_one", lambda family, run_id: queued.append((family, run_id))
        )
        assert common.own_results_queue_stale() == 1 and queued == [(REVIEW_SAVINGS, run.pk)]
