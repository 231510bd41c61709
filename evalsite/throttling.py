"""Abuse limits: sign-in lockout per account and per address, and API request rates.

Counts live in the default cache (Redis when configured, so every web process shares them).
A locked sign-in is refused before the password is hashed: guessing costs the server nothing
more once the limit is reached. See docs/operations.md ("Faults" → "Abuse limits").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from rest_framework.authentication import TokenAuthentication
from rest_framework.throttling import SimpleRateThrottle

# --- sign-in lockout ------------------------------------------------------------------------


def _client_ip(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


def _subjects(request: HttpRequest, username: str | None) -> list[tuple[str, int]]:
    """The counters a sign-in attempt is charged to, with their limits."""
    subjects = [(f"ip:{_client_ip(request)}", settings.LOGIN_FAILURES_PER_IP)]
    if username:
        subjects.append(
            (f"account:{username.strip().lower()}", settings.LOGIN_FAILURES_PER_ACCOUNT)
        )
    return subjects


def _keys(subject: str) -> tuple[str, str]:
    return f"login-failures:{subject}", f"login-locked:{subject}"


def login_locked(*, request: HttpRequest, username: str | None) -> bool:
    """True while the account or the address is locked out."""
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
    """A correct password (while not locked) forgets the account's earlier failures."""
    if username:
        cache.delete(_keys(f"account:{username.strip().lower()}")[0])


class ThrottledModelBackend(ModelBackend):
    """The model backend behind the lockout: every sign-in path (site, admin) goes through it."""

    def authenticate(self, request: HttpRequest | None, username=None, password=None, **kwargs):
        if request is None:  # not a web sign-in (e.g. a management command)
            return super().authenticate(request, username=username, password=password, **kwargs)
        if login_locked(request=request, username=username):
            raise PermissionDenied("too many failed sign-ins")  # stops every backend
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            login_failure_record(request=request, username=username)
        else:
            login_success_record(request=request, username=username)
        return user


class ThrottledAuthenticationForm(AuthenticationForm):
    """Says why a locked-out sign-in is refused, instead of "wrong password"."""

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
        # REMOTE_ADDR, not X-Forwarded-For: a client can write any forwarded-for header.
        return self.cache_format % {"scope": self.scope, "ident": _client_ip(request)}
