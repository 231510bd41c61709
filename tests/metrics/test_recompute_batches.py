"""Recompute jobs in chunks and batches store exactly what the per-result tasks store, and
the chunks share one job: the last to finish settles the runs, once."""

import copy
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.models import Extraction, Feedback
from audit.services import feedback_approve
from audit.services.inputs import inputs_delete
from evalsite.access import ensure_role_groups
from metrics.engine import services
from metrics.engine.recompute import (
    batches,
    compute_job_chunk,
    compute_job_run,
    jobs,
    metrics_recompute_all,
)
from metrics.engine.services.children import FIGURES
from metrics.engine.services.rows import STORED_FIELDS
from metrics.models import ComputeJob, MetricResult
from tests.factories import ExtractionFactory, ExtractionRunFactory
from tests.metrics.extraction_helpers import (
    GT_VARIANTS,
    World,
    extraction_results_only,
    make_world,
    run_row,
)

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]
Scope, Status = MetricResult.Scope, MetricResult.Status


@pytest.fixture
def small_chunks(settings):
    settings.RECOMPUTE_CHUNK_ITEMS = 5
    settings.RECOMPUTE_BATCH_ITEMS = 2


def two_runs_world(auditor) -> World:
    """3 discussions × 4 statements coded; a second run that extracted half of them, with
    other payloads."""
    world = make_world(auditor, discussions=3, statements=4)
    second = ExtractionRunFactory()
    for index, statement in enumerate(world.statements[::2]):
        payload = copy.deepcopy(GT_VARIANTS[(index + 1) % len(GT_VARIANTS)])
        ExtractionFactory(statement=statement, run=second, pdp_deltas=payload)
    return world


def two_runs_create(auditor, admin, committed) -> World:
    """The world's codings approved, in one transaction; every result computed by the
    per-result tasks the approvals queue."""
    world = two_runs_world(auditor)

    def approve_all() -> None:
        with transaction.atomic():
            for statement in world.statements:
                feedback_approve(feedback=world.fb(statement), admin=admin)

    committed(approve_all)
    return world


def users_create() -> tuple:
    """An auditor and an admin, as conftest's make_user makes them."""
    auditor_group, admin_group = ensure_role_groups()
    users = get_user_model().objects
    auditor = users.create_user(username="alice", password="pw-test-12345")
    admin = users.create_user(username="carol", password="pw-test-12345")
    auditor.groups.add(auditor_group)
    admin.groups.add(admin_group)
    return auditor, admin


