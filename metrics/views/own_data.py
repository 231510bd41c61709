"""The own-data cards alone, for their own htmx polling while their result is updating, and
the numbers behind each (?format=csv or ?format=json), like the other figures' downloads.

One view for every family computed whole from our data: the registry gives its card.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from audit.models import ExtractionRun
from evalsite.access import auditor_required
from evalsite.http import HtmxHttpRequest
from metrics.cards import whole_family_card
from metrics.registry import FAMILIES, WHOLE
from metrics.views.dashboards import table_download


@auditor_required
@require_GET
def whole_family_card_view(
    request: HtmxHttpRequest, family: str, run_id: int | None = None
) -> HttpResponse:
    if family not in WHOLE:
        raise Http404("No such card.")
    entry = FAMILIES[family]
    run = get_object_or_404(ExtractionRun, pk=run_id) if run_id is not None else None
    card = whole_family_card(entry, run=run, user=request.user)
    if card is None:
        raise PermissionDenied("Only admins see this card.")
    if request.GET.get("format") in ("csv", "json"):
        download = _numbers(request, family, run, card.get("values") or {})
        if download is not None:
            return download
    return render(request, entry.card, {"card": card})


def _numbers(
    request: HtmxHttpRequest, family: str, run: ExtractionRun | None, values: dict[str, Any]
) -> HttpResponse | None:
    """JSON: the stored figures as they are; CSV: one row per figure (path, value)."""
    name = f"{family}-run-{run.pk}" if run else family
    if request.GET["format"] == "json":
        body = {"family": family, "run": run.pk if run else None, "values": values}
        response = JsonResponse(body, json_dumps_params={"default": str})
        response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response
    return table_download(request, name, figure_rows(values))


def figure_rows(value: Any, path: str = "") -> list[dict[str, Any]]:
    """Every number (or text) in nested figures as {"figure": "a.b[0].c", "value": ...}."""
    if isinstance(value, dict):
        return [
            row
            for key, item in value.items()
            for row in figure_rows(item, f"{path}.{key}" if path else str(key))
        ]
    if isinstance(value, list):
        return [row for i, item in enumerate(value) for row in figure_rows(item, f"{path}[{i}]")]
    return [{"figure": path, "value": value}]
