"""Uploads and exports cross from the web process to a worker process only through a shared
storage backend: with separate local directories the worker cannot find the file; with an
S3-compatible server (moto's standalone server, started here on a free port) it can."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from audit.models import Feedback
from audit.services import export_jobs
from evalsite.storage import default_storage_from_env
from metrics.evaluations import services as evaluation_services
from metrics.models import ComputeJob, Evaluation
from tests.conftest import require_service
from tests.metrics.extraction_helpers import make_world
from tests.metrics.test_evaluations_fixtures import example_files, example_options

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

BUCKET = "evalsite-test"
S3_KEYS = {"STORAGE_ACCESS_KEY": "testing", "STORAGE_SECRET_KEY": "testing"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the S3 server exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the S3 server did not listen on {port} within {seconds} s")


@pytest.fixture(scope="module")
def s3_endpoint():
    """moto's standalone S3 server in its own process, with an empty bucket."""
    import boto3

    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, server)
        endpoint = f"http://127.0.0.1:{port}"
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        ).create_bucket(Bucket=BUCKET)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=10)


def _s3_env(endpoint: str) -> dict[str, str]:
    return {
        "FILE_STORAGE": "s3",
        "STORAGE_BUCKET": BUCKET,
        "STORAGE_ENDPOINT_URL": endpoint,
        "STORAGE_REGION": "us-east-1",
        **S3_KEYS,
    }


def _local_env(root: Path) -> dict[str, str]:
    return {"FILE_STORAGE": "local", "MEDIA_ROOT": str(root)}


def _web_settings(env: dict[str, str]):
    """The web process's storage settings, built the way settings.py builds them."""
    with mock.patch.dict(os.environ, env):
        storages = {**settings.STORAGES, "default": default_storage_from_env()}
    return override_settings(STORAGES=storages, MEDIA_ROOT=env.get("MEDIA_ROOT", "/nonexistent"))


def _test_database_url() -> str:
    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql":
        require_service("PostgreSQL", False, "the worker process needs a shared database")
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def _run_worker(code: str, env: dict[str, str]) -> None:
    """A separate worker process with its own storage settings runs the task body."""
    full_env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "FILE_STORAGE": "local",
        **env,
    }
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=settings.BASE_DIR,
        env=full_env,
        check=True,
        timeout=120,
        capture_output=True,
    )


def _upload_evaluation(monkeypatch) -> Evaluation:
    """The web side stores the upload; its task goes to the worker, not run in-process."""
    monkeypatch.setattr(evaluation_services, "_enqueue", lambda evaluation_id: None)
    return evaluation_services.evaluation_create(
        family="agreement",
        name="shared storage",
        files=example_files("agreement"),
        options=example_options("agreement"),
        user=None,
    )


def _compute_in_worker(evaluation: Evaluation, env: dict[str, str]) -> Evaluation:
    _run_worker(
        f"from metrics.tasks import evaluation_compute; evaluation_compute({evaluation.pk})", env
    )
    evaluation.refresh_from_db()
    return evaluation


def test_separate_local_directories_lose_the_upload(tmp_path, monkeypatch):
    web, worker = _local_env(tmp_path / "web"), _local_env(tmp_path / "worker")
    with _web_settings(web):
        evaluation = _upload_evaluation(monkeypatch)
    assert any((tmp_path / "web").rglob("*.*")), "the web side stored nothing"

    evaluation = _compute_in_worker(evaluation, worker)

    assert evaluation.status == Evaluation.Status.FAILED
    assert "FileNotFoundError" in evaluation.error


def test_the_shared_object_store_carries_the_upload(s3_endpoint, monkeypatch):
    env = _s3_env(s3_endpoint)
    with _web_settings(env):
        evaluation = _upload_evaluation(monkeypatch)

    evaluation = _compute_in_worker(evaluation, env)

    assert evaluation.status == Evaluation.Status.DONE, evaluation.error
    assert evaluation.artifact


def _export_in_worker(admin_user, monkeypatch, web_env, worker_env) -> ComputeJob:
    """A large export: the web side queues it, the worker writes the file."""
    world = make_world(admin_user, discussions=1, statements=2)
    Feedback.objects.filter(statement__in=world.statements).update(status=Feedback.Status.APPROVED)
    monkeypatch.setattr(export_jobs, "_queue_export", lambda job_id: None)
    with override_settings(EXPORT_SYNC_MAX_STATEMENTS=0), _web_settings(web_env):
        job = export_jobs.ground_truth_export_start(user=admin_user, all_discussions=True).job
    _run_worker(f"from audit.tasks import export_ground_truth_job as t; t({job.pk})", worker_env)
    job.refresh_from_db()
    assert job.status == ComputeJob.Status.DONE, job.error
    return job


def _download(admin_client, job: ComputeJob, web_env):
    with _web_settings(web_env):
        response = admin_client.get(reverse("api-job-download", args=[job.pk]))
        body = b"".join(response.streaming_content) if response.status_code == 200 else b""
    return response, body


def test_separate_local_directories_lose_the_export(
    tmp_path, monkeypatch, admin_user, admin_client
):
    web, worker = _local_env(tmp_path / "web"), _local_env(tmp_path / "worker")
    job = _export_in_worker(admin_user, monkeypatch, web, worker)

    response, _ = _download(admin_client, job, web)

    assert response.status_code == 404
    assert f"The file of job {job.pk} is gone" in response.json()["detail"]


def test_the_shared_object_store_carries_the_export(
    s3_endpoint, monkeypatch, admin_user, admin_client
):
    env = _s3_env(s3_endpoint)
    job = _export_in_worker(admin_user, monkeypatch, env, env)

    response, body = _download(admin_client, job, env)

    assert response.status_code == 200
    assert b'"statements"' in body or b'"discussions"' in body
