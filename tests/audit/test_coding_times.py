"""The team page's stored active time, kept by replaying only the changed days of the changed
coders' history (audit.derived.coding_times), always equals a replay of every coder's whole history:
whatever the histories, the order their moments arrive in and the batches the worker takes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.derived.coding_times import team_times_rebuild, team_times_refresh
from audit.derived.tallies import coding_written
from audit.models import (
    AuditorFigures,
    CodingTime,
    CodingTimeChange,
    DiscussionFigures,
    Feedback,
    history_purge,
)
from audit.selectors.progress import TIMES, coding_moments, coding_times, time_rows, time_spent
from audit.services import (
    WorkflowError,
    feedback_approve,
    feedback_reject,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from audit.services.feedback import revision_record
from audit.services.inputs import inputs_delete
from tests.audit.test_views_support import make_scene
from tests.factories import pdp, person

pytestmark = pytest.mark.django_db

BASE = datetime(2026, 3, 2, 23, 50, tzinfo=UTC)  # days cross midnight: the moment before counts
NO_TIME = {"active_seconds": 0.0, "median_seconds": None, "per_day": None}
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            [*["edit"] * 6, "submit", "submit", "reject", "approve", "delete", "refresh", "refresh"]
        ),
        st.integers(min_value=0, max_value=1),  # which coder
        st.integers(min_value=0, max_value=4),  # which statement (two discussions)
        st.integers(min_value=0, max_value=1),  # which day: moments arrive out of order
        st.integers(min_value=0, max_value=20),  # minutes on: gaps under and over idle
    ),
    min_size=1,
    max_size=40,
)


def _statements() -> list:
    """Two discussions' subject statements, and one an expert said (no tally counts it)."""
    first, second = make_scene("One"), make_scene("Two")
    return [first.first, first.second, second.first, second.second, first.expert]


@pytest.fixture
def statements() -> list:
    return _statements()


def _at(day: int, minute: int, n: int = 0) -> datetime:
    return BASE + timedelta(days=day, minutes=minute, microseconds=7 * n)


def _apply(operation: str, coder, admin, statement, at: datetime, n: int) -> None:
    """One step of the workflow, at a chosen time (a refused step changes nothing)."""
    feedback = Feedback.objects.filter(statement=statement, auditor=coder).first()
    with mock.patch("django.utils.timezone.now", return_value=at), transaction.atomic():
        try:
            if operation == "edit":
                feedback = feedback or feedback_start(statement=statement, auditor=coder)
                payload = pdp(people=[person(1, f"Ann {n}")])
                feedback_save(
                    feedback=feedback, user=coder, edited_extraction=payload, base_version=None
                )
            elif feedback is None:
                return
            elif operation == "submit":
                feedback_submit(feedback=feedback, user=coder)
            elif operation == "reject":
                feedback_reject(feedback=feedback, admin=admin, reason="recheck")
            elif operation == "approve":
                feedback_approve(feedback=feedback, admin=admin, self_approval_reason="sole admin")
            elif operation == "delete":
                with history_purge():
                    inputs_delete(rows=Feedback.objects.filter(pk=feedback.pk))
        except WorkflowError:
            pass


def _stored() -> dict:
    return {
        model.__name__: {row["pk"]: row for row in model.objects.values("pk", *TIMES)}
        for model in (DiscussionFigures, AuditorFigures)
    }


def _replayed_whole() -> dict:
    """What a replay of every coder's whole history gives each stored row."""
    found = dict(zip(("DiscussionFigures", "AuditorFigures"), coding_times(), strict=True))
    return {
        name: {pk: {"pk": pk, **found[name].get(pk, NO_TIME)} for pk in rows}
        for name, rows in _stored().items()
    }


def _rows() -> dict:
    return {
        (a, s, day): (d, m)
        for a, s, day, d, m in CodingTime.objects.values_list(
            "auditor_id", "statement_id", "day", "discussion_id", "micros"
        )
    }


def assert_incremental_equals_whole() -> None:
    assert _rows() == time_rows(time_spent(coding_moments()))
    assert _stored() == _replayed_whole()  # to the bit: integer microseconds, one arithmetic


