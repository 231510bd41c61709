"""The import page (admins): a ground-truth file in any shape the import takes, and where its
extractions go; the same service as the API and the import_discussions command."""

from __future__ import annotations

from django import forms
from django.http import HttpResponse
from django.shortcuts import render

from audit.models import ExtractionRun
from audit.services import WorkflowError
from audit.services.import_jobs import ground_truth_import_start, summary_body
from audit.services.imports import MAX_MODEL_NAME, MAX_PROMPT_VERSION, ImportRun
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest
from metrics.families.json_input import InputError, JsonInputError
from metrics.families.payload.schema import PayloadError

MAX_RUN_NOTES = 100_000


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="JSON: evalsite's export, one discussion, an admin export with speakers, or "
        "a list of cases."
    )
    run = forms.ModelChoiceField(
        queryset=ExtractionRun.objects.select_related("configuration").order_by("-created_at"),
        required=False,
        label="Extraction run",
        empty_label="a new run named after the file and the time",
        help_text="Where the file's AI extractions go (a file without any makes no run).",
    )
    model_name = forms.CharField(
        required=False,
        max_length=MAX_MODEL_NAME,
        label="or model",
        help_text="With a prompt version: a new replicate of that configuration (the "
        "configuration created if new).",
    )
    prompt_version = forms.CharField(required=False, max_length=MAX_PROMPT_VERSION)
    unit = forms.ChoiceField(
        choices=[
            ("statement", "one extraction per statement"),
            ("discussion", "one extraction per whole discussion"),
        ],
        initial="statement",
        required=False,
        label="Unit",
        help_text="With a model: what one extraction of the new run covers (whole discussions: "
        "the file's discussion_extraction PDPs).",
    )
    notes = forms.CharField(
        required=False,
        max_length=MAX_RUN_NOTES,
        label="Replicate notes",
        help_text="With a model: every import naming a model registers a new replicate of it, "
        "with these notes.",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("run") and (data.get("model_name") or data.get("prompt_version")):
            raise forms.ValidationError("Choose a run, or name a model and prompt version.")
        if data.get("prompt_version") and not data.get("model_name"):
            self.add_error("model_name", "Name the model of that prompt version.")
        return data

    def import_run(self, source: str) -> ImportRun:
        data = self.cleaned_data
        described = bool(data.get("model_name"))
        return ImportRun(
            run=data.get("run"),
            model_name=data.get("model_name") or "",
            prompt_version=data.get("prompt_version") or "",
            source=source,
            unit=(data.get("unit") or "") if described else "",
            notes=(data.get("notes") or "") if described else "",
        )


@admin_required
def import_file(request: HtmxHttpRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    context: dict = {"form": form}
    if request.method != "POST" or not form.is_valid():
        status = 400 if request.method == "POST" else 200
        return render(request, "audit/import.html", context, status=status)
    upload = form.cleaned_data["file"]
    try:
        outcome = ground_truth_import_start(
            user=request.user, body=upload.read(), run=form.import_run(upload.name or "upload")
        )
    except PayloadError as exc:
        context["problems"] = exc.messages()
    except (InputError, JsonInputError) as exc:
        context["problems"] = [f"Not a JSON file we can read: {exc}"]
    except WorkflowError as exc:
        context["problems"] = [str(exc)]
    else:
        context["job"] = outcome.job
        context["summary"] = summary_body(outcome.summary) if outcome.summary else None
    status = 422 if context.get("problems") else 200
    return render(request, "audit/import.html", context, status=status)
