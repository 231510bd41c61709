"""Request guards every page shares: bodies over the size limit refused unread, refused
parameters, over-long API queries, the Content-Security-Policy header (with a fresh script
nonce per request), and reads that find the database connection lost tried once more
(evalsite.post_commit.reads_reconnect)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

from evalsite.http import HtmxHttpRequest, error_fragment
from evalsite.params import BadParameter
from evalsite.post_commit import reads_reconnect

# No inline script runs unless it carries the request's nonce ({{ request.csp_nonce }}); styles
# may be inline (progress-bar widths, htmx's indicator style), scripts and connections stay local.
CSP = (
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


# --- request bodies -----------------------------------------------------------------------------

Limited = TypeVar("Limited")


def body_limit(limit: Callable[[], int]) -> Callable[[Limited], Limited]:
    """Give a view (function or API class) its own request-body limit instead of
    DATA_UPLOAD_MAX_MEMORY_SIZE; ``limit`` is called per request (settings may change)."""

    def mark(view: Limited) -> Limited:
        view.max_body_bytes = limit  # type: ignore[attr-defined]
        return view

    return mark


def _body_limit(request: HttpRequest) -> int:
    default = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        view: Any = resolve(request.path_info).func
    except Resolver404:
        return default
    own = getattr(view, "max_body_bytes", None) or getattr(
        getattr(view, "view_class", None) or getattr(view, "cls", None), "max_body_bytes", None
    )
    return own() if own is not None else default


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:  # Django reads an unparsable length as an empty body
        return 0


class RequestSizeMiddleware:
    """Refuses a body over the limit (DATA_UPLOAD_MAX_MEMORY_SIZE, or a view's ``body_limit``)
    by its Content-Length, before anything reads it: Django's own limit leaves out multipart
    files, and the CSRF check parses a POST's form before any view. First in MIDDLEWARE."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = _declared_length(request)
        if length > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            limit = _body_limit(request)  # resolved only for the few large bodies
            if length > limit:
                return _too_large(request, length, limit)
        return self.get_response(request)


def _too_large(request: HttpRequest, length: int, limit: int) -> HttpResponse:
    detail = f"Request body too large: {length:,} bytes; the limit is {limit:,} bytes."
    if _is_api(request):
        response: HttpResponse = JsonResponse({"detail": detail, "errors": [detail]}, status=413)
    else:  # no session or user yet: a plain answer, not the site's error page
        response = HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
    # gunicorn drains at most 64 KiB of the unread body after the answer, then closes the
    # connection (a hop-by-hop "Connection: close" is not a WSGI application's to set).
    return response


# --- every request -------------------------------------------------------------------------------


class RequestGuardMiddleware:
    """Answers bad requests itself: JSON under /api/, the error page (or fragment) elsewhere."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HtmxHttpRequest) -> HttpResponse:
        request.csp_nonce = secrets.token_urlsafe(16)
        limit = settings.MAX_QUERY_STRING_LENGTH
        if _is_api(request) and len(request.META.get("QUERY_STRING", "")) > limit:
            detail = f"Query string too long (at most {limit} characters)."
            return JsonResponse({"detail": detail}, status=414)
        # A read after a commit whose connection then died runs again on a new one.
        with connection.execute_wrapper(reads_reconnect):
            response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CSP.format(nonce=request.csp_nonce))
        return response

    def process_exception(
        self, request: HtmxHttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if not isinstance(exception, BadParameter):
            return None
        if _is_api(request):
            return JsonResponse({"detail": str(exception), "errors": [str(exception)]}, status=400)
        return error_fragment(request, [str(exception)], status=400)


def csp_nonce(request: HttpRequest) -> dict:
    """Context processor: ``csp_nonce`` for inline scripts (django-htmx's tags read it too)."""
    return {"csp_nonce": getattr(request, "csp_nonce", "")}
