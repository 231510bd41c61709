"""The audit log page: admins filter named acts by who, what, when and which object."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from audit.forms import AuditLogFilterForm
from audit.models import AuditLogEntry
from audit.services.audit_log import audit_log_list, audit_log_object_types
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest

PAGE_SIZE = 100


@require_GET
@admin_required
def audit_log(request: HtmxHttpRequest) -> HttpResponse:
    form = AuditLogFilterForm(request.GET or None, object_types=audit_log_object_types())
    entries: QuerySet[AuditLogEntry] = AuditLogEntry.objects.none()
    if not form.is_bound:
        entries = audit_log_list()
    elif form.is_valid():
        entries = audit_log_list(filters=form.cleaned_data)
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "query": query.urlencode()}
    template = "audit/audit_log.html#entries" if request.htmx else "audit/audit_log.html"
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, template, context, status=status)
