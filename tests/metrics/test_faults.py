"""Fault scenarios against real processes: each test starts its own redis-server on a free port
and its own Celery worker subprocess (on the test database), then breaks one of them.

(a) the broker goes away and comes back: requests succeed meanwhile, the worker lives on,
    and every stale result is fresh within one sweep interval of the broker's return;
(b) a worker is killed mid recompute-all: the job is resumed after its lease expires and a
    new recompute can start;
(c) two simultaneous starts make one active job.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection, connections

from audit.models import Feedback
from metrics.engine.recompute import metrics_recompute_all
from metrics.models import ComputeJob, MetricResult
from tests.broker_fixtures import wait_for
from tests.metrics.extraction_helpers import celery_broker, make_world

pytest_plugins = [
    "tests.api_fixtures",
    "tests.broker_fixtures",
    "tests.metrics.extraction_helpers",
]
pytestmark = [pytest.mark.services, pytest.mark.usefixtures("only_extraction_results")]

SWEEP_SECONDS = 2  # the beat interval the test worker runs with
LEASE_SECONDS = 3
# A worker retries the broker after 2 s, 4 s, 6 s ... at most 30 s apart: after the broker
# returns, it reconnects within the current backoff step (30 s at worst).
RECONNECT_SLACK = 30


# Runs the Celery command line; with SLOW_ITEMS set, each recompute item takes that long, so
# that a test can kill the worker in the middle of a job on any machine.
WORKER_SCRIPT = """
import os, sys, time
from celery.signals import worker_ready

@worker_ready.connect
def _slow_items(**kwargs):
    delay = float(os.environ.get("SLOW_ITEMS") or 0)
    if delay:
        from metrics.engine.recompute import jobs
        real = jobs._batch_compute
        def slowly(items, *, force, **kwargs):
            time.sleep(delay * len(items))
            real(items, force=force, **kwargs)
        jobs._batch_compute = slowly

sys.argv = ["celery", *sys.argv[1:]]
from celery.__main__ import main
main()
"""


class Worker:
    """``celery -A evalsite worker`` (with beat) on the given broker and the test database."""

    def __init__(
        self,
        broker_url: str,
        workdir: Path,
        name: str,
        slow_items: float = 0,
        env: dict[str, str] | None = None,
    ):
        self.log = workdir / f"{name}.log"
        db = connection.settings_dict
        auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
        env = {
            **os.environ,
            "DATABASE_URL": f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "REDIS_URL": broker_url,
            "STALE_SWEEP_SECONDS": str(SWEEP_SECONDS),
            "JOB_LEASE_SECONDS": str(LEASE_SECONDS),
            "CELERY_EAGER": "0",
            "EVALSITE_VAR_DIR": str(workdir),
            "SLOW_ITEMS": str(slow_items),
            "RECOMPUTE_BATCH_ITEMS": "1",  # progress and the lease move item by item
            **(env or {}),
        }
        command = [sys.executable, "-c", WORKER_SCRIPT, "-A", "evalsite", "worker"]
        command += ["-Q", "celery,slow", "-n", f"{name}-{uuid.uuid4().hex[:8]}@%h"]
        command += ["--pool=solo", "--beat", "--schedule", str(workdir / f"{name}-beat")]
        command += ["--without-mingle", "--without-gossip", "--loglevel=info"]
        self.process = subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: beat runs in a child process
        )

    def wait_ready(self) -> None:
        assert wait_for(lambda: " ready." in self.output(), 60), self.output()[-3000:]

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker and its embedded beat, as a lost host or the OOM killer would."""
        self._signal_group(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(15)
        self._signal_group(signal.SIGKILL)  # whatever is left of the group
        self.process.wait(10)

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)


@pytest.fixture
def start_worker(broker, tmp_path):
    started: list[Worker] = []

    def start(name: str = "worker", slow_items: float = 0, ready: bool = True, **env: str):
        """ready=False: return at once, so that workers started together start side by side."""
        started.append(Worker(broker.url, tmp_path, name, slow_items, env))
        if ready:
            started[-1].wait_ready()
        return started[-1]

    yield start
    for worker in started:
        worker.stop()


def extraction_rows():
    return MetricResult.objects.filter(family="extraction")


def all_fresh() -> bool:
    rows = extraction_rows()
    return rows.exists() and not rows.exclude(status=MetricResult.Status.FRESH).exists()