def on_commit_run(function, *args, **kwargs):
    """Run a block as if it were a request: its on-commit hooks (and eager tasks) run after."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return function(*args, **kwargs)


@pytest.fixture
def two_runs_committed(transactional_db, auditor, admin_user, run_committed):
    return two_runs_create(auditor, admin_user, run_committed)


@pytest.fixture
def two_runs_approved_in_bulk(transactional_db, auditor, admin_user):
    """The world's codings approved in one update, no result computed: for the tests of a
    recompute job that fails (the job computes every result itself)."""
    world = two_runs_world(auditor)
    Feedback.objects.filter(statement__in=world.statements).update(
        status=Feedback.Status.APPROVED, approved_by=admin_user, approved_at=timezone.now()
    )
    return world


def stored() -> dict[str, tuple]:
    rows = MetricResult.objects.filter(family="extraction").exclude(scope=Scope.SYSTEM)
    return {
        row.key: (row.status, row.values, row.contribution, row.input_hash, row.code_version)
        for row in rows
    }


def _batch_queries(world, discussions: int) -> int:
    """Queries of one batch holding `discussions` discussions with their statements."""
    MetricResult.objects.filter(family="extraction").update(status=Status.STALE)
    keep = {d.pk for d in world.discussions[:discussions]}
    items = [
        (Scope.STATEMENT, s.pk, world.run.pk) for s in world.statements if s.discussion_id in keep
    ] + [(Scope.DISCUSSION, d, world.run.pk) for d in keep]
    with CaptureQueriesContext(connection) as queries:
        batches._batch_compute(items, force=True)
    return len(queries)


class TestTwoApprovedRuns:
    """The approved world, made once for these tests: each runs in a savepoint of its
    transaction, rolled back after the last one (the tests that commit make their own,
    ``two_runs_committed``)."""

    @pytest.fixture(scope="class")
    @classmethod
    def two_runs(cls, django_db_setup, django_db_blocker):
        with django_db_blocker.unblock(), transaction.atomic(), extraction_results_only():
            yield two_runs_create(*users_create(), on_commit_run)
            transaction.set_rollback(True)

    def test_chunked_batches_store_what_the_per_result_tasks_store(self, two_runs, small_chunks):
        by_tasks = stored()
        assert len(by_tasks) == 12 + 6 + 3 + 3 + 2  # statements, discussions per run, two runs
        MetricResult.objects.filter(family="extraction").update(values=None, contribution=None)

        job = compute_job_run(job_id=metrics_recompute_all(queue=False).pk, parallel=True)

        assert (job.status, job.done, job.total) == (ComputeJob.Status.DONE, 27, 27)
        assert job.params["chunks"] == [5, 5, 5, 5, 4] and job.params["progress"] == [5, 5, 5, 5, 4]
        assert stored() == by_tasks

    def test_a_result_whose_inputs_went_away_is_removed_and_leaves_the_totals(self, two_runs):
        gone = two_runs.statements[1]
        Feedback.objects.filter(statement=gone).update(status=Feedback.Status.SUBMITTED)

        compute_job_run(job_id=metrics_recompute_all(queue=False).pk)

        assert not MetricResult.objects.filter(scope=Scope.STATEMENT, statement=gone).exists()
        assert run_row(two_runs.run).values["n_statements"] == 11

    def test_a_statement_that_fails_is_recorded_and_the_batch_goes_on(self, two_runs):
        broken = two_runs.statements[2]
        real = FIGURES[Scope.STATEMENT]

        def figures(row, inputs):
            if row.statement_id == broken.pk:
                raise ZeroDivisionError("a bug in one statement")
            return real(row, inputs)

        with mock.patch.dict(FIGURES, {Scope.STATEMENT: figures}):
            job = compute_job_run(job_id=metrics_recompute_all(queue=False).pk)

        assert job.status == ComputeJob.Status.DONE
        failed = MetricResult.objects.filter(status=Status.FAILED, scope=Scope.STATEMENT)
        assert {row.statement_id for row in failed} == {broken.pk}  # in both runs
        assert "ZeroDivisionError: a bug in one statement" in failed.first().error
        assert run_row(two_runs.run).status == Status.FAILED
        others = MetricResult.objects.filter(scope=Scope.STATEMENT).exclude(statement=broken)
        assert set(others.values_list("status", flat=True)) == {Status.FRESH}

    def test_the_last_chunk_to_finish_settles_the_runs_once(self, two_runs, small_chunks):
        job = metrics_recompute_all(queue=False)
        with mock.patch.object(jobs, "task_enqueue_named") as queued:
            compute_job_run(job_id=job.pk, parallel=True)  # plans and queues the chunks
        chunks = [call.kwargs for call in queued.call_args_list]
        assert [c["index"] for c in chunks] == [0, 1, 2, 3, 4]
        settled = []
        real_settle = jobs._job_settle

        def settle(*args, **kwargs):
            settled.append(args)
            real_settle(*args, **kwargs)

        with mock.patch.object(jobs, "_job_settle", side_effect=settle):
            for chunk in reversed(chunks):  # any order: workers finish when they finish
                job.refresh_from_db()
                assert job.status == ComputeJob.Status.RUNNING
                compute_job_chunk(**chunk)

        job.refresh_from_db()
        assert len(settled) == 1 and (job.status, job.done) == (ComputeJob.Status.DONE, job.total)
        assert run_row(two_runs.run).status == Status.FRESH

    def test_a_chunk_delivered_again_after_a_retry_redoes_nothing(self, two_runs, small_chunks):
        job = metrics_recompute_all(queue=False)
        with mock.patch.object(jobs, "task_enqueue_named") as queued:
            compute_job_run(job_id=job.pk, parallel=True)
        first = queued.call_args_list[0].kwargs
        compute_job_chunk(**first)
        with mock.patch.object(batches, "FIGURES") as figures:
            compute_job_chunk(**first)  # the retried task finds its results no longer stale
        figures.__getitem__.assert_not_called()
        job.refresh_from_db()
        assert job.params["progress"][0] == 5 and job.done == 5

    def test_a_full_recompute_marks_what_sums_statements_and_recomputes_every_statement(
        self, two_runs, small_chunks
    ):
        """The statement rows keep their figures (fresh) until their batch replaces them; the
        discussion and run rows say "updating" from the start; every row is computed again."""
        before = timezone.now()
        job = metrics_recompute_all(queue=False)
        with mock.patch.object(jobs, "task_enqueue_named") as queued:
            compute_job_run(job_id=job.pk, parallel=True)  # planned; no chunk has run yet

        rows = MetricResult.objects.filter(family="extraction")
        assert set(rows.filter(scope=Scope.STATEMENT).values_list("status", flat=True)) == {
            Status.FRESH
        }
        assert set(rows.exclude(scope=Scope.STATEMENT).values_list("status", flat=True)) == {
            Status.STALE
        }
        for chunk in queued.call_args_list:
            compute_job_chunk(**chunk.kwargs)
        job.refresh_from_db()
        assert job.status == ComputeJob.Status.DONE
        assert all(row.computed_at > before for row in rows.exclude(scope=Scope.SYSTEM))
        assert not rows.exclude(status=Status.FRESH).exists()

    def test_a_full_recompute_skips_a_statement_computed_after_it_began(
        self, two_runs, small_chunks
    ):
        """An approval's task that computed a row after the job began did the job's work on it."""
        job = metrics_recompute_all(queue=False)
        with mock.patch.object(jobs, "task_enqueue_named") as queued:
            compute_job_run(job_id=job.pk, parallel=True)
        first = queued.call_args_list[0].kwargs
        done = first["items"][0]
        assert done[0] == Scope.STATEMENT
        services.statement_result_compute(statement_id=done[1], run_id=done[2], force=True)
        row = MetricResult.objects.get(scope=Scope.STATEMENT, statement_id=done[1], run_id=done[2])
        computed: list = []
        real = FIGURES[Scope.STATEMENT]

        def spy(result, inputs):
            computed.append(result.statement_id)
            return real(result, inputs)

        with mock.patch.dict(FIGURES, {Scope.STATEMENT: spy}):
            compute_job_chunk(**first)

        assert done[1] not in computed
        assert {item[1] for item in first["items"][1:] if item[0] == Scope.STATEMENT} <= set(
            computed
        )
        row_after = MetricResult.objects.get(pk=row.pk)
        assert row_after.computed_at == row.computed_at

    def test_a_run_that_no_longer_covers_a_statement_loses_its_row(self, two_runs):
        extraction = Extraction.objects.filter(statement=two_runs.statements[0]).last()
        inputs_delete(rows=Extraction.objects.filter(pk=extraction.pk))
        compute_job_run(job_id=metrics_recompute_all(queue=False).pk)
        assert not MetricResult.objects.filter(
            scope=Scope.STATEMENT, statement=two_runs.statements[0], run=extraction.run
        ).exists()

    def test_each_discussion_follows_its_statements_in_the_plan(self, two_runs, small_chunks):
        job = metrics_recompute_all(queue=False)
        with mock.patch.object(jobs, "task_enqueue_named") as queued:
            compute_job_run(job_id=job.pk, parallel=True)
        items = [tuple(item) for call in queued.call_args_list for item in call.kwargs["items"]]
        discussion_of = {s.pk: s.discussion_id for s in two_runs.statements}
        for position, (scope, target, run_id) in enumerate(items):
            if scope == Scope.STATEMENT:
                later = items[position + 1 :]
                assert next(i for i in later if i[0] == Scope.DISCUSSION) == (
                    Scope.DISCUSSION,
                    discussion_of[target],
                    run_id,
                )
        assert len(items) == len(set(items)) == 12 + 6 + 3 + 3

    def test_a_batch_reads_its_inputs_in_queries_constant_in_its_size(self, two_runs):
        assert _batch_queries(two_runs, 1) == _batch_queries(two_runs, 3)

    def test_stored_rows_read_back_every_field_as_set(self, two_runs):
        row = MetricResult.objects.filter(scope=Scope.STATEMENT).first()
        computed_at = timezone.now() - timedelta(days=3, microseconds=7)
        row.values, row.contribution = {"quote": 'it\'s "odd" \\ ü', "n": [1.5, None]}, {"count": 2}
        row.input_hash, row.error, row.computed_at = "h" * 64, "", computed_at
        row.status, row.stale_since, row.code_version = Status.FRESH, None, "v-test"
        row.match_settings = {"strategy": "x"}

        batches._rows_store([row])

        again = MetricResult.objects.get(pk=row.pk)
        for name in STORED_FIELDS:
            assert getattr(again, name) == getattr(row, name), name

    def test_a_recompute_refreshes_the_planner_statistics_after_planning_and_at_its_end(
        self, two_runs, monkeypatch
    ):
        """The planning marks the discussion and run rows (not the statement rows), the job then
        writes every row: the planner is told both times, with the number of rows each step
        changed (evalsite/perf/planner.py decides whether that is a bulk write)."""
        MetricResult.objects.filter(
            scope=Scope.STATEMENT, statement=two_runs.statements[0]
        ).delete()
        refreshed: list[tuple] = []
        monkeypatch.setattr(
            jobs,
            "planner_statistics_refresh",
            lambda *, models, written: refreshed.append((list(models), written)),
        )

        job = compute_job_run(job_id=metrics_recompute_all(queue=False).pk)

        # The 8 discussion and run rows (3 + 3, 2) were marked, the deleted statement's two rows
        # (one per run) came back as placeholders; then every item of the job was done.
        assert refreshed == [([MetricResult], 8 + 2), ([MetricResult], job.total)]
        assert job.total == 27 and job.status == ComputeJob.Status.DONE


# --- a batch that fails ------------------------------------------------------------------------


def _failing_second_batch(monkeypatch, error: type) -> None:
    """The chunk's second batch raises ``error``; the others compute as they would."""
    real, calls = jobs._batch_compute, []

    def compute(items, *, force, **kwargs):
        calls.append(items)
        if len(calls) == 2:
            raise error("batch lost")
        real(items, force=force, **kwargs)

    monkeypatch.setattr(jobs, "_batch_compute", compute)


@pytest.mark.django_db(transaction=True)
def test_a_batch_that_fails_fails_the_job(two_runs_approved_in_bulk, small_chunks, monkeypatch):
    _failing_second_batch(monkeypatch, ValueError)

    job = compute_job_run(job_id=metrics_recompute_all(queue=False).pk)

    assert job.status == ComputeJob.Status.FAILED and "batch lost" in job.error
    assert job.done == 2  # the first batch, then nothing after the failed one


@pytest.mark.django_db(transaction=True)
def test_a_transient_error_in_a_batch_reaches_the_task_for_its_retry(
    two_runs_approved_in_bulk, small_chunks, monkeypatch
):
    from django.db import OperationalError

    job = metrics_recompute_all(queue=False)
    with mock.patch.object(jobs, "task_enqueue_named") as queued:
        compute_job_run(job_id=job.pk, parallel=True)
    _failing_second_batch(monkeypatch, OperationalError)

    with pytest.raises(OperationalError, match="batch lost"):
        compute_job_chunk(**queued.call_args_list[0].kwargs)
    job.refresh_from_db()
    assert job.status == ComputeJob.Status.RUNNING  # left for the retry, not failed
