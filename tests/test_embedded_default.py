"""`make run` runs on SQLite, the embedded default: every migration must apply there too (the
suite itself runs on PostgreSQL in CI, which would not notice)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_migration_applies_on_sqlite(tmp_path):
    database = tmp_path / "embedded.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "1"}
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    # The per-discussion table's sort indexes exist there, without the NULLS LAST it refuses.
    with sqlite3.connect(database) as connection:
        sql = connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'metrics_disc_f1_d'"
        ).fetchone()[0]
    assert "DESC" in sql and "NULLS" not in sql
