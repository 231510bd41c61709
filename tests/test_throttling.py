"""Sign-in lockout per account and address together, and API rates for tokens and sessions."""

from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evalsite.throttling import account_key

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


def account(username: str, ip: str) -> str:
    return f"account:{account_key(username)}:{ip}"


def unique_user(make_user, name: str):
    return make_user(f"{name}-{uuid.uuid4().hex[:8]}", password=PASSWORD)


def sign_in(client, username: str, password: str, ip: str, **headers):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip, **headers
    )


def signed_in(response) -> bool:
    return response.status_code == 302


def test_a_hundred_wrong_passwords_lock_the_account_only_from_their_address(
    client, make_user, limits
):
    victim = unique_user(make_user, "victim")
    attacker, elsewhere = "203.0.113.7", "198.51.100.9"
    limits += [f"ip:{attacker}", f"ip:{elsewhere}", account(victim.username, attacker)]
    limits.append(account(victim.username, elsewhere))

    answers = [sign_in(client, victim.username, "wrong", attacker).status_code for _ in range(100)]
    assert answers[:9] == [200] * 9 and set(answers[10:]) == {429}
    refused = sign_in(client, victim.username, PASSWORD, attacker)
    assert refused.status_code == 429 and not signed_in(refused)
    assert b"Too many failed sign-ins" in refused.content
    assert refused["Retry-After"] == "900"
    # The victim, from their own address, signs in as usual: nobody can lock them out.
    assert signed_in(sign_in(client, victim.username, PASSWORD, elsewhere))


def test_the_lock_ends_with_its_window(client, make_user, limits):
    user = unique_user(make_user, "patient")
    limits += ["ip:203.0.113.8", account(user.username, "203.0.113.8")]
    for _ in range(10):
        sign_in(client, user.username, "wrong", "203.0.113.8")
    assert not signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.8"))

    cache.delete(f"login-locked:{account(user.username, '203.0.113.8')}")  # the window passed
    assert signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.8"))


def test_one_address_guessing_many_accounts_is_locked_out(client, make_user, limits):
    limits += ["ip:203.0.113.9", "ip:198.51.100.10"]
    names = [f"guess-{n}-{uuid.uuid4().hex[:6]}" for n in range(50)]
    limits += [account(name, "203.0.113.9") for name in names]
    for name in names:
        sign_in(client, name, "wrong", "203.0.113.9")
    user = unique_user(make_user, "bystander")
    assert sign_in(client, user.username, PASSWORD, "203.0.113.9").status_code == 429
    assert signed_in(sign_in(client, user.username, PASSWORD, "198.51.100.10"))


def test_a_correct_sign_in_forgets_earlier_failures(client, make_user, limits):
    user = unique_user(make_user, "forgetful")
    limits += ["ip:203.0.113.10", account(user.username, "203.0.113.10")]
    for _ in range(9):
        sign_in(client, user.username, "wrong", "203.0.113.10")
    assert signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.10"))
    client.logout()
    for _ in range(9):
        sign_in(client, user.username, "wrong", "203.0.113.10")
    assert signed_in(sign_in(client, user.username, PASSWORD, "203.0.113.10"))


def test_a_huge_username_is_refused_and_never_stored(client, make_user, limits):
    """20 sign-ins with 9 MiB usernames once put 209 MB into Redis: the cache holds a hash of
    a username, and one longer than any username can be is refused before it is counted."""
    limits.append("ip:203.0.113.11")
    huge = "a" * 200_000
    for _ in range(3):
        answer = sign_in(client, huge, "wrong", "203.0.113.11")
        assert answer.status_code == 200 and not signed_in(answer)
        assert "at most 150 characters" in str(answer.context["form"].errors["username"])
    user = unique_user(make_user, "hashed")
    limits.append(account(user.username, "203.0.113.11"))
    sign_in(client, user.username, "wrong", "203.0.113.11")
    stored = cache.get(f"login-failures:{account(user.username, '203.0.113.11')}")
    assert stored == 1 and user.username not in account(user.username, "203.0.113.11")
    assert len(account(huge, "203.0.113.11")) < 80  # the key's length is bounded


def test_the_admin_sign_in_caps_the_username_too(client, limits):
    limits.append("ip:203.0.113.12")
    data = {"username": "b" * 200_000, "password": "wrong", "next": "/django-admin/"}
    answer = client.post("/django-admin/login/", data, REMOTE_ADDR="203.0.113.12")
    assert answer.status_code == 200
    assert cache.get("login-failures:ip:203.0.113.12") == 1  # the address, not the name


def test_behind_a_trusted_proxy_the_client_address_counts(client, make_user, limits, settings):
    """Behind a proxy every request comes from its address: the lockout reads the client's
    address from the X-Forwarded-For entry the proxy appended (its last one)."""
    settings.TRUSTED_PROXY = True
    settings.LOGIN_FAILURES_PER_IP = 5
    proxy, attacker, bystander = "10.0.0.2", "203.0.113.13", "198.51.100.14"
    user = unique_user(make_user, "proxied")
    limits += [f"ip:{attacker}", f"ip:{bystander}", f"ip:{proxy}"]
    limits += [account(f"nobody-{n}", attacker) for n in range(5)]
    limits.append(account(user.username, bystander))
    # The attacker forges a first entry; the proxy appends the real address.
    forged = {"HTTP_X_FORWARDED_FOR": f"{bystander}, {attacker}"}
    for n in range(5):
        sign_in(client, f"nobody-{n}", "wrong", proxy, **forged)
    assert sign_in(client, user.username, PASSWORD, proxy, **forged).status_code == 429
    others = {"HTTP_X_FORWARDED_FOR": bystander}
    assert signed_in(sign_in(client, user.username, PASSWORD, proxy, **others))


def test_without_a_trusted_proxy_forwarded_for_is_ignored(client, limits, settings):
    settings.TRUSTED_PROXY = False
    limits.append("ip:203.0.113.15")
    sign_in(client, "nobody", "wrong", "203.0.113.15", HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert cache.get("login-failures:ip:203.0.113.15") == 1
    limits.append(account("nobody", "203.0.113.15"))


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
