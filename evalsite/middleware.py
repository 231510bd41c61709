"""Request guards every page shares: refused parameters, over-long API queries, the
Content-Security-Policy header (with a fresh script nonce per request), and reads that find
the database connection lost tried once more (evalsite.post_commit.reads_reconnect)."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse

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
