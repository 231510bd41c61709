"""Sign-in lockout per account and per address, and API rates for tokens and sessions."""

from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
PASSWORD = "right-password-123"


@pytest.fixture
def limits(settings):
    settings.LOGIN_FAILURES_PER_ACCOUNT = 10
    settings.LOGIN_FAILURES_PER_IP = 50
    settings.LOGIN_LOCKOUT_SECONDS = 900
    keys: list[str] = []
    yield keys
    # The cache may be a shared Redis: leave no lock behind for the next test or run.
    cache.delete_many([f"login-{kind}:{key}" for key in keys for kind in ("failures", "locked")])


def unique_user(make_user, limits, name: str):
    user = make_user(f"{name}-{uuid.uuid4().hex[:8]}", password=PASSWORD)
    limits.append(f"account:{user.username}")
    return user


def sign_in(client, username: str, password: str, ip: str):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def signed_in(response) -> bool:
    return response.status_code == 302


def test_a_hundred_wrong_passwords_lock_the_account_not_the_others(client, make_user, limits):
    victim = unique_user(make_user, limits, "victim")
    other = unique_user(make_user, limits, "other")
    attacker, elsewhere = "203.0.113.7", "198.51.100.9"
    limits += [f"ip:{attacker}", f"ip:{elsewhere}"]

    answers = [sign_in(client, victim.username, "wrong", attacker).status_code for _ in range(100)]
    assert answers[:9] == [200] * 9 and set(answers[10:]) == {429}

    refused = sign_in(client, victim.username, PASSWORD, elsewhere)
    assert refused.status_code == 429 and not signed_in(refused)
    assert b"Too many failed sign-ins" in refused.content
    assert refused["Retry-After"] == "900"
    # Another user, from another address, signs in as usual.
    assert signed_in(sign_in(client, other.username, PASSWORD, elsewhere))


def test_the_lock_ends_with_its_window(client, make_user, limits):
    user = unique_user(make_user, limits, "patient")
    limits.append("ip:203.0.113.8")
    for _ in range(10):
        sign_in(client, user.username, "wrong", "203.0.113.8")
    assert not signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.8"))

    cache.delete(f"login-locked:account:{user.username}")  # the window has passed
    cache.delete("login-locked:ip:203.0.113.8")
    assert signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.8"))


def test_one_address_guessing_many_accounts_is_locked_out(client, make_user, limits):
    limits.append("ip:203.0.113.9")
    names = [f"guess-{n}-{uuid.uuid4().hex[:6]}" for n in range(50)]
    limits += [f"account:{name}" for name in names]
    for name in names:
        sign_in(client, name, "wrong", "203.0.113.9")
    user = unique_user(make_user, limits, "bystander")
    assert sign_in(client, user.username, PASSWORD, "203.0.113.9").status_code == 429
    assert signed_in(sign_in(client, user.username, PASSWORD, "198.51.100.10"))
    limits.append("ip:198.51.100.10")


def test_a_correct_sign_in_forgets_earlier_failures(client, make_user, limits):
    user = unique_user(make_user, limits, "forgetful")
    limits.append("ip:203.0.113.10")
    for _ in range(9):
        sign_in(client, user.username, "wrong", "203.0.113.10")
    assert signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.10"))
    client.logout()
    for _ in range(9):
        sign_in(client, user.username, "wrong", "203.0.113.10")
    assert signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.10"))


@pytest.fixture
def rates(settings, admin_user, auditor):
    settings.API_THROTTLE_RATES = {"token": "5/minute", "session": "3/minute", "anon": "2/minute"}
    yield
    # The cache may be a shared Redis: drop this test's counters.
    idents = [admin_user.pk, auditor.pk]
    keys = [f"throttle_{scope}_{i}" for scope in ("token", "session") for i in idents]
    cache.delete_many([*keys, "throttle_anon_203.0.113.20"])


def test_token_requests_are_limited_per_user(rates, admin_user, auditor):
    def client_for(user) -> APIClient:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    busy = client_for(admin_user)
    codes = [busy.get("/api/v1/discussions/").status_code for _ in range(6)]
    assert codes == [200] * 5 + [429]
    limited = busy.get("/api/v1/discussions/")
    assert limited.json()["detail"].startswith("Request was throttled")
    assert int(limited["Retry-After"]) > 0
    assert client_for(auditor).get("/api/v1/discussions/").status_code == 200


def test_session_and_anonymous_requests_are_limited(rates, client, auditor):
    client.force_login(auditor)
    codes = [client.get("/api/v1/discussions/").status_code for _ in range(4)]
    assert codes == [200] * 3 + [429]
    # Without credentials only the public schema answers; it is limited per address.
    anonymous = APIClient(REMOTE_ADDR="203.0.113.20")
    codes = [anonymous.get("/api/schema/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
