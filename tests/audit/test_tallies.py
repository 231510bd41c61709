"""The stored tallies per (discussion, auditor) follow every workflow: after any sequence of
starts, autosaves, submits, approvals (single and bulk), rejections, unapprovals, proposals,
assignments, skips, reassignments, unassignments and deletions, what is stored equals a
recount from the rows, pair for pair."""

from __future__ import annotations

import random

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext

from audit.derived.tallies import (
    SENT,
    queue_changed,
    tallies_counted,
    tallies_rebuild,
    tallies_stored,
)
from audit.derived.team_figures import (
    figures_counted,
    figures_stored,
    to_code_recounted,
    to_code_stored,
    weakest_counted,
    weakest_mine_counted,
    weakest_mine_stored,
    weakest_stored,
)
from audit.models import (
    Assignment,
    CodingTally,
    Discussion,
    DiscussionFigures,
    ExtractionRun,
    Feedback,
    Speaker,
    Statement,
    TriageSettings,
    TriageStatement,
    history_purge,
)
from audit.selectors.adjudication import adjudication_codings, statements_to_adjudicate
from audit.services import (
    WorkflowError,
    feedback_approve,
    feedback_bulk_approve,
    feedback_reject,
    feedback_save,
    feedback_start,
    feedback_submit,
    feedback_unapprove,
)
from audit.services.adjudication import adjudication_produce
from audit.services.assignments import (
    AssignmentPlan,
    assignment_reassign,
    assignments_create,
    assignments_unassign,
    statement_skip,
)
from audit.services.feedback import feedback_submit_next
from audit.services.inputs import inputs_delete, speaker_save
from audit.services.triage import triage_statements_apply, triage_suspend
from tests.factories import (
    DiscussionFactory,
    ExtractionRunFactory,
    SpeakerFactory,
    StatementFactory,
    pdp,
    person,
)

pytestmark = pytest.mark.django_db
S = Feedback.Status


def _world(n_discussions: int = 3, n_statements: int = 4) -> list[Statement]:
    statements = []
    for d in range(n_discussions):
        discussion = DiscussionFactory(summary=f"Tallied {d}")
        subject = SpeakerFactory(discussion=discussion, name="Ann")
        statements += [
            StatementFactory(discussion=discussion, speaker=subject, order=i)
            for i in range(n_statements)
        ]
    return statements


def _mine(rng: random.Random, *, status=None, auditor=None) -> Feedback | None:
    found = Feedback.objects.select_related("statement", "auditor")
    if status is not None:
        found = found.filter(status=status)
    if auditor is not None:
        found = found.filter(auditor=auditor)
    rows = list(found.order_by("pk"))
    return rng.choice(rows) if rows else None


def _triage_run() -> ExtractionRun:
    run = ExtractionRunFactory()
    TriageSettings.objects.create(run=run, enabled=True, qa_rate=0.0)
    return run


def _scored(run: ExtractionRun, statement: Statement, score: float) -> None:
    """A review triage score written past the service (``triage_statements_apply``), with the
    call it makes."""
    TriageStatement.objects.create(run=run, statement=statement, confidence=score)
    queue_changed(statement_ids=[statement.pk])


def _queue_step(rng: random.Random, action: str, statements: list[Statement]) -> bool:
    """What changes the statements still to code: review triage accepting some (or giving them
    back), a run deleted with its triage, a statement added, a speaker's role changed."""
    run = TriageSettings.objects.get().run
    if action == "triage":
        TriageSettings.objects.update(suspended_at=None)
        ids = [s.pk for s in statements]
        accepted = rng.sample(ids, rng.randint(0, len(ids)))
        scores = {pk: rng.random() for pk in ids}
        triage_statements_apply(run_id=run.pk, scores=scores, accepted=accepted, threshold=0.5)
    elif action == "suspend":
        triage_suspend(run_id=run.pk, reason="test")
    elif action == "rerun" and rng.random() < 0.3:
        inputs_delete(rows=ExtractionRun.objects.filter(pk=run.pk))
        _triage_run()
    elif action == "add_statement":
        speaker = rng.choice(list(Speaker.objects.all()))
        statements.append(StatementFactory(discussion=speaker.discussion, speaker=speaker))
    elif action == "speaker":
        speaker = rng.choice(list(Speaker.objects.all()))
        speaker.type = rng.choice(Speaker.Type.values)
        speaker_save(speaker=speaker)
    else:
        return False
    return True


