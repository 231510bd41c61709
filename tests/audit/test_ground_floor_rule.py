"""The guard rail that keeps audit the ground floor: ruff bans any metrics import under audit/."""

from tests.test_ground_floor import banned_imports


def test_the_ruff_rule_bans_metrics_imports_anywhere_under_audit():
    source = (
        "import metrics\nfrom metrics.models import MetricResult\n"
        "from metrics.families.extraction import cumulative\n"
    )
    for path in ("audit/views/new_view.py", "audit/services/new_service.py", "audit/x.py"):
        assert banned_imports(source, path=path) == ["metrics", "metrics", "metrics"]


def test_audit_may_import_its_own_modules_and_the_shared_plumbing():
    source = "from audit.pdp import cumulative\nfrom evalsite.queue import task_enqueue\n"
    assert banned_imports(source, path="audit/services/new_service.py") == []
    # Outside audit the rule does not apply: metrics imports audit, never the other way.
    assert banned_imports("from metrics.models import MetricResult\n", path="metrics/x.py") == []
