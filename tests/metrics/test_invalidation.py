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


def test_no_model_signal_has_a_receiver_in_audit_or_metrics():
    """Derived state follows explicit calls of the services that write (and audit's domain
    signals, which they send): no receiver of Django's model signals in either app."""
    from django.db.models import signals as model_signals

    names = ("pre_init", "post_init", "pre_save", "post_save", "pre_delete", "post_delete")
    found = [
        f"{name}: {receiver.__module__}.{receiver.__qualname__}"
        for name in (*names, "m2m_changed")
        for receiver in _receivers(getattr(model_signals, name))
        if receiver.__module__.split(".")[0] in ("audit", "metrics")
    ]
    assert found == []
