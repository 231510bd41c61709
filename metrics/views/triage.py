"""Review triage settings of one run: the admin's form (the card on the dashboard shows the
figures; this page changes what triage does)."""

from __future__ import annotations

from django import forms
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from audit.models import ExtractionRun, TriageSettings
from audit.services.triage import (
    TriageChoice,
    TriageSettingsError,
    triage_settings_get,
    triage_settings_update,
)
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest


class TriageSettingsForm(forms.ModelForm):
    class Meta:
        model = TriageSettings
        fields = ["enabled", "alpha", "delta", "acceptable_f1", "qa_rate", "lowest_first", "score"]
        labels = {
            "enabled": "Review triage on",
            "alpha": "Risk level α (share of unacceptable statements let through)",
            "delta": "Failure probability δ of the bound",
            "acceptable_f1": "Acceptable when statement F1 ≥",
            "qa_rate": "QA sampling rate (share of accepted statements coded anyway)",
            "lowest_first": "Order the remaining queue lowest confidence first",
            "score": "Statement confidence",
        }

    def choice(self) -> TriageChoice:
        return TriageChoice(**{f: self.cleaned_data[f] for f in self.Meta.fields})


@require_http_methods(["GET", "POST"])
@admin_required
def triage_settings(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    # The configuration: the run's label.
    run = get_object_or_404(ExtractionRun.objects.select_related("configuration"), pk=run_id)
    current = triage_settings_get(run=run)
    form = TriageSettingsForm(request.POST or None, instance=current)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                triage_settings_update(run=run, admin=request.user, choice=form.choice())
            except TriageSettingsError as exc:
                form.add_error(exc.field, str(exc))
            else:
                return redirect(f"{reverse('metrics:dashboard')}?run={run.pk}#triage-{run.pk}")
        status = 400
    context = {"run": run, "form": form, "settings": current}
    return render(request, "metrics/triage_settings.html", context, status=status)
