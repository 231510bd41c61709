"""Imported-evaluation pages: list, upload (admins), detail with progress and cards, artifact
download, retry (admins), side-by-side comparison, example input files.

Views are thin: the service validates, stores and queues; pages only read stored rows (the
cards are built from the stored artifact, never computed on the request path).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from evalsite.access import admin_required, auditor_required, is_admin
from evalsite.http import HtmxHttpRequest
from evalsite.middleware import body_limit
from evalsite.params import parse_id
from metrics.evaluations import services
from metrics.evaluations.forms import FILE_PREFIX, EvaluationFilterForm, EvaluationUploadForm
from metrics.evaluations.registry import (
    EXAMPLES_DIR,
    UPLOADS,
    InputFile,
    OptionError,
    example_files,
    upload_get,
)
from metrics.families.json_input import InputError
from metrics.models import Evaluation

log = logging.getLogger(__name__)
LIST_LIMIT = 200
POLL_SECONDS = 1  # a finished result shows within about a second; polling stops then


# --- list ------------------------------------------------------------------------------------


@auditor_required
@require_GET
def evaluation_list(request: HtmxHttpRequest) -> HttpResponse:
    form = EvaluationFilterForm(request.GET or None)
    evaluations = services.evaluations_list(filters=form.filters() if form.is_bound else {})
    return render(
        request,
        "metrics/evaluations/list.html",
        {
            "form": form,
            "evaluations": evaluations[:LIST_LIMIT],
            "families": UPLOADS,
            "can_upload": is_admin(request.user),
        },
    )


# --- upload ----------------------------------------------------------------------------------


def _family_from(request: HtmxHttpRequest) -> Any:
    name = request.POST.get("family") or request.GET.get("family") or next(iter(UPLOADS))
    try:
        return upload_get(name)
    except ValidationError:
        raise Http404(f"No metric family {name!r}.") from None


def _add_service_error(form: EvaluationUploadForm, exc: Exception) -> None:
    """Put the service's refusal on the field it names (or on the form)."""
    if isinstance(exc, InputError):
        form.add_error(form.field_for_file(exc.file), str(exc))
    elif isinstance(exc, OptionError):
        form.add_error(form.field_for_option(exc.option), exc.messages[0])
    else:
        for message in getattr(exc, "messages", [str(exc)]):
            form.add_error(None, message)


def _chosen_files(form: EvaluationUploadForm) -> dict[str, list[InputFile]]:
    """The files of this try: new uploads, and for a role left empty the file kept from the
    last try."""
    files = dict(form.kept)
    for role in form.family.roles:
        uploads = form.files.getlist(FILE_PREFIX + role.name) if form.files else []
        if uploads := [upload for upload in uploads if upload]:
            files[role.name] = [services.input_file_from_upload(upload) for upload in uploads]
    return files


def _create_from_form(request: HtmxHttpRequest, form: EvaluationUploadForm) -> Evaluation | None:
    try:
        files = _chosen_files(form)
        form.chosen = files
        return services.evaluation_create(
            family=form.family.name,
            name=form.cleaned_data.get("name"),
            files=files,
            options=form.options(),
            user=request.user,
        )
    except (InputError, ValidationError) as exc:
        _add_service_error(form, exc)
        return None


@body_limit(services.max_upload_bytes)  # the files' own limit, not MAX_REQUEST_BYTES
@admin_required
@require_http_methods(["GET", "POST"])
def evaluation_upload(request: HtmxHttpRequest) -> HttpResponse:
    family = _family_from(request)
    kept = services.upload_kept_read(user=request.user, token=request.POST.get("kept", ""))
    form = EvaluationUploadForm(family, request.POST or None, request.FILES or None, kept=kept)
    if request.method == "POST" and form.is_valid():
        evaluation = _create_from_form(request, form)
        if evaluation is not None:
            messages.success(request, f"“{evaluation.name}” was uploaded and is being computed.")
            return redirect("metrics:evaluation_detail", pk=evaluation.pk)
    status = 400 if form.is_bound and form.errors else 200
    kept_token = ""
    if status == 400:
        # Browsers forget a chosen file when the page comes back: keep it for the next try.
        chosen = form.chosen
        if chosen is None:
            try:
                chosen = _chosen_files(form)
            except InputError:  # a file over the size limit is not kept
                chosen = form.kept
        kept_token = services.upload_kept_store(user=request.user, files=chosen)
        form.keep(chosen)
    context = {
        "kept_token": kept_token,
        "form": form,
        "family": family,
        "families": UPLOADS.values(),
        "max_bytes": services.max_file_bytes(),
    }
    return render(request, "metrics/evaluations/upload.html", context, status=status)


# --- detail, progress, artifact, retry -------------------------------------------------------


def _result_context(request: HtmxHttpRequest, evaluation: Evaluation) -> dict[str, Any]:
    card, card_error = None, ""
    try:
        card = services.evaluation_card(evaluation)
    except Exception as exc:  # a card bug must not hide the page or the artifact
        log.exception("card of evaluation %s failed", evaluation.pk)
        card_error = services.error_text(exc)
    return {
        "evaluation": evaluation,
        "card": card,
        "card_error": card_error,
        "card_template": upload_get(evaluation.family).card_template
        if evaluation.family in UPLOADS
        else "",
        "can_retry": is_admin(request.user),
        "poll_seconds": POLL_SECONDS,
    }