def _step(rng: random.Random, statements, auditors, admins) -> str:
    action = rng.choice(
        ["start", "save", "submit", "submit", "approve", "approve", "reject", "unapprove",
         "propose", "bulk", "assign", "skip", "skip", "reassign", "unassign", "delete_feedback",
         "delete_statement", "adjudicate", "adjudicate", "triage", "triage", "suspend", "rerun",
         "add_statement", "speaker"]
    )  # fmt: skip
    auditor, admin = rng.choice(auditors), rng.choice(admins)
    if _queue_step(rng, action, statements):
        return action
    if action == "start":
        feedback_start(statement=rng.choice(statements), auditor=auditor)
    elif action == "save" and (f := _mine(rng, auditor=auditor)) and f.status != S.APPROVED:
        payload = pdp(people=[person(1, rng.choice(["Ann", "Bob"]))])
        feedback_save(feedback=f, user=auditor, edited_extraction=payload, base_version=None)
    elif action == "submit" and (f := _mine(rng, auditor=auditor)):
        feedback_submit(feedback=f, user=auditor)
    elif action == "approve" and (f := _mine(rng, status=S.SUBMITTED)):
        feedback_approve(feedback=f, admin=admin, replace=True, self_approval_reason="test")
    elif action == "reject" and (f := _mine(rng, status=S.SUBMITTED)):
        feedback_reject(feedback=f, admin=admin, reason="Check the dates.")
    elif action == "unapprove" and (f := _mine(rng, status=S.APPROVED)):
        feedback_unapprove(feedback=f, admin=admin)
    elif action == "propose" and (f := _mine(rng, status=S.APPROVED)):
        payload = pdp(people=[person(1, "Cid")])
        feedback_save(feedback=f, user=admin, edited_extraction=payload, base_version=None)
    elif action == "bulk" and (f := _mine(rng, status=S.SUBMITTED)):
        waiting = Feedback.objects.filter(
            status=S.SUBMITTED, auditor=f.auditor, statement__discussion=f.statement.discussion
        )
        feedback_bulk_approve(
            discussion=f.statement.discussion, auditor=f.auditor, admin=admin,
            versions={w.pk: w.version for w in waiting}, replace=True,
        )  # fmt: skip
    elif action == "assign":
        discussions = rng.sample(list(Discussion.objects.all()), 1)
        plan = AssignmentPlan(discussions=discussions, auditors=rng.sample(auditors, 2))
        assignments_create(plan=plan, admin=admin)
    elif action == "skip" and (a := Assignment.objects.open().order_by("?").first()):
        statement_skip(statement=a.statement, auditor=a.auditor, reason="unclear")
    elif action == "reassign" and (a := Assignment.objects.exclude(status="submitted").first()):
        assignment_reassign(assignment=a, auditor=rng.choice(auditors), admin=admin)
    elif action == "unassign" and (a := Assignment.objects.open().order_by("?").first()):
        assignments_unassign(assignments=Assignment.objects.filter(pk=a.pk), admin=admin)
    elif action == "delete_feedback" and (f := _mine(rng, status=S.DRAFT)):
        with history_purge():
            inputs_delete(rows=Feedback.objects.filter(pk=f.pk))
    elif action == "adjudicate" and (shared := statements_to_adjudicate(limit=5)):
        statement = rng.choice(list(shared))
        coders = [c.auditor_id for c in adjudication_codings(statement_id=statement.pk)]
        adjudication_produce(
            statement=statement, admin=admin, coder_ids=coders, payload=pdp(),
            choices={}, unanimous_items=0, adjudicated_items=0,
        )  # fmt: skip
    elif action == "delete_statement" and rng.random() < 0.3 and len(statements) > 4:
        gone = statements.pop(rng.randrange(len(statements)))
        with history_purge():
            inputs_delete(rows=Statement.objects.filter(pk=gone.pk))
    else:
        return ""
    return action


