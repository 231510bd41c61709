"""Every change to ground truth or extractions marks exactly the affected results stale and
recomputes them (Celery runs eagerly; on-commit hooks run as after a real request)."""

import copy
import json

import pytest
from django.db import connection, transaction
from django.db.models import ProtectedError, Q
from django.test.utils import CaptureQueriesContext

from audit.models import Discussion, Extraction, ExtractionRun, Feedback, Statement, history_purge
from audit.services import (
    discussions_import,
    extractions_import,
    feedback_approve,
    feedback_bulk_approve,
    feedback_reject,
    feedback_save,
    feedback_unapprove,
)
from audit.services.inputs import inputs_delete
from audit.services.runs import ConfigurationSpec, discussion_extractions_import, run_register
from metrics.engine import services
from metrics.engine.services import results_mark_stale, stale
from metrics.families.extraction import calculate_statement_f1
from metrics.models import ComputeJob, MetricResult
from tests.factories import ExtractionFactory, ExtractionRunFactory, StatementFactory, pdp
from tests.metrics.extraction_helpers import (
    AI,
    GT_VARIANTS,
    approve,
    expected_run,
    make_world,
    run_row,
    statement_row,
    system_row,
)

pytest_plugins = ["tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("only_extraction_results")]
Status = MetricResult.Status


def assert_matches_full_recompute(run) -> None:
    row, expected = run_row(run), expected_run(run)
    assert row.status == Status.FRESH
    assert row.values["n_statements"] == expected["n_statements"]
    assert row.values["n_discussions"] == expected["n_discussions"]
    assert row.values["system"] == pytest.approx(expected["system"])
    assert row.values["cumulative"] == pytest.approx(expected["cumulative"])


def test_approval_stores_fresh_statement_discussion_run_and_system_results(
    f1_world, admin_user, run_committed
):
    statement = f1_world.statements[1]
    approve(run_committed, f1_world, statement, admin_user)

    row = statement_row(statement, f1_world.run)
    expected = calculate_statement_f1(AI, GT_VARIANTS[1], statement_id=statement.pk)
    assert row.status == Status.FRESH
    assert row.values["aggregate_micro_f1"] == pytest.approx(expected.aggregate_micro_f1)
    assert row.values["pair_bonds_fp"] == 1  # the AI's bond is not in this ground truth
    assert row.input_hash and row.match_settings and row.code_version and row.computed_at
    discussion = MetricResult.objects.get(scope="discussion", discussion=statement.discussion)
    assert discussion.status == Status.FRESH
    assert discussion.values["statement_count"] == 1
    assert_matches_full_recompute(f1_world.run)
    assert system_row().status == Status.FRESH
    assert [r["run_id"] for r in system_row().values["runs"]] == [f1_world.run.pk]


def test_unapproval_removes_the_statement_and_its_contribution(f1_world, admin_user, run_committed):
    first, second = f1_world.statements[:2]
    approve(run_committed, f1_world, first, admin_user)
    approve(run_committed, f1_world, second, admin_user)
    assert run_row(f1_world.run).values["n_statements"] == 2

    run_committed(feedback_unapprove, feedback=f1_world.fb(first), admin=admin_user)

    assert statement_row(first, f1_world.run) is None
    assert statement_row(second, f1_world.run).status == Status.FRESH
    assert run_row(f1_world.run).values["n_statements"] == 1
    assert_matches_full_recompute(f1_world.run)


def test_rejecting_approved_feedback_removes_its_result(f1_world, admin_user, run_committed):
    statement = f1_world.statements[0]
    approve(run_committed, f1_world, statement, admin_user)
    run_committed(feedback_reject, feedback=f1_world.fb(statement), admin=admin_user, reason="no")
    assert statement_row(statement, f1_world.run) is None
    assert run_row(f1_world.run).values["n_statements"] == 0
    assert not MetricResult.objects.filter(scope="discussion").exists()
    assert_matches_full_recompute(f1_world.run)


def test_editing_approved_ground_truth_recomputes_it_once_approved(
    f1_world, admin_user, make_user, run_committed
):
    statement = f1_world.statements[0]  # GT equal to the AI: F1 1.0
    approve(run_committed, f1_world, statement, admin_user)
    before = statement_row(statement, f1_world.run)
    assert before.values["aggregate_micro_f1"] == 1.0

    feedback = f1_world.fb(statement)
    proposed = run_committed(
        feedback_save,
        feedback=feedback,
        user=admin_user,
        edited_extraction=pdp(),
        base_version=feedback.version,
    )
    # The change waits for another admin: the approved version stays the ground truth.
    assert statement_row(statement, f1_world.run).input_hash == before.input_hash
    second = make_user("admin2", role="admin")
    run_committed(feedback_approve, feedback=proposed, admin=second, base_version=proposed.version)

    after = statement_row(statement, f1_world.run)
    assert after.input_hash != before.input_hash
    assert after.values["aggregate_micro_f1"] == 0.0
    assert_matches_full_recompute(f1_world.run)


def test_bulk_approval_computes_every_statement_of_the_discussion(
    f1_world, auditor, admin_user, run_committed
):
    discussion = f1_world.discussions[0]
    versions = dict(
        Feedback.objects.filter(statement__discussion=discussion, auditor=auditor).values_list(
            "pk", "version"
        )
    )
    run_committed(
        feedback_bulk_approve,
        discussion=discussion,
        auditor=auditor,
        admin=admin_user,
        versions=versions,
    )
    rows = MetricResult.objects.filter(scope="statement", discussion=discussion)
    assert rows.count() == 3 and all(r.status == Status.FRESH for r in rows)
    assert_matches_full_recompute(f1_world.run)


def test_a_change_marks_only_the_affected_results_stale(f1_world, admin_user, run_committed):
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    other_discussion = f1_world.discussions[1]
    target = f1_world.statements[0]

    results_mark_stale(statement_ids=[target.pk], reason="test")  # hooks not run: stays stale

    stale = set(MetricResult.objects.filter(status=Status.STALE).values_list("key", flat=True))
    assert statement_row(target, f1_world.run).key in stale
    assert statement_row(f1_world.statements[1], f1_world.run).key not in stale
    assert MetricResult.objects.get(scope="discussion", discussion=target.discussion).key in stale
    assert not MetricResult.objects.filter(
        discussion=other_discussion, status=Status.STALE
    ).exists()
    assert run_row(f1_world.run).key in stale and system_row().key in stale


def test_just_approved_statement_gets_stale_placeholders(f1_world, admin_user):
    statement = f1_world.statements[0]
    with transaction.atomic():
        feedback = f1_world.fb(statement)
        Feedback.objects.filter(pk=feedback.pk).update(status=Feedback.Status.APPROVED)
    results_mark_stale(statement_ids=[statement.pk], reason="test")
    assert statement_row(statement, f1_world.run).status == Status.STALE
    assert run_row(f1_world.run).status == Status.STALE


def test_statement_without_extraction_in_a_run_is_not_counted(f1_world, admin_user, run_committed):
    other_run = ExtractionRunFactory()
    ExtractionFactory(statement=f1_world.statements[0], run=other_run, pdp_deltas=copy.deepcopy(AI))
    for statement in f1_world.statements[:2]:
        approve(run_committed, f1_world, statement, admin_user)
    assert run_row(f1_world.run).values["n_statements"] == 2
    assert run_row(other_run).values["n_statements"] == 1
    assert statement_row(f1_world.statements[1], other_run) is None
    # Its discussion is covered: the missing extraction counts as an empty AI delta.
    cumulative = MetricResult.objects.get(scope="discussion", run=other_run)
    assert cumulative.values["statement_count"] == 2
    assert_matches_full_recompute(other_run)
    assert len(system_row().values["runs"]) == 2


def test_importing_discussions_with_ground_truth_computes_results(run_committed, admin_user):
    subject = {
        "text": "My father John married Mary.",
        "speaker_type": "Subject",
        "pdp_deltas": copy.deepcopy(AI),
        "approved_feedback": {"auditor_id": "pat", "edited_extraction": GT_VARIANTS[1]},
    }
    data = {"discussion": {"external_id": "x1", "summary": "s"}, "statements": [subject]}
    run_committed(discussions_import, data=data, by=admin_user)
    run = Extraction.objects.get().run
    assert run_row(run).values["n_statements"] == 1
    assert_matches_full_recompute(run)


def test_a_large_import_is_marked_in_batches_and_recomputed_by_one_job(
    run_committed, admin_user, settings, monkeypatch
):
    """Over RECOMPUTE_CHUNK_ITEMS statements: no task per result, one stale-only job."""
    settings.RECOMPUTE_CHUNK_ITEMS = 2

    def per_result_tasks(*args, **kwargs):
        raise AssertionError("a large change must not queue a task per result")

    monkeypatch.setattr(stale, "_queue_recompute", per_result_tasks)
    subjects = [
        {
            "text": f"Statement {i}.",
            "speaker_type": "Subject",
            "pdp_deltas": copy.deepcopy(AI),
            "approved_feedback": {"auditor_id": "pat", "edited_extraction": GT_VARIANTS[i % 2]},
        }
        for i in range(5)
    ]
    data = {"discussion": {"external_id": "x5", "summary": "s"}, "statements": subjects}
    run_committed(discussions_import, data=data, by=admin_user)

    run = Extraction.objects.first().run
    job = ComputeJob.objects.get(kind=ComputeJob.Kind.RECOMPUTE)
    assert job.params["stale_only"] and job.status == ComputeJob.Status.DONE
    assert run_row(run).values["n_statements"] == 5
    assert_matches_full_recompute(run)
    assert not MetricResult.objects.filter(status=Status.STALE).exists()


def test_importing_extractions_recomputes_replaced_and_new_runs(
    f1_world, admin_user, run_committed
):
    statement = f1_world.statements[0]
    approve(run_committed, f1_world, statement, admin_user)
    before = statement_row(statement, f1_world.run).values["aggregate_micro_f1"]

    run_committed(
        extractions_import,
        run=f1_world.run,
        items=[{"statement": statement.pk, "pdp_deltas": pdp()}],
    )
    assert statement_row(statement, f1_world.run).values["aggregate_micro_f1"] != before

    new_run = ExtractionRunFactory()
    run_committed(
        extractions_import, run=new_run, items=[{"statement": statement.pk, "pdp_deltas": AI}]
    )
    assert statement_row(statement, new_run).status == Status.FRESH
    assert_matches_full_recompute(f1_world.run)
    assert_matches_full_recompute(new_run)


def test_deleting_an_extraction_removes_its_result(f1_world, admin_user, run_committed):
    for statement in f1_world.statements[:2]:
        approve(run_committed, f1_world, statement, admin_user)
    gone = Extraction.objects.filter(statement=f1_world.statements[0], run=f1_world.run)
    run_committed(inputs_delete, rows=gone)
    assert statement_row(f1_world.statements[0], f1_world.run) is None
    assert run_row(f1_world.run).values["n_statements"] == 1
    assert_matches_full_recompute(f1_world.run)


def _stored() -> dict[str, tuple]:
    """Every stored result as it is: status, figures and contribution by key."""
    return {
        row.key: (row.status, row.values, row.contribution) for row in MetricResult.objects.all()
    }


# Ground truth is never lost silently: a statement, a discussion or a coding that carries
# revisions cannot be deleted (audit.models.history_kept).


def test_deleting_a_statement_with_ground_truth_is_refused_and_keeps_the_results(
    f1_world, admin_user, run_committed
):
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    before = _stored()
    statement = f1_world.statements[0]
    with pytest.raises(ProtectedError):
        run_committed(inputs_delete, rows=Statement.objects.filter(pk=statement.pk))
    assert Statement.objects.filter(pk=statement.pk).exists()
    assert _stored() == before
    # Data a test or a benchmark seeded itself is purged past the refusal: the totals follow.
    with history_purge():
        run_committed(inputs_delete, rows=Statement.objects.filter(pk=statement.pk))
    assert run_row(f1_world.run).values["n_statements"] == len(f1_world.statements) - 1
    assert_matches_full_recompute(f1_world.run)


def test_deleting_a_discussion_with_ground_truth_is_refused_one_without_goes(
    f1_world, admin_user, run_committed
):
    coded_only, with_gt = f1_world.discussions
    for statement in f1_world.statements[3:]:  # the second discussion's
        approve(run_committed, f1_world, statement, admin_user)
    before = _stored()
    with pytest.raises(ProtectedError):
        run_committed(inputs_delete, rows=Discussion.objects.filter(pk=with_gt.pk))
    assert Discussion.objects.filter(pk=with_gt.pk).exists()
    assert _stored() == before
    # its codings were never approved: no history
    run_committed(inputs_delete, rows=Discussion.objects.filter(pk=coded_only.pk))
    assert not Discussion.objects.filter(pk=coded_only.pk).exists()
    assert run_row(f1_world.run).values["n_discussions"] == 1
    assert_matches_full_recompute(f1_world.run)


def test_deleting_a_statement_without_ground_truth_rebuilds_the_run_totals(
    f1_world, admin_user, run_committed
):
    """It may have been all that kept its discussion partly approved: a discussion-unit run
    scores that discussion from then on; the statement-unit run's figures stay as they were."""
    *approved, last = f1_world.statements
    for statement in approved:
        approve(run_committed, f1_world, statement, admin_user)
    spec = ConfigurationSpec(model_name="gpt-x", prompt_version="whole", unit="discussion")
    whole = run_register(spec=spec)[0]
    items = [{"discussion": d.pk, "pdp": copy.deepcopy(AI)} for d in f1_world.discussions]
    run_committed(discussion_extractions_import, run=whole, items=items)
    assert (run_row(whole).values["n_discussions"], run_row(whole).values["n_left_out"]) == (1, 1)

    run_committed(inputs_delete, rows=Statement.objects.filter(pk=last.pk))

    row = run_row(whole)
    assert row.status == Status.FRESH
    assert (row.values["n_discussions"], row.values["n_left_out"]) == (2, 0)
    assert run_row(f1_world.run).values["n_statements"] == len(approved)
    assert_matches_full_recompute(f1_world.run)


def test_deleting_a_run_drops_it_from_the_system_trend(f1_world, admin_user, run_committed):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    assert len(system_row().values["runs"]) == 1
    run_committed(inputs_delete, rows=ExtractionRun.objects.filter(pk=f1_world.run.pk))
    assert system_row().values["runs"] == []


def test_deleting_approved_feedback_is_refused_and_keeps_its_result(
    f1_world, admin_user, run_committed
):
    statement = f1_world.statements[0]
    approve(run_committed, f1_world, statement, admin_user)
    before = _stored()
    with pytest.raises(ProtectedError):
        run_committed(inputs_delete, rows=Feedback.objects.filter(pk=f1_world.fb(statement).pk))
    assert f1_world.fb(statement).is_approved
    assert statement_row(statement, f1_world.run).status == Status.FRESH
    assert _stored() == before


def test_expert_statements_and_other_discussions_are_untouched(f1_world, admin_user, run_committed):
    approve(run_committed, f1_world, f1_world.statements[0], admin_user)
    lonely = StatementFactory()
    run_committed(results_mark_stale, statement_ids=[lonely.pk], reason="test")
    assert not MetricResult.objects.filter(statement=lonely).exists()
    assert run_row(f1_world.run).status == Status.FRESH


def _rows() -> set[tuple]:
    return set(
        MetricResult.objects.values_list("key", "scope", "run_id", "discussion_id", "statement_id")
    )


def test_placeholders_are_created_for_exactly_the_missing_rows(
    f1_world, auditor, admin_user, run_committed
):
    """Two runs; the first has its rows, the second only some: the missing statement,
    discussion and run rows appear (stale, with their keys), the present ones are left."""
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    other = ExtractionRunFactory()
    for statement in f1_world.statements[:4]:  # all of discussion 0, one of discussion 1
        ExtractionFactory(statement=statement, run=other, pdp_deltas=copy.deepcopy(AI))
    with transaction.atomic():
        services.placeholders_create(Feedback.objects.approved(), [other.pk])
    before = _rows()
    services.rows_mark_stale(Q(run=other))  # existing rows: status only
    MetricResult.objects.filter(run=other, scope="statement").order_by("pk").first().delete()
    present = _rows()

    services.placeholders_create(Feedback.objects.approved(), None)

    created = _rows() - present
    first = f1_world.statements[0]
    assert created == {
        (
            services.statement_key(
                run_id=other.pk, discussion_id=first.discussion_id, statement_id=first.pk
            ),
            "statement",
            other.pk,
            first.discussion_id,
            first.pk,
        )
    }
    assert len(before) == len(present) + 1
    expected = (
        {("statement", other.pk, s.discussion_id, s.pk) for s in f1_world.statements[:4]}
        | {("discussion", other.pk, d.pk, None) for d in f1_world.discussions}
        | {("run", other.pk, None, None)}
    )
    assert {row[1:] for row in before if row[2] == other.pk} == expected
    assert not MetricResult.objects.filter(run=other).exclude(status=Status.STALE).exists()


def test_the_database_writes_the_placeholders_that_python_writes(auditor, admin_user):
    """PostgreSQL inserts the missing rows itself (INSERT ... SELECT): every field, the key
    included, is what the rows built in Python (SQLite's way) hold."""
    if connection.vendor != "postgresql":
        pytest.skip("the INSERT ... SELECT is PostgreSQL's")
    world = make_world(auditor, discussions=2, statements=3)
    Feedback.objects.filter(statement__in=world.statements[1:]).update(
        status=Feedback.Status.APPROVED
    )
    approved = Feedback.objects.approved()
    services.placeholders_create(approved.filter(statement=world.statements[1]), None)
    present = _fields()  # one statement's row, its discussion's and the run's exist already

    def created(write) -> tuple[int, list[tuple]]:
        with transaction.atomic():
            point = transaction.savepoint()
            count = write(services.missing_rows(approved, None))
            rows = sorted(set(_fields()) - set(present))
            transaction.savepoint_rollback(point)
        return count, rows

    by_database = created(lambda missing: sum(stale._placeholders_inserted(*m) for m in missing))
    by_python = created(stale._placeholders_created)

    # 4 more statements, the second discussion; every row stale since the write.
    assert by_database == by_python and by_database[0] == 4 + 1
    assert {row[2] for row in by_database[1]} == {"statement", "discussion"}


def _fields() -> list[tuple]:
    """Every field of every row but its id, and whether it has a stale_since."""
    names = [f.attname for f in MetricResult._meta.concrete_fields]
    names = [n for n in names if n not in ("id", "stale_since")]
    rows = MetricResult.objects.values_list(*names, Q(stale_since__isnull=False))
    return [tuple(json.dumps(v) if isinstance(v, dict) else v for v in row) for row in rows]


def test_placeholders_take_the_same_queries_for_any_number_of_statements(
    auditor, admin_user, settings
):
    """The missing rows are found by the database (one read per scope), not by listing every
    present key a batch at a time."""
    settings.RECOMPUTE_CHUNK_ITEMS = 10

    def queries(n_statements: int) -> int:
        world = make_world(auditor, discussions=2, statements=n_statements)
        Feedback.objects.filter(statement__in=world.statements).update(
            status=Feedback.Status.APPROVED
        )
        approved = Feedback.objects.approved().filter(statement__in=world.statements)
        with CaptureQueriesContext(connection) as captured:
            services.placeholders_create(approved, [world.run.pk])
        created = MetricResult.objects.filter(run=world.run).count()
        assert created == 2 * n_statements + 2 + 1
        return len(captured)

    assert queries(2) == queries(30)
