"""audit announces changes with plain ids, and only once they have committed."""

import pytest

from audit import signals

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    received = []

    def listen(signal, **kwargs):
        received.append((signal, kwargs))

    for signal in (signals.ground_truth_changed, signals.extractions_changed):
        signal.connect(listen, dispatch_uid="test-listen")
    signals.coding_changed.connect(listen, dispatch_uid="test-listen")
    yield received
    for signal in (signals.ground_truth_changed, signals.extractions_changed):
        signal.disconnect(dispatch_uid="test-listen")
    signals.coding_changed.disconnect(dispatch_uid="test-listen")


def test_signals_wait_for_the_commit_and_carry_sorted_unique_ids(
    heard, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        signals.ground_truth_changed_send(statement_ids=[3, 1, 3], reason="approval")
        signals.extractions_changed_send(statement_ids=[2], run_ids=[7, 7], reason="import")
        signals.coding_changed_send(reason="blind sample")
        assert heard == []
    assert [(s, k["reason"]) for s, k in heard] == [
        (signals.ground_truth_changed, "approval"),
        (signals.extractions_changed, "import"),
        (signals.coding_changed, "blind sample"),
    ]
    assert heard[0][1]["statement_ids"] == [1, 3]
    assert heard[1][1]["run_ids"] == [7] and heard[1][1]["statement_ids"] == [2]


def test_extractions_of_any_run_send_no_run_ids(heard, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        signals.extractions_changed_send(statement_ids=[5], reason="extractions")
    assert heard[0][1]["run_ids"] is None
