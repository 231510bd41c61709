"""Scoped lookups and safe redirects.

The role decorators live in ``evalsite.access`` and the htmx error reply in ``evalsite.http``
(shared by both apps); ``error_fragment`` and ``safe_referer`` are imported here for audit's
views."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.http import url_has_allowed_host_and_scheme

from audit.models import Feedback
from evalsite.http import HtmxHttpRequest, error_fragment, safe_referer

__all__ = ["error_fragment", "safe_next", "safe_referer", "visible_feedback"]


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
