"""Timestamps are parsed by psycopg's compiled loader (evalsite/perf/timestamps.py) and read back
exactly as Django's own loader reads them."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest
from django.contrib.sessions.models import Session
from django.db import connection

from evalsite.perf import timestamps
from tests.conftest import require_service

UTC = datetime.UTC
LITERALS = [
    "0001-01-01 00:00:00+00",
    "1969-12-31 23:59:59.999999+00",
    "1970-01-01 00:00:00+00",
    "2026-03-29 01:30:00.5+02",
    "2026-10-25 02:59:59.000001-07:30",
    "2026-11-28 04:10:00.123456+00",
    "9999-12-31 23:59:59.999999+00",
]


@pytest.fixture
def postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    connection.ensure_connection()


def _read(cursor) -> list[datetime.datetime]:
    values = ", ".join(f"('{text}'::timestamptz)" for text in LITERALS)
    cursor.execute(f"SELECT v FROM (VALUES {values}) AS t(v)")
    return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db
def test_each_connection_reads_timestamps_with_the_compiled_loader(postgresql):
    loader = connection.connection.adapters.get_loader(1184, 0)  # timestamptz, text

    assert loader.__name__ == "CompiledUtcLoader"
    assert timestamps.compiled_loader() is not None  # the binary build is installed


@pytest.mark.django_db
def test_timestamps_read_as_django_s_own_loader_reads_them(postgresql):
    from django.db.backends.postgresql.psycopg_any import register_tzloader

    with connection.cursor() as cursor:
        compiled = _read(cursor.cursor)
    reference = connection.connection.cursor()
    register_tzloader(UTC, reference)  # Django's loader, on this cursor only
    expected = _read(reference)

    assert compiled == expected
    assert [value.tzinfo for value in compiled] == [UTC] * len(LITERALS)
    assert compiled[3] == datetime.datetime(2026, 3, 28, 23, 30, 0, 500000, tzinfo=UTC)


@pytest.mark.django_db
def test_a_stored_timestamp_comes_back_to_the_microsecond(postgresql):
    when = datetime.datetime(2026, 11, 28, 4, 10, 0, 1, tzinfo=UTC)
    Session.objects.create(session_key="k" * 32, session_data="", expire_date=when)

    assert Session.objects.get(pk="k" * 32).expire_date == when


def _fake(vendor: str, zone: str) -> SimpleNamespace:
    registered: list = []
    raw = SimpleNamespace(
        adapters=SimpleNamespace(register_loader=lambda *args: registered.append(args)),
        info=SimpleNamespace(parameter_status=lambda name: zone),
    )
    return SimpleNamespace(vendor=vendor, timezone=UTC, connection=raw, registered=registered)


@pytest.mark.parametrize(
    ("vendor", "zone", "registers"),
    [("postgresql", "UTC", True), ("postgresql", "Europe/Paris", False), ("sqlite", "UTC", False)],
)
def test_the_loader_is_registered_only_on_a_utc_postgresql_session(vendor, zone, registers):
    if registers and timestamps.compiled_loader() is None:
        pytest.fail("psycopg's binary build is a requirement (requirements.txt)")
    fake = _fake(vendor, zone)

    timestamps.compiled_timestamps_register(sender=None, connection=fake)

    assert bool(fake.registered) is registers