def _listed(statements) -> list[int]:
    return [s.pk for s in statements]


def to_adjudicate_counted(limit: int) -> list[int]:
    """The first ``limit`` subject statements to adjudicate, counted over every statement (the
    list reads only the discussions its stored tallies point to): two sent codings, not
    merged, no approved ground truth."""
    sent = Q(feedback__status__in=SENT, feedback__adjudication__isnull=True)
    approved = Feedback.objects.filter(status=S.APPROVED).values("statement_id")
    found = (
        Statement.objects.filter(speaker__type=Speaker.Type.SUBJECT)
        .exclude(pk__in=approved)
        .annotate(n_codings=Count("feedback", filter=sent))
        .filter(n_codings__gte=2, adjudication__feedback__isnull=True)
        .order_by("discussion_id", "order")
    )
    return _listed(found[:limit])


def test_the_statements_to_adjudicate_are_the_first_counted_over_every_discussion(
    make_user, admin_user
):
    """Discussions holding 2, 0, 3 and 1 statements two auditors both coded: every cut of the
    list is the first statements counted over all of them, however the cut falls."""
    statements = _world(n_discussions=4, n_statements=3)
    coders = [make_user("ann"), make_user("bo")]
    shared = [*statements[0:2], *statements[6:9], statements[9]]
    for statement in shared:
        for coder in coders:
            feedback_submit(feedback=feedback_start(statement=statement, auditor=coder), user=coder)
    for limit in range(1, 8):
        assert _listed(statements_to_adjudicate(limit=limit)) == to_adjudicate_counted(limit)
    assert to_adjudicate_counted(7) == [s.pk for s in shared]

    # One coding approved: the statement has ground truth, nothing is left to decide there;
    # the list, the stored tallies and a recount all drop it.
    first = Feedback.objects.filter(statement=shared[0]).first()
    feedback_approve(feedback=first, admin=admin_user)
    assert _listed(statements_to_adjudicate(limit=7)) == [s.pk for s in shared[1:]]
    assert to_adjudicate_counted(7) == [s.pk for s in shared[1:]]
    assert tallies_stored() == tallies_counted()
    assert sum(t["to_adjudicate"] for t in tallies_stored().values()) == 2 * len(shared[1:])


@pytest.mark.no_cover  # 200 random steps of code the example tests above cover, 4 times
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_stored_tallies_equal_a_recount_after_any_sequence_of_workflow_actions(
    seed, make_user, admin_user
):
    rng = random.Random(seed)
    statements = _world()
    _triage_run()
    auditors = [make_user(f"coder{i}") for i in range(3)]
    admins = [admin_user, make_user("admin2", role="admin")]
    for statement in statements[:3]:  # shared statements, for adjudication
        for coder in auditors[:2]:
            feedback_submit(feedback=feedback_start(statement=statement, auditor=coder), user=coder)
    done, checked = [], False
    for _ in range(200):
        try:
            done.append(_step(rng, statements, auditors, admins))
        except WorkflowError as exc:
            done.append(f"refused: {exc}")  # a refused action changes nothing
        if done[-1] == "" and checked:
            continue  # no action was called: the state checked after the last one is unchanged
        assert tallies_stored() == tallies_counted(), done[-1]
        assert figures_stored() == figures_counted(), done[-1]
        assert to_code_stored() == to_code_recounted(), done[-1]
        assert weakest_stored() == weakest_counted(), done[-1]
        assert weakest_mine_stored() == weakest_mine_counted(), done[-1]
        counted = to_adjudicate_counted(50)  # in a total order: each cut is its first items
        for limit in (1, 2, 50):
            assert _listed(statements_to_adjudicate(limit=limit)) == counted[:limit], done[-1]
        checked = True
    wanted = {"submit", "approve", "reject", "assign", "skip", "reassign", "adjudicate", "triage"}
    assert wanted <= set(done), wanted - set(done)
    stored = tallies_stored()
    figures = figures_stored()
    assert tallies_rebuild() == len(stored)
    assert tallies_stored() == stored
    assert figures_stored() == figures


