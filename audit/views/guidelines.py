"""The coding guidelines: everyone with a role reads them; admins edit (Markdown, a preview,
a new version per save)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from audit.definitions import definitions_markdown
from audit.markdown import render_markdown
from audit.models import GuidelineVersion
from audit.selectors.lists import guideline_versions
from audit.services import WorkflowError
from audit.services.guidelines import MAX_GUIDELINES, guideline_current, guideline_save
from evalsite.access import admin_required, auditor_required, is_admin
from evalsite.http import HtmxHttpRequest, error_fragment
from evalsite.params import parse_id

LISTED = 100


@require_http_methods(["GET", "POST"])
@auditor_required
def guidelines(request: HtmxHttpRequest) -> HttpResponse:
    """The guidelines in force and their versions; admins also get the editor (POST saves)."""
    current = guideline_current()
    if request.method == "POST":
        if not is_admin(request.user):
            return error_fragment(
                request, ["Only admins write the coding guidelines."], status=403,
                target="#guidelines-msg",
            )  # fmt: skip
        try:
            saved = guideline_save(
                text=request.POST.get("text", ""),
                note=request.POST.get("note", ""),
                admin=request.user,
                base_number=parse_id(request.POST.get("base"), name="base"),
            )
        except WorkflowError as exc:
            return error_fragment(
                request, [str(exc)], status=exc.status_code, target="#guidelines-msg"
            )
        messages.success(request, f"Saved the guidelines as {saved.label}.")
        return redirect(reverse("audit:guidelines"))
    text = current.text if current else definitions_markdown()
    context = {
        "current": current,
        "rendered": render_markdown(current.text) if current else None,
        "versions": guideline_versions()[:LISTED],
        "draft": text,
        "max_chars": MAX_GUIDELINES,
    }
    return render(request, "audit/guidelines.html", context)


@require_POST
@admin_required
def guidelines_preview(request: HtmxHttpRequest) -> HttpResponse:
    """The editor's text as it will read (nothing is saved)."""
    text = request.POST.get("text", "")[:MAX_GUIDELINES]
    return render(
        request, "audit/guidelines.html#preview", {"preview": render_markdown(text), "text": text}
    )


@require_GET
@auditor_required
def guideline_version(request: HtmxHttpRequest, number: int) -> HttpResponse:
    version = get_object_or_404(GuidelineVersion.objects.select_related("author"), number=number)
    context = {"version": version, "rendered": render_markdown(version.text)}
    return render(request, "audit/guideline_version.html", context)
