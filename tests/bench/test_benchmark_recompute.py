"""benchmark_recompute times a recompute-all with one and then two real Celery workers (on a
throwaway redis-server and the test database) and cleans up what it seeded."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.db import connection

from audit.models import ExtractionRun
from metrics.models import MetricResult
from tests.metrics.extraction_helpers import celery_broker

pytest_plugins = ["tests.broker_fixtures", "tests.metrics.extraction_helpers"]
pytestmark = [pytest.mark.services, pytest.mark.usefixtures("only_extraction_results")]


@pytest.fixture
def benchmark_env(broker, settings, monkeypatch):
    """The benchmark's own workers reach this test database and broker (environment)."""
    db = connection.settings_dict
    monkeypatch.setenv(
        "DATABASE_URL", f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    )
    monkeypatch.setenv("REDIS_URL", broker.url)
    settings.REDIS_URL = broker.url
    return broker


def test_benchmark_recompute_times_one_and_two_real_workers(benchmark_env):
    broker = benchmark_env
    out = io.StringIO()
    with celery_broker(broker.url):
        call_command("benchmark_recompute", discussions=2, statements=4, workers=[1, 2], stdout=out)
    report = out.getvalue()
    timed = re.findall(r"(\d) workers?: (\d+) results \((\d+) statements\).*job done", report)
    assert [n for n, *_ in timed] == ["1", "2"], report
    for _, results, statements in timed:  # statements, 2 discussions, the run, the system
        assert int(results) == int(statements) + 4 and int(statements) > 0
    assert "2 workers: ×" in report and "(linear would be ×2" in report
    # What the host's cores were doing meanwhile (Linux: /proc/stat), once per worker count.
    assert len(re.findall(r"the host: \d+\.\d\d of its \d+ cores busy", report)) == 2, report
    # One worker's batches again in this process, their CPU split by phase.
    assert re.search(r"in this process \(one thread\): 8 statements, .* per CPU second", report)
    phases = re.search(
        r"CPU: reading [\d.]+ s .*, decoding .*, matching .*, writing .*, other [\d.]+ s", report
    )
    assert phases, report
    assert not MetricResult.objects.filter(run__model_name="benchmark").exists()  # cleaned up


def test_benchmark_recompute_times_a_kept_run_again(benchmark_env):
    """--keep leaves the seeded run; --run times it again without seeding anything."""
    broker = benchmark_env
    first, again = io.StringIO(), io.StringIO()
    with celery_broker(broker.url):
        call_command(
            "benchmark_recompute", discussions=2, statements=4, workers=[1], keep=True, stdout=first
        )
        run = ExtractionRun.objects.get(model_name="benchmark")
        assert f"(run {run.pk})" in first.getvalue()
        call_command("benchmark_recompute", run=run.pk, workers=[1], stdout=again)
    assert "seeded" not in again.getvalue()
    assert re.search(r"1 worker: \d+ results .*job done", again.getvalue()), again.getvalue()
    assert ExtractionRun.objects.filter(model_name="benchmark").count() == 1
