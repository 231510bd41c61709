"""Shared fixtures: persona users, services, and Celery in eager mode unless a test needs a worker."""

from __future__ import annotations

import os

import pytest

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


def pytest_configure(config):
    # Tests run tasks in-process unless a test starts a real worker itself.
    from evalsite.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    # The real hasher costs most of a second per test user; tests don't need its strength.
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def require_service(name: str, available: bool, why: str) -> None:
    """Skip when a service is missing on a developer machine; fail in CI (REQUIRE_SERVICES=1)."""
    if available:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"{name} is required (REQUIRE_SERVICES=1) but not available: {why}")
    pytest.skip(f"{name} not available: {why}")


@pytest.fixture
def make_user(db, django_user_model):
    from audit.roles import ensure_role_groups

    def make(username: str, *, role: str | None = "auditor", password: str = "pw-test-12345"):
        auditor_group, admin_group = ensure_role_groups()
        user = django_user_model.objects.create_user(username=username, password=password)
        if role == "auditor":
            user.groups.add(auditor_group)
        elif role == "admin":
            user.groups.add(admin_group)
        return user

    return make


@pytest.fixture
def auditor(make_user):
    return make_user("alice")


@pytest.fixture
def second_auditor(make_user):
    return make_user("bob")


@pytest.fixture
def admin_user(make_user):
    return make_user("carol", role="admin")


@pytest.fixture
def outsider(make_user):
    """Logged in, but in no role group."""
    return make_user("mallory", role=None)


@pytest.fixture
def auditor_client(client, auditor):
    client.force_login(auditor)
    return client


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client
