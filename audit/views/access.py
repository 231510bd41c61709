"""Scoped lookups, safe redirects, and turning workflow errors into replies.

The role decorators themselves live in ``evalsite.access`` (shared by both apps)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import url_has_allowed_host_and_scheme

from audit.models import Feedback
from evalsite.http import HtmxHttpRequest


def visible_feedback(request: HtmxHttpRequest, pk: int) -> Feedback:
    """Feedback the user may see: their own, or anyone's for admins. Others' ids give 404.

    A pending change to approved ground truth is what editors show and continue from.
    """
    queryset = Feedback.objects.visible_to(request.user).select_related(
        "statement__discussion", "statement__speaker", "auditor"
    )
    return get_object_or_404(queryset, pk=pk).as_working_copy()


def safe_next(request: HtmxHttpRequest, default: str) -> str:
    """Where to go after a plain (non-htmx) POST: a local ?next= or the default."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return default


def safe_referer(request: HtmxHttpRequest) -> str:
    referer = request.headers.get("Referer", "")
    allowed = url_has_allowed_host_and_scheme(referer, {request.get_host()}, request.is_secure())
    return referer if allowed else "/"


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
