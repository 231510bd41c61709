"""Abuse limits: sign-in lockout per account and address together, and API request rates.

Counts live in the default cache (Redis when configured, so every web process shares them).
A locked sign-in is refused before the password is hashed: guessing costs the server nothing
more once the limit is reached. A submitted username never reaches the cache: it is capped at
the length a username can have and the key holds its hash. See docs/operations.md
("Security" -> "Sign-in lockout").
"""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import MaxLengthValidator
from django.http import HttpRequest, HttpResponse
from rest_framework.authentication import TokenAuthentication
from rest_framework.throttling import SimpleRateThrottle

# --- sign-in lockout ------------------------------------------------------------------------

USERNAME_MAX_LENGTH: int = User._meta.get_field("username").max_length or 150


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind TRUSTED_PROXY the address the proxy
    appended to X-Forwarded-For (its last entry; those before it are the client's to write)."""
    remote = request.META.get("REMOTE_ADDR") or "unknown"
    if not settings.TRUSTED_PROXY:
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    try:
        return str(ipaddress.ip_address(forwarded.rsplit(",", 1)[-1].strip()))
    except ValueError:  # no header, or not an address: the proxy's own
        return remote


def account_key(username: str | None) -> str | None:
    """What the lockout knows of a username: a hash of its usual spelling; None when there
    is none or it is longer than any username can be (no account to lock)."""
    if not username or len(username) > USERNAME_MAX_LENGTH:
        return None
    spelled = username.strip().lower().encode("utf-8", "backslashreplace")
    return hashlib.sha256(spelled).hexdigest()[:32]


def _subjects(request: HttpRequest, username: str | None) -> list[tuple[str, int]]:
    """The counters a sign-in attempt is charged to, with their limits: the address (guessing
    many accounts), and the account from that address (guessing one account's password), so
    nobody elsewhere can lock a user out."""
    address = client_address(request)
    subjects = [(f"ip:{address}", settings.LOGIN_FAILURES_PER_IP)]
    account = account_key(username)
    if account is not None:
        subjects.append((f"account:{account}:{address}", settings.LOGIN_FAILURES_PER_ACCOUNT))
    return subjects


def _keys(subject: str) -> tuple[str, str]:
    return f"login-failures:{subject}", f"login-locked:{subject}"


def login_locked(*, request: HttpRequest, username: str | None) -> bool:
    """True while the address, or the account from this address, is locked out."""
    locks = [_keys(subject)[1] for subject, _ in _subjects(request, username)]
    return bool(cache.get_many(locks))


def login_failure_record(*, request: HttpRequest, username: str | None) -> None:
    """Count a failed sign-in; at the limit, lock for LOGIN_LOCKOUT_SECONDS."""
    window = settings.LOGIN_LOCKOUT_SECONDS
    for subject, limit in _subjects(request, username):
        failures, locked = _keys(subject)
        cache.add(failures, 0, timeout=window)
        try:
            count = cache.incr(failures)
        except ValueError:  # expired between add and incr
            cache.set(failures, count := 1, timeout=window)
        if count >= limit:
            cache.set(locked, True, timeout=window)


def login_success_record(*, request: HttpRequest, username: str | None) -> None:
    """A correct password (while not locked) forgets the account's failures from here."""
    subjects = _subjects(request, username)
    if len(subjects) > 1:
        cache.delete(_keys(subjects[1][0])[0])


class ThrottledModelBackend(ModelBackend):
    """The model backend behind the lockout: every sign-in path (site, admin) goes through it."""

    def authenticate(self, request: HttpRequest | None, username=None, password=None, **kwargs):
        if request is None:  # not a web sign-in (e.g. a management command)
            return super().authenticate(request, username=username, password=password, **kwargs)
        if login_locked(request=request, username=username):
            raise PermissionDenied("too many failed sign-ins")  # stops every backend
        if username is not None and len(username) > USERNAME_MAX_LENGTH:
            login_failure_record(request=request, username=None)  # no such account: the address
            return None
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            login_failure_record(request=request, username=username)
        else:
            login_success_record(request=request, username=username)
        return user


class ThrottledAuthenticationForm(AuthenticationForm):
    """Says why a locked-out sign-in is refused, instead of "wrong password"; a username longer
    than any can be is refused as such (Django's form sets max_length without its check)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["username"].validators.append(MaxLengthValidator(USERNAME_MAX_LENGTH))

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if self.request is not None and login_locked(request=self.request, username=username):
            minutes = max(1, round(settings.LOGIN_LOCKOUT_SECONDS / 60))
            raise ValidationError(
                "Too many failed sign-ins for this account or from this address. "
                f"Try again in {minutes} minutes.",
                code="throttled",
            )
        return super().clean()


class LoginView(auth_views.LoginView):
    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.has_error("__all__", "throttled"):
            response.status_code = 429
            response["Retry-After"] = str(settings.LOGIN_LOCKOUT_SECONDS)
        return response


# --- API request rates ----------------------------------------------------------------------


class _SettingsRateThrottle(SimpleRateThrottle):
    """Rates from settings.API_THROTTLE_RATES, read per request (so a deployment or a test can
    change them); a missing rate means no limit."""

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope or "")

    def __init__(self) -> None:  # SimpleRateThrottle reads the rate here; defer to the request
        pass

    def allow_request(self, request, view) -> bool:
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class TokenRateThrottle(_SettingsRateThrottle):
    """Requests made with an API token, counted per user."""

    scope = "token"

    def get_cache_key(self, request, view) -> str | None:
        if not isinstance(request.successful_authenticator, TokenAuthentication):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class SessionRateThrottle(_SettingsRateThrottle):
    """Requests made from a signed-in browser session, counted per user."""

    scope = "session"

    def get_cache_key(self, request, view) -> str | None:
        if not request.user.is_authenticated or isinstance(
            request.successful_authenticator, TokenAuthentication
        ):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class AnonRateThrottle(_SettingsRateThrottle):
    """Requests without credentials (they all get 401/403 anyway), per address."""

    scope = "anon"

    def get_cache_key(self, request, view) -> str | None:
        if request.user.is_authenticated:
            return None
        # X-Forwarded-For only as a trusted proxy wrote it: a client can write any.
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}
