"""The run result's running totals, updated one statement at a time, always equal a
recomputation from scratch — whatever sequence of approvals, edits and unapprovals."""

import copy

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.models import Feedback
from audit.services import feedback_approve, feedback_reject, feedback_save, feedback_unapprove
from audit.services.inputs import speaker_save
from metrics.engine.services import run_result_compute
from metrics.models import MetricResult
from tests.metrics.extraction_helpers import (
    GT_VARIANTS,
    approve,
    expected_run,
    make_world,
    run_row,
    system_row,
)

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]

OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["approve", "unapprove", "edit", "reject"]),
        st.integers(min_value=0, max_value=5),  # which statement
        st.integers(min_value=0, max_value=len(GT_VARIANTS) - 1),  # which payload on edit
    ),
    min_size=1,
    max_size=12,
)


def apply(operation: str, feedback: Feedback, payload: dict, admin, auditor) -> None:
    if operation == "approve" and feedback.status == Feedback.Status.SUBMITTED:
        # After the admin's own edit, four eyes asks the only admin for a written reason.
        feedback_approve(feedback=feedback, admin=admin, self_approval_reason="sole admin")
    elif operation == "unapprove" and feedback.is_approved:
        feedback_unapprove(feedback=feedback, admin=admin)
    elif operation == "reject" and feedback.status in (
        Feedback.Status.SUBMITTED,
        Feedback.Status.APPROVED,
    ):
        feedback_reject(feedback=feedback, admin=admin, reason="recheck")
    elif operation == "edit":
        # Admins edit approved ground truth; a rejected feedback goes back to its auditor.
        user = admin if feedback.is_approved else auditor
        saved = feedback_save(
            feedback=feedback,
            user=user,
            edited_extraction=copy.deepcopy(payload),
            base_version=feedback.version,
        )
        if saved.status == Feedback.Status.DRAFT:
            Feedback.objects.filter(pk=saved.pk).update(status=Feedback.Status.SUBMITTED)


def assert_incremental_equals_full(run) -> None:
    row, expected = run_row(run), expected_run(run)
    if row is None:  # nothing was ever approved
        assert expected["n_statements"] == 0
        return
    assert row.status == MetricResult.Status.FRESH
    assert row.values["n_statements"] == expected["n_statements"]
    assert row.values["system"] == expected["system"]
    assert row.values["cumulative"] == expected["cumulative"]
    # Every sum exactly, the F1 sums too (integers): +/- updates leave no rounding behind.
    assert row.contribution["statements"] == expected["totals"]
    assert system_row().status == MetricResult.Status.FRESH


@pytest.fixture
def coded_world(auditor):
    """Made once for the test's examples (a function's fixture: hypothesis runs every example
    in the one call), 2 discussions × 3 statements coded, nothing approved."""
    return make_world(auditor, discussions=2, statements=3)


@settings(
    # Each example is a workflow on the database: at most 25 (the quick profile's fewer).
    max_examples=min(25, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
def test_incremental_totals_equal_a_full_recomputation(
    operations, coded_world, auditor, admin_user, django_capture_on_commit_callbacks
):
    # Each example runs in a savepoint that is rolled back, so examples start from the same
    # coded world.
    with transaction.atomic():
        f1_world = coded_world
        for operation, index, variant in operations:
            statement = f1_world.statements[index]
            with django_capture_on_commit_callbacks(execute=True):
                apply(operation, f1_world.fb(statement), GT_VARIANTS[variant], admin_user, auditor)
            assert_incremental_equals_full(f1_world.run)
        # A rebuild from the stored rows agrees with the running totals too.
        if run_row(f1_world.run) is not None:
            incremental = run_row(f1_world.run).values
            run_result_compute(run_id=f1_world.run.pk, rebuild=True)
            assert run_row(f1_world.run).values == incremental  # to the bit
        transaction.set_rollback(True)


def test_the_runs_stale_check_asks_for_one_row_in_an_indexs_order(
    auditor, admin_user, run_committed
):
    """``exists()`` drops the ordering, and PostgreSQL then trusted statistics that said half
    the table was stale (another run's recompute-all) and scanned every row for this run's
    stale one, which was not there (183 ms at 5,000 x 50 after every approval). Ordered by
    the partial index's columns and limited to one row, it walks the index instead."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from metrics.engine.services.runs import _children_status

    world = make_world(auditor, discussions=1, statements=2)
    for statement in world.statements:
        approve(run_committed, world, statement, admin_user)
    children = MetricResult.objects.filter(run=world.run, scope__in=["statement", "discussion"])
    assert children.count() == 3  # two statements and their discussion
    children.update(status=MetricResult.Status.FRESH)
    assert _children_status(world.run.pk)[0] == MetricResult.Status.FRESH
    children.filter(pk=children.order_by("pk")[0].pk).update(status=MetricResult.Status.STALE)
    with CaptureQueriesContext(connection) as queries:
        status, _ = _children_status(world.run.pk)

    stale_check = next(q["sql"] for q in queries.captured_queries if "'stale'" in q["sql"])
    assert 'ORDER BY "metrics_metricresult"."run_id" ASC, "metrics_metricresult"."scope" ASC' in (
        stale_check
    )
    assert stale_check.rstrip().endswith("LIMIT 1")
    assert status == MetricResult.Status.STALE


def test_the_system_row_counts_approved_ground_truth_of_subject_statements(
    auditor, admin_user, run_committed
):
    """The runs page's coverage divides by ``n_approved``: the approved codings of subject
    statements, read from the stored team figures and equal to counting them."""
    from audit.models import Speaker

    world = make_world(auditor, discussions=2, statements=3)
    for statement in world.statements[:4]:
        approve(run_committed, world, statement, admin_user)

    def counted() -> int:
        subject = Feedback.objects.approved().filter(statement__speaker__type=Speaker.Type.SUBJECT)
        return subject.count()

    assert system_row().values["n_approved"] == counted() == 4
    # A speaker becomes an expert: their statements are no ground truth any metric scores.
    speaker = world.statements[0].speaker
    speaker.type = Speaker.Type.EXPERT
    speaker_save(speaker=speaker)
    run_committed(run_result_compute, run_id=world.run.pk, rebuild=True)
    from metrics.engine.services import system_result_compute

    system_result_compute()
    expected = 4 - sum(1 for s in world.statements[:4] if s.speaker_id == speaker.pk)
    assert system_row().values["n_approved"] == counted() == expected < 4
