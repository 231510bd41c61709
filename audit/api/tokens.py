"""The API token page (HTML, not part of the OpenAPI schema): an auditor's own token."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render

from audit.services.api_support import (
    api_token_get_or_create,
)
from evalsite.access import is_auditor
from evalsite.http import HtmxHttpRequest

# --- tokens (an HTML page, not part of the OpenAPI schema) ---------------------------------------


@login_required
def api_tokens(request: HtmxHttpRequest) -> HttpResponse:
    """Auditors and admins see and (re)create their own API token."""
    if not is_auditor(request.user):
        raise PermissionDenied("Only auditors and admins have API tokens.")
    token = None
    if request.method == "POST":
        token = api_token_get_or_create(
            user=request.user, regenerate=request.POST.get("action") == "regenerate"
        )
    else:
        from rest_framework.authtoken.models import Token

        token = Token.objects.filter(user=request.user).first()
    return render(request, "api/tokens.html", {"token": token})
