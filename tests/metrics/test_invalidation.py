"""metrics.engine.invalidation is the one subscriber of audit's domain signals."""

from audit import signals
from metrics.engine import invalidation


def _receivers(signal) -> list:
    return [entry[1]() for entry in signal.receivers]


def test_the_only_receivers_of_audit_signals_live_in_metrics_invalidation():
    for signal in (signals.ground_truth_changed, signals.extractions_changed):
        assert [r.__module__ for r in _receivers(signal)] == ["metrics.engine.invalidation"]
    assert _receivers(signals.coding_changed) == [invalidation.coding_changed]


def test_connecting_twice_subscribes_once():
    invalidation.connect()
    assert len(signals.ground_truth_changed.receivers) == 1
