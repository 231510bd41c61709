"""The export form's options, sent on to the export (``GET /api/v1/ground-truth/export``): a
form leaves a field empty where the API takes no parameter at all."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest, page_redirect
from evalsite.params import parse_id


@require_GET
@admin_required
def ground_truth_export_options(request: HtmxHttpRequest) -> HttpResponse:
    """?include_notes=on&run=&include_f1=on: the export of all approved ground truth with
    these options (the run checked, the boxes read as ticked or not)."""
    run = parse_id(request.GET.get("run"), name="run")
    if request.GET.get("include_f1") and not run:
        message = "Choose the run whose F1 figures to export, then export again."
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    query: dict[str, object] = {"all": "true"}
    if run:
        query["run"] = run
    for option in ("include_notes", "include_f1"):
        if request.GET.get(option):
            query[option] = "true"
    return page_redirect(request, f"{reverse('api-ground-truth-export')}?{urlencode(query)}")