@settings(
    # Each example is two coders' history on the database (up to 40 steps, refreshes among
    # them, each a workflow of its own): 25 at most (the quick profile's fewer).
    max_examples=min(25, settings.default.max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
def test_refreshes_in_any_batches_equal_the_whole_replay(
    operations, auditor, second_auditor, admin_user, statements, django_capture_on_commit_callbacks
):
    # Each example runs in a savepoint that is rolled back, so examples start from scratch
    # (the statements, made once for them all, with nothing coded).
    with transaction.atomic():
        coders = [auditor, second_auditor]
        with django_capture_on_commit_callbacks(execute=False):  # the worker runs when we say
            for n, (operation, coder, statement, day, minute) in enumerate(operations):
                if operation == "refresh":
                    team_times_refresh()
                    assert_incremental_equals_whole()
                    continue
                _apply(
                    operation,
                    coders[coder],
                    admin_user,
                    statements[statement],
                    _at(day, minute, n),
                    n,
                )
            team_times_refresh()
        assert not CodingTimeChange.objects.exists()
        assert_incremental_equals_whole()
        team_times_rebuild()
        assert_incremental_equals_whole()
        transaction.set_rollback(True)


def _edit(coder, statement, at: datetime, n: int = 0):
    _apply("edit", coder, None, statement, at, n)
    return Feedback.objects.get(statement=statement, auditor=coder)


def test_a_moment_arriving_late_and_earlier_than_those_already_replayed_counts(auditor):
    statements = _statements()
    _edit(auditor, statements[0], _at(0, 0))
    _edit(auditor, statements[1], _at(0, 6), 1)  # over the idle limit
    team_times_refresh()
    # Committed after the refresh, stamped before the last moment it replayed (a long
    # transaction): a high-water mark would have passed it.
    _edit(auditor, statements[2], _at(0, 4), 2)
    team_times_refresh()

    assert_incremental_equals_whole()
    assert AuditorFigures.objects.get(pk=auditor.pk).active_seconds > 100


def test_a_deleted_coding_takes_its_time_with_it(auditor):
    statements = _statements()
    for n in range(3):
        _edit(auditor, statements[n % 2 * 2], _at(0, n), n)
    team_times_refresh()
    with history_purge():
        inputs_delete(rows=Feedback.objects.filter(statement=statements[2], auditor=auditor))
    team_times_refresh()

    assert_incremental_equals_whole()
    assert not CodingTime.objects.filter(statement=statements[2]).exists()


def test_a_coding_sent_without_a_moment_of_its_coder_changes_the_median(auditor):
    """An expert's statement coded past the services (an import), then sent: no tally counts
    it, so only the status change written (``coding_written``) tells the worker its time joins
    the medians."""
    statements = _statements()
    expert = statements[4]
    _edit(auditor, statements[0], _at(1, 0))  # the discussion's row: a tallied coding
    feedback = Feedback.objects.create(statement=expert, auditor=auditor, edited_extraction=pdp())
    for minute in (0, 1):
        with mock.patch("django.utils.timezone.now", return_value=_at(0, minute)):
            revision_record(feedback, author=auditor, action="import", before=None)
    team_times_refresh()
    assert DiscussionFigures.objects.get(pk=expert.discussion_id).median_seconds is None

    feedback.status = Feedback.Status.SUBMITTED
    feedback.save()
    coding_written(feedback=feedback, before=Feedback.Status.DRAFT)
    team_times_refresh()

    assert_incremental_equals_whole()
    assert DiscussionFigures.objects.get(pk=expert.discussion_id).median_seconds == 60


def test_the_moment_before_midnight_counts_towards_the_first_after_it(auditor):
    statements = _statements()
    _edit(auditor, statements[0], _at(0, 8))  # 23:58
    team_times_refresh()
    _edit(auditor, statements[1], _at(0, 11), 1)  # 00:01 the next day: only that day replayed
    team_times_refresh()

    assert_incremental_equals_whole()
    assert CodingTime.objects.get().micros == 180_000_000


def test_a_refresh_replays_only_the_changed_days(auditor, django_assert_max_num_queries):
    statements = _statements()
    for day in range(3):
        for n in range(4):
            _edit(auditor, statements[n % 2], _at(day, n), n)
    team_times_refresh()
    earlier = set(CodingTime.objects.filter(day__lt=_at(2, 0).date()).values_list("pk", "micros"))
    _edit(auditor, statements[1], _at(2, 5), 9)

    with mock.patch("audit.derived.coding_times.coding_moments", wraps=coding_moments) as read:
        team_times_refresh()

    assert read.call_args.kwargs["since"] == _at(2, 0).replace(hour=0, minute=0, microsecond=0)
    assert (
        set(CodingTime.objects.filter(day__lt=_at(2, 0).date()).values_list("pk", "micros"))
        == earlier
    )
    assert_incremental_equals_whole()


def test_the_command_checks_the_time_rows_and_rebuilds_them(auditor, capsys):
    statements = _statements()
    _edit(auditor, statements[0], _at(0, 0))
    _edit(auditor, statements[1], _at(0, 1), 1)
    team_times_refresh()
    CodingTime.objects.update(micros=1)

    with pytest.raises(SystemExit):
        call_command("tallies_rebuild", "--check")
    call_command("tallies_rebuild")
    call_command("tallies_rebuild", "--check")

    assert "0 of 1 time rows differ" in capsys.readouterr().out
    assert_incremental_equals_whole()