def test_a_deleted_discussion_takes_its_tallies_with_it(auditor):
    statements = _world(n_discussions=1, n_statements=2)
    for statement in statements:
        feedback_submit(feedback=feedback_start(statement=statement, auditor=auditor), user=auditor)
    assert CodingTally.objects.get().submitted == 2

    with history_purge():
        inputs_delete(rows=Discussion.objects.filter(pk=statements[0].discussion_id))

    assert not CodingTally.objects.exists()
    assert figures_stored() == figures_counted() == {"discussion_id": {}, "auditor_id": {}}


def test_an_autosave_recounts_nothing_and_a_submit_recounts(auditor):
    feedback = feedback_start(statement=_world(1, 1)[0], auditor=auditor)
    payload = pdp(people=[person(1, "Ann")])

    with CaptureQueriesContext(connection) as saving:
        feedback_save(feedback=feedback, user=auditor, edited_extraction=payload, base_version=None)
    with CaptureQueriesContext(connection) as submitting:
        feedback_submit(feedback=feedback, user=auditor)

    assert not [q for q in saving.captured_queries if "audit_codingtally" in q["sql"]]
    assert [q for q in submitting.captured_queries if "audit_codingtally" in q["sql"]]
    assert CodingTally.objects.get().submitted == 1


def test_submit_and_next_recounts_once(auditor, admin_user):
    """The coding sent, the assignment it releases and the next coding started: one recount
    of the pair, one transaction (the tallies' rows are locked once)."""
    first, second = _world(1, 2)
    assignments_create(
        plan=AssignmentPlan(discussions=[first.discussion], auditors=[auditor]), admin=admin_user
    )
    feedback = feedback_start(statement=first, auditor=auditor)

    with CaptureQueriesContext(connection) as seen:
        submitted, following = feedback_submit_next(feedback=feedback, user=auditor)

    locks = [q for q in seen.captured_queries if 'FROM "audit_codingtally"' in q["sql"]]
    assert len(locks) == 1, [q["sql"][:120] for q in locks]
    assert submitted.status == S.SUBMITTED
    assert following is not None and following.statement_id == second.pk
    assert tallies_stored() == tallies_counted()
    assert tallies_stored()[(first.discussion_id, auditor.pk)]["submitted"] == 1


def test_the_command_checks_and_rebuilds(auditor, capsys):
    feedback_start(statement=_world(1, 1)[0], auditor=auditor)
    CodingTally.objects.update(coded=7)

    with pytest.raises(SystemExit):
        call_command("tallies_rebuild", "--check")
    call_command("tallies_rebuild")
    call_command("tallies_rebuild", "--check")

    assert CodingTally.objects.get().coded == 1
    assert "0 of 1 pairs differ" in capsys.readouterr().out


def test_the_command_checks_and_rebuilds_what_is_still_to_code(auditor, capsys):
    feedback_start(statement=_world(1, 3)[0], auditor=auditor)
    DiscussionFigures.objects.update(to_code=7)

    with pytest.raises(SystemExit):
        call_command("tallies_rebuild", "--check")
    assert "1 of 1 to-code counts differ" in capsys.readouterr().out
    call_command("tallies_rebuild")
    call_command("tallies_rebuild", "--check")

    assert DiscussionFigures.objects.get().to_code == 3
    assert "0 of 1 to-code counts differ" in capsys.readouterr().out


def test_a_refresh_and_a_rebuild_ask_for_the_planner_statistics_of_what_they_wrote(
    auditor, admin_user, planner_refreshes, django_capture_on_commit_callbacks
):
    from audit.derived import tallies

    asked = planner_refreshes
    statements = _world(n_discussions=2, n_statements=1)
    pairs = [(s.discussion_id, user.pk) for s in statements for user in (auditor, admin_user)]

    with django_capture_on_commit_callbacks(execute=True):
        tallies.tallies_refresh(pairs=pairs)
        with tallies.tallies_batched():  # pairs met twice count once
            tallies.tallies_refresh(pairs=pairs[:3])
            tallies.tallies_refresh(pairs=pairs[1:])
        assert asked == []  # after the commit: ANALYZE would lock the tables until then
    tables = ["CodingTally", "DiscussionFigures", "AuditorFigures"]
    assert asked == [(tables, 4), (tables, 4)]
    feedback_start(statement=statements[0], auditor=auditor)
    asked.clear()
    with django_capture_on_commit_callbacks(execute=True):
        tallies_rebuild()

    assert asked == [(tables, 1)]  # the rebuild: one pair with work


