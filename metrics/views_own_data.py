"""The own-data cards alone, for their own htmx polling while their result is updating.

One view for every family computed whole from our data: the registry gives its card.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from audit.models import ExtractionRun
from evalsite.access import auditor_required
from metrics.cards import whole_family_card
from metrics.registry import FAMILIES, WHOLE


@auditor_required
@require_GET
def whole_family_card_view(
    request: HttpRequest, family: str, run_id: int | None = None
) -> HttpResponse:
    if family not in WHOLE:
        raise Http404("No such card.")
    entry = FAMILIES[family]
    run = get_object_or_404(ExtractionRun, pk=run_id) if run_id is not None else None
    card = whole_family_card(entry, run=run, user=request.user)
    if card is None:
        raise PermissionDenied("Only admins see this card.")
    return render(request, entry.card, {"card": card})
