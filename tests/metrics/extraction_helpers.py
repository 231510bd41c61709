"""Fixtures and helpers for the stored extraction-F1 results tests.

Loaded by those modules with ``pytest_plugins``; they also opt in to
``only_extraction_results`` (other families' hooks are tested with those families).
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from unittest import mock

import pytest

from audit.models import Discussion, Extraction, ExtractionRun, Feedback, Statement
from audit.services import feedback_approve
from evalsite.match_settings import match_settings
from metrics.engine.services import EXTRACTION, SYSTEM_KEY
from metrics.families.extraction import (
    add_contributions,
    calculate_cumulative_f1,
    calculate_statement_f1,
    calculate_system_cumulative_f1,
    calculate_system_f1,
    empty_totals,
    statement_contribution,
)
from metrics.models import MetricResult
from metrics.results import run_key
from tests.factories import (
    SIMPLE_PDP,
    DiscussionFactory,
    ExtractionFactory,
    ExtractionRunFactory,
    FeedbackFactory,
    StatementFactory,
    pdp,
)

AI = copy.deepcopy(SIMPLE_PDP)
# Ground-truth variants: exact, missing the pair bond, an extra person, empty.
GT_VARIANTS = [
    copy.deepcopy(SIMPLE_PDP),
    pdp(people=SIMPLE_PDP["people"], events=SIMPLE_PDP["events"]),
    pdp(
        people=[
            *SIMPLE_PDP["people"],
            {"id": -9, "name": "Peter", "last_name": "Smith", "gender": "male"},
        ],
        events=SIMPLE_PDP["events"],
        pair_bonds=SIMPLE_PDP["pair_bonds"],
    ),
    pdp(),
]


@dataclass
class World:
    run: ExtractionRun
    discussions: list[Discussion]
    statements: list[Statement]
    feedback: dict[int, Feedback] = field(default_factory=dict)  # by statement id

    def fb(self, statement: Statement) -> Feedback:
        return Feedback.objects.get(pk=self.feedback[statement.pk].pk)


def make_world(auditor, *, discussions: int = 2, statements: int = 3, run=None) -> World:
    """Subject statements with one extraction each and a submitted feedback by `auditor`."""
    run = run or ExtractionRunFactory()
    world = World(run=run, discussions=[], statements=[])
    for _ in range(discussions):
        discussion = DiscussionFactory()
        world.discussions.append(discussion)
        for order in range(statements):
            statement = StatementFactory(discussion=discussion, order=order)
            ExtractionFactory(statement=statement, run=run, pdp_deltas=copy.deepcopy(AI))
            world.statements.append(statement)
            world.feedback[statement.pk] = FeedbackFactory(
                statement=statement,
                auditor=auditor,
                edited_extraction=copy.deepcopy(GT_VARIANTS[order % len(GT_VARIANTS)]),
            )
    return world


@pytest.fixture
def f1_world(auditor) -> World:
    return make_world(auditor)


@pytest.fixture
def run_committed(django_capture_on_commit_callbacks):
    """Run a block as if it were a request: its on-commit hooks (and eager tasks) run after."""

    def run(function, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return function(*args, **kwargs)

    return run


def approve(committed, world: World, statement: Statement, admin) -> Feedback:
    return committed(feedback_approve, feedback=world.fb(statement), admin=admin)


@pytest.fixture
def approved(f1_world, admin_user, run_committed) -> World:
    """Every statement of the F1 world approved by the admin."""
    for statement in f1_world.statements:
        approve(run_committed, f1_world, statement, admin_user)
    return f1_world


def run_row(run) -> MetricResult | None:
    return MetricResult.objects.filter(key=run_key(EXTRACTION, run.pk)).first()


def system_row() -> MetricResult | None:
    return MetricResult.objects.filter(key=SYSTEM_KEY).first()


def statement_row(statement, run) -> MetricResult | None:
    return MetricResult.objects.filter(
        scope=MetricResult.Scope.STATEMENT, statement=statement, run=run
    ).first()


def expected_run(run) -> dict:
    """Everything from scratch with the pure engine: what the incremental rows of a
    statement-unit run must equal (a discussion-unit run has no statement figures)."""
    settings = match_settings()
    per_statement, per_discussion = [], []
    gt_by_discussion: dict[int, list] = {}
    for feedback in (
        Feedback.objects.approved()
        .select_related("statement")
        .order_by("statement__discussion_id", "statement__order")
    ):
        statement = feedback.statement
        extraction = Extraction.objects.filter(statement=statement, run=run).first()
        gt_by_discussion.setdefault(statement.discussion_id, []).append(
            (feedback.edited_extraction, extraction.pdp_deltas if extraction else None)
        )
        if extraction is not None:
            per_statement.append(
                calculate_statement_f1(
                    extraction.pdp_deltas,
                    feedback.edited_extraction,
                    settings=settings,
                    statement_id=statement.pk,
                    discussion_id=statement.discussion_id,
                )
            )
    for discussion_id, pairs in gt_by_discussion.items():
        if any(ai is not None for _, ai in pairs):
            per_discussion.append(
                calculate_cumulative_f1(
                    [ai for _, ai in pairs],
                    [gt for gt, _ in pairs],
                    settings=settings,
                    discussion_id=discussion_id,
                )
            )
    return {
        "system": calculate_system_f1(per_statement).to_dict(),
        "cumulative": calculate_system_cumulative_f1(per_discussion).to_dict(),
        "n_statements": len(per_statement),
        "n_discussions": len(per_discussion),
        "unit": "statement",
        "n_left_out": None,  # counted for discussion-unit runs only
        "totals": _totals(per_statement),
    }


def _totals(metrics) -> dict:
    totals = empty_totals()
    for item in metrics:
        totals = add_contributions(totals, statement_contribution(item))
    return totals


@contextlib.contextmanager
def celery_broker(url: str, **transport_options):
    """Point the Celery app at a real broker with eager mode off; restored afterwards."""
    from evalsite.celery import app

    keys = ("broker_url", "task_always_eager", "broker_transport_options")
    saved = {key: app.conf[key] for key in keys}
    app.conf.update(
        broker_url=url,
        task_always_eager=False,
        broker_transport_options={**saved["broker_transport_options"], **transport_options},
    )
    _reset_connection_pools(app)
    try:
        yield app
    finally:
        app.conf.update(saved)
        _reset_connection_pools(app)


def _reset_connection_pools(app) -> None:
    # Celery caches the connection and producer pools built from the first broker URL, and
    # kombu registers pools globally by URL: drop them all so the next publish reconnects.
    from kombu import pools

    pools.reset()
    app._pool = None
    if "amqp" in app.__dict__:
        app.__dict__["amqp"]._producer_pool = None


@contextlib.contextmanager
def extraction_results_only():
    """Other families hook into results_mark_stale too; their (slow, eager) computations are
    tested with them, not here. Patched where it is called: the engine's modules import the
    function by name (patching only its own module left every approval computing them)."""
    import metrics.engine.recompute.marking as marking
    import metrics.engine.services.stale as stale
    import metrics.own_data.common as own_data

    with contextlib.ExitStack() as patches:
        for module in (own_data, stale, marking):
            patches.enter_context(mock.patch.object(module, "own_results_mark_stale"))
        yield


@pytest.fixture
def only_extraction_results():
    with extraction_results_only():
        yield


@dataclass
class Shared:
    auditor_id: int
    admin_id: int
    world: World

    def fresh(self) -> World:
        """The world read afresh: a test's own instances of the shared rows."""
        run = ExtractionRun.objects.get(pk=self.world.run.pk)
        discussions = Discussion.objects.in_bulk([d.pk for d in self.world.discussions])
        statements = Statement.objects.in_bulk([s.pk for s in self.world.statements])
        feedback = Feedback.objects.in_bulk([f.pk for f in self.world.feedback.values()])
        return World(
            run=run,
            discussions=[discussions[d.pk] for d in self.world.discussions],
            statements=[statements[s.pk] for s in self.world.statements],
            feedback={pk: feedback[f.pk] for pk, f in self.world.feedback.items()},
        )


@pytest.fixture(scope="module")
def approved_but_the_last(django_db_setup, django_db_blocker):
    """The auditor alice and the admin carol, and two discussions of three statements whose
    coding the admin approved but the last statement's (through the service, its tasks run as
    after a request, other families' off), made once for a module: each test runs in a
    savepoint of this transaction, which is rolled back after the last one. The module's
    ``auditor``, ``admin_user`` and ``world`` fixtures read them afresh."""
    from django.db import transaction
    from django.test import TestCase

    from tests.conftest import role_user_create

    with django_db_blocker.unblock(), transaction.atomic(), extraction_results_only():
        auditor, admin = role_user_create("alice"), role_user_create("carol", role="admin")
        world = make_world(auditor, discussions=2, statements=3)
        for statement in world.statements[:5]:
            with TestCase.captureOnCommitCallbacks(execute=True):
                feedback_approve(feedback=world.fb(statement), admin=admin)
        yield Shared(auditor.pk, admin.pk, world)
        transaction.set_rollback(True)


@pytest.fixture
def one_item_batches(settings):
    """Recompute jobs store one result per batch, so a test can stop them between items."""
    settings.RECOMPUTE_BATCH_ITEMS = 1