def test_the_command_checks_and_rebuilds_the_lowest_open_scores(auditor, capsys):
    """A scored discussion nobody has worked in has a row with its lowest open score; the
    command reports a wrong or missing one and stores it again."""
    run = _triage_run()
    worked, untouched = _world(2, 3)[::3][:2]
    feedback_start(statement=worked, auditor=auditor)
    for statement, score in ((worked, 0.4), (untouched, 0.2)):
        _scored(run, statement, score)
    assert weakest_stored() == {worked.discussion_id: 0.4, untouched.discussion_id: 0.2}
    DiscussionFigures.objects.filter(pk=worked.discussion_id).update(weakest=0.9)
    DiscussionFigures.objects.filter(pk=untouched.discussion_id).delete()

    with pytest.raises(SystemExit):
        call_command("tallies_rebuild", "--check")
    assert "2 of 2 lowest open scores differ" in capsys.readouterr().out
    call_command("tallies_rebuild")
    call_command("tallies_rebuild", "--check")

    assert weakest_stored() == {worked.discussion_id: 0.4, untouched.discussion_id: 0.2}
    assert "0 of 2 lowest open scores differ" in capsys.readouterr().out


def test_a_coder_s_own_lowest_score_leaves_out_what_they_coded(auditor, capsys):
    """The tally keeps the lowest score among the statements its auditor has not coded; a
    coding started or deleted moves it, and the command reports and rebuilds a wrong one."""
    run = _triage_run()
    low, high = _world(1, 2)
    for statement, score in ((low, 0.1), (high, 0.6)):
        _scored(run, statement, score)
    pair = (low.discussion_id, auditor.pk)

    started = feedback_start(statement=low, auditor=auditor)
    assert weakest_mine_stored() == {pair: 0.6} and weakest_stored() == {pair[0]: 0.1}
    feedback_start(statement=high, auditor=auditor)
    assert weakest_mine_stored() == {}
    with history_purge():
        inputs_delete(rows=Feedback.objects.filter(statement=high, auditor=auditor))
    assert weakest_mine_stored() == {pair: 0.6}
    CodingTally.objects.update(weakest=0.3)

    with pytest.raises(SystemExit):
        call_command("tallies_rebuild", "--check")
    assert "1 of 1 own lowest scores differ" in capsys.readouterr().out
    call_command("tallies_rebuild")
    assert weakest_mine_stored() == {pair: 0.6}
    with history_purge():
        inputs_delete(rows=Feedback.objects.filter(pk=started.pk))
    assert weakest_mine_stored() == {}


def test_a_discussion_s_tallies_are_locked_before_its_row(auditor):
    """A score written locks the discussion's tallies before its row, in the order a tally
    refresh takes them (its tallies, then the rows it adds to): no two writers of one
    discussion wait for each other in opposite orders."""
    run = _triage_run()
    statement = _world(1, 2)[0]
    feedback_submit(feedback=feedback_start(statement=statement, auditor=auditor), user=auditor)

    with CaptureQueriesContext(connection) as seen:
        _scored(run, statement, 0.3)

    reads = [q["sql"] for q in seen.captured_queries if q["sql"].startswith("SELECT")]
    if connection.vendor == "postgresql":
        reads = [sql for sql in reads if "FOR NO KEY UPDATE" in sql]
    tallies = [i for i, sql in enumerate(reads) if 'FROM "audit_codingtally"' in sql]
    rows = [i for i, sql in enumerate(reads) if 'FROM "audit_discussionfigures"' in sql]
    assert tallies and rows and tallies[0] < rows[0], reads