@auditor_required
@require_GET
def evaluation_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    evaluation = get_object_or_404(
        Evaluation.objects.prefetch_related("files").select_related(
            "uploaded_by", "paired_left", "paired_right"
        ),
        pk=pk,
    )
    return render(request, "metrics/evaluations/detail.html", _detail_context(request, evaluation))


def _detail_context(request: HtmxHttpRequest, evaluation: Evaluation) -> dict[str, Any]:
    """Everything the page shows about the evaluation, read once: the heading's status chip,
    the summary (finished time) and the result section always agree."""
    context = _result_context(request, evaluation)
    context["family"] = UPLOADS.get(evaluation.family)
    context["pairs"] = [e for e in (evaluation.paired_left, evaluation.paired_right) if e]
    context["options"] = _options_rows(evaluation)
    context["on_detail"] = True
    return context


@auditor_required
@require_GET
def evaluation_status(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The result section, polled while the evaluation is queued or running, with the heading
    and summary swapped in beside it (out of band) so the whole page changes together."""
    evaluation = get_object_or_404(
        Evaluation.objects.prefetch_related("files").select_related(
            "uploaded_by", "paired_left", "paired_right"
        ),
        pk=pk,
    )
    if request.GET.get("page") != "detail":  # polled from the comparison page
        return render(
            request, "metrics/evaluations/_result.html", _result_context(request, evaluation)
        )
    context = {**_detail_context(request, evaluation), "oob": True}
    return render(request, "metrics/evaluations/_result.html", context)


@auditor_required
@require_GET
def evaluation_artifact(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    evaluation = get_object_or_404(Evaluation, pk=pk)
    if evaluation.artifact is None:
        raise Http404("This evaluation has no artifact (yet).")
    response = JsonResponse(evaluation.artifact, json_dumps_params={"indent": 2})
    filename = f"evaluation-{evaluation.pk}-{evaluation.family}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@admin_required
@require_POST
def evaluation_retry(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    evaluation = get_object_or_404(Evaluation, pk=pk)
    try:
        evaluation = services.evaluation_retry(evaluation=evaluation, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    if request.htmx:
        context = _result_context(request, evaluation)
        return render(request, "metrics/evaluations/_result.html", context)
    return redirect("metrics:evaluation_detail", pk=evaluation.pk)


# --- comparison ------------------------------------------------------------------------------


def _int_param(request: HtmxHttpRequest, name: str) -> int | None:
    return parse_id(request.GET.get(name) or request.POST.get(name), name=name)


def _compare_pair(request: HtmxHttpRequest) -> tuple[Evaluation | None, Evaluation | None, str]:
    left_id, right_id = _int_param(request, "left"), _int_param(request, "right")
    if left_id is None or right_id is None:
        return None, None, "Pick two evaluations to compare (left and right)."
    left = get_object_or_404(Evaluation, pk=left_id)
    right = get_object_or_404(Evaluation, pk=right_id)
    if left.family != right.family:
        return left, right, "Only evaluations of the same family can be compared."
    return left, right, ""


@auditor_required
@require_GET
def evaluation_compare(request: HtmxHttpRequest) -> HttpResponse:
    left, right, problem = _compare_pair(request)
    context: dict[str, Any] = {"left": left, "right": right, "problem": problem}
    if left and right and not problem:
        context["sides"] = [_result_context(request, e) for e in (left, right)]
        family = UPLOADS.get(left.family)
        context["family"] = family
        if family and family.pairable:
            paired = services.evaluation_pair_get(left=left, right=right)
            context["paired"] = _result_context(request, paired) if paired else None
            context["can_pair"] = is_admin(request.user) and left.pk != right.pk
    # No pair asked for yet (opened from a link): the picker, not an error.
    asked = "left" in request.GET or "right" in request.GET
    status = 400 if problem and not (left and right) and asked else 200
    return render(request, "metrics/evaluations/compare.html", context, status=status)


@admin_required
@require_POST
def evaluation_pair(request: HtmxHttpRequest) -> HttpResponse:
    left, right, problem = _compare_pair(request)
    if problem or left is None or right is None:
        messages.error(request, problem)
    else:
        try:
            services.evaluation_pair_create(
                left=left,
                right=right,
                user=request.user,
                intersection_only=request.POST.get("intersection_only") == "1",
            )
        except (InputError, ValidationError) as exc:
            text = str(exc) if isinstance(exc, InputError) else " ".join(exc.messages)
            messages.error(request, f"Could not pair the two runs: {text}")
    query = f"?left={left.pk if left else ''}&right={right.pk if right else ''}"
    return redirect(reverse("metrics:evaluation_compare") + query)


# --- example files ---------------------------------------------------------------------------


@auditor_required
@require_GET
def evaluation_example(request: HtmxHttpRequest, name: str) -> FileResponse:
    """A small example input file declared by the registry (for the upload page and docs)."""
    if name not in example_files():
        raise Http404("No such example file.")
    path = Path(settings.BASE_DIR) / EXAMPLES_DIR / name
    return FileResponse(path.open("rb"), as_attachment=True, filename=name)


def _options_rows(evaluation: Evaluation) -> list[tuple[str, str]]:
    family = UPLOADS.get(evaluation.family)
    rows = []
    for name, value in evaluation.options.items():
        option = family.option(name) if family else None
        rows.append((name, option.as_text(value) if option else json.dumps(value)))
    return rows