def test_a_broker_outage_loses_no_work_and_no_worker(
    broker, start_worker, auditor, admin_user, api
):
    world = make_world(auditor, discussions=1, statements=5)
    worker = start_worker()
    client = api(admin_user)

    with celery_broker(broker.url):
        broker.stop()
        for statement in world.statements:
            feedback = world.fb(statement)
            response = client.post(
                f"/api/v1/feedback/{feedback.pk}/approve/",
                {"version": feedback.version},
                format="json",
            )
            assert response.status_code == 200, response.content
        assert Feedback.objects.approved().count() == 5  # the ground truth is saved
        assert extraction_rows().filter(status=MetricResult.Status.STALE).exists()
        lost = wait_for(lambda: "Connection to broker lost" in worker.output(), 10)
        assert lost and worker.alive(), worker.output()[-3000:]

        broker.start()  # same port
        back_at = time.monotonic()
        fresh = wait_for(all_fresh, SWEEP_SECONDS + RECONNECT_SLACK)

    waited = time.monotonic() - back_at
    assert fresh, (
        f"still stale {waited:.1f} s after the broker came back\n" + worker.output()[-3000:]
    )
    assert worker.alive(), worker.output()[-3000:]
    assert "Unrecoverable error" not in worker.output()
    assert extraction_rows().filter(scope="statement").count() == 5


def test_a_job_whose_worker_was_killed_is_resumed_and_does_not_block(
    broker, start_worker, auditor, admin_user
):
    world = make_world(auditor, discussions=2, statements=5)  # 14 results to compute
    Feedback.objects.filter(statement__in=world.statements).update(status=Feedback.Status.APPROVED)
    worker = start_worker("doomed", slow_items=0.3)
    with celery_broker(broker.url):
        job = metrics_recompute_all(user=admin_user)  # autocommit: queued at once

    def midway() -> bool:
        job.refresh_from_db()
        return job.status == ComputeJob.Status.RUNNING and 0 < job.done < 10

    assert wait_for(midway, 20, every=0.02), f"job never seen mid-run: {job.status} {job.done}"
    worker.kill()
    job.refresh_from_db()
    killed_at_done = job.done
    assert job.status == ComputeJob.Status.RUNNING and job.attempt == 1

    rescuer = start_worker("rescuer")
    rescued_from = time.monotonic()

    def finished() -> bool:
        job.refresh_from_db()
        return job.status in (ComputeJob.Status.DONE, ComputeJob.Status.FAILED)

    assert wait_for(finished, LEASE_SECONDS + SWEEP_SECONDS + 10), rescuer.output()[-4000:]
    assert job.status == ComputeJob.Status.DONE and job.attempt == 2
    assert job.done == job.total == 14 and job.done > killed_at_done
    assert time.monotonic() - rescued_from < LEASE_SECONDS + SWEEP_SECONDS + 10
    assert all_fresh()
    with celery_broker(broker.url):
        again = metrics_recompute_all(user=admin_user, queue=False)
    assert again.pk != job.pk and again.status == ComputeJob.Status.QUEUED


def test_two_workers_share_the_chunks_of_one_recompute_job(
    broker, start_worker, auditor, admin_user
):
    world = make_world(auditor, discussions=2, statements=5)  # 10 statements, 2 discussions
    Feedback.objects.filter(statement__in=world.statements).update(status=Feedback.Status.APPROVED)
    workers = [
        start_worker(name, 0.2, ready=False, RECOMPUTE_CHUNK_ITEMS="2") for name in ("one", "two")
    ]
    for worker in workers:
        worker.wait_ready()
    with celery_broker(broker.url):
        job = metrics_recompute_all(user=admin_user)  # autocommit: queued at once

    def ended() -> bool:
        job.refresh_from_db()
        return not job.is_active

    assert wait_for(ended, 60), workers[0].output()[-2000:] + workers[1].output()[-2000:]
    assert (job.status, job.done, job.total) == (ComputeJob.Status.DONE, 14, 14)
    assert job.params["chunks"] == [2] * 6
    chunks_done = [w.output().count("compute_job_chunk") for w in workers]
    assert all(chunks_done), chunks_done  # each worker took a share
    assert all_fresh()


def test_two_simultaneous_starts_make_one_active_job(services_ready, admin_user):
    both_checked = threading.Barrier(2, timeout=10)
    real_create = ComputeJob.objects.create
    jobs: list[ComputeJob] = []

    def create_after_both_checked(**fields):
        both_checked.wait()  # each start has seen "no active job" before either creates
        return real_create(**fields)

    def start() -> None:
        try:
            jobs.append(metrics_recompute_all(user=admin_user, queue=False))
        finally:
            connections.close_all()

    with mock.patch.object(ComputeJob.objects, "create", side_effect=create_after_both_checked):
        threads = [threading.Thread(target=start) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)

    assert len(jobs) == 2 and jobs[0].pk == jobs[1].pk
    assert sorted(job.created for job in jobs) == [False, True]
    active = ComputeJob.objects.filter(
        status__in=[ComputeJob.Status.QUEUED, ComputeJob.Status.RUNNING]
    )
    assert active.count() == 1
