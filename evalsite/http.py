"""The request type views see: Django's, plus what the middleware adds (django-htmx's details
and the CSP nonce), so views are typed against what they read. Every page requires sign-in
(``evalsite.access``), so its user is a real one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    csp_nonce: str
    user: User  # pages are behind sign-in


def safe_referer(request: HtmxHttpRequest) -> str:
    referer = request.headers.get("Referer", "")
    allowed = url_has_allowed_host_and_scheme(referer, {request.get_host()}, request.is_secure())
    return referer if allowed else "/"


def page_redirect(request: HtmxHttpRequest, target: str) -> HttpResponse:
    """Open ``target`` as a whole new page: htmx follows an HX-Redirect (the 204 has no body to
    swap), a plain form post a redirect."""
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = target
        return response
    return redirect(target)


def error_fragment(
    request: HtmxHttpRequest,
    messages: list[str],
    *,
    status: int,
    target: str | None = None,
    template: str = "audit/components/messages.html#error",
    extra: dict | None = None,
) -> HttpResponse:
    """A 4xx reply htmx swaps into `target` (see htmx-config in base.html), keeping the form."""
    context = {
        "messages_list": messages,
        "status": status,
        "target_id": (target or "#").lstrip("#"),
        **(extra or {}),
    }
    if not request.htmx:
        # Without JavaScript there is no form to keep on screen: a small page with a way back.
        context["back"] = safe_referer(request)
        return render(request, "audit/error.html", context, status=status)
    response = render(request, template, context, status=status)
    if target:
        response["HX-Retarget"] = target
        response["HX-Reswap"] = "outerHTML"
    return response


def moved_to(url_name: str) -> Callable[..., HttpResponse]:
    """A view for an address that moved to ``url_name`` (same arguments): a 308 to the new one,
    which keeps the method and body, with the query string."""

    def moved(request: HttpRequest, **kwargs: Any) -> HttpResponse:
        target = reverse(url_name, kwargs=kwargs)
        if request.META.get("QUERY_STRING"):
            target += "?" + request.META["QUERY_STRING"]
        return HttpResponsePermanentRedirect(target, status=308)

    return moved
