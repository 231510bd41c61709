"""A throwaway redis-server per test, for tests that run real Celery workers against the test
database and break or time them (tests/metrics/test_faults.py, the recompute benchmark's)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection

from evalsite.queue import broker_circuit
from tests.conftest import require_service


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition, timeout: float, every: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    return condition()


class RedisServer:
    """A throwaway redis-server (no persistence) that can be stopped and restarted on its port."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.workdir)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        assert wait_for(self.ping, 10), f"redis-server did not start on port {self.port}"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis.from_url(self.url, socket_connect_timeout=1).ping())
        except redis.exceptions.ConnectionError:
            return False


@pytest.fixture
def services_ready(transactional_db):
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "the worker needs the test database"
    )
    require_service("redis-server", bool(shutil.which("redis-server")), "not on PATH")


@pytest.fixture
def broker(services_ready, tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    broker_circuit.reset()
    yield server
    server.stop()
    broker_circuit.reset()
