"""Ground-truth snapshots (admins): freeze the approved ground truth under a name, see what each
snapshot holds, export it (the file written at freezing) and delete one (logged). The same
services as the API (/api/v1/snapshots/)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audit.models import GroundTruthSnapshot
from audit.services import WorkflowError
from audit.services.snapshots import MAX_NAME, MAX_NOTE, snapshot_delete, snapshot_freeze
from evalsite.access import admin_required
from evalsite.http import HtmxHttpRequest
from metrics.families.payload.schema import PayloadError


class SnapshotFreezeForm(forms.Form):
    name = forms.CharField(
        max_length=MAX_NAME, help_text="Unique, e.g. “GT v12”: figures on it say “on GT v12”."
    )
    note = forms.CharField(
        required=False,
        max_length=MAX_NOTE,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What it is for, what changed since the last one.",
    )


class SnapshotDeleteForm(forms.Form):
    reason = forms.CharField(required=False, max_length=MAX_NOTE, label="Why (kept in the log)")
    confirm = forms.BooleanField(
        label="Delete it with every figure computed on it (the audit log keeps what it held)"
    )


def _page(request: HtmxHttpRequest, form: SnapshotFreezeForm, status: int = 200) -> HttpResponse:
    snapshots = GroundTruthSnapshot.objects.order_by("-created_at", "-id")
    context = {"form": form, "snapshots": snapshots, "delete_form": SnapshotDeleteForm()}
    return render(request, "audit/snapshots.html", context, status=status)


@admin_required
def snapshots(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the snapshots and the freeze form; POST: freeze the approved ground truth now."""
    if request.method != "POST":
        return _page(request, SnapshotFreezeForm())
    form = SnapshotFreezeForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=422)
    try:
        with transaction.atomic():
            snapshot = snapshot_freeze(
                name=form.cleaned_data["name"], note=form.cleaned_data["note"], by=request.user
            )
    except PayloadError as exc:
        for issue in exc.issues:
            form.add_error(issue.path if issue.path in form.fields else None, issue.message)
        return _page(request, form, status=422)
    except WorkflowError as exc:
        form.add_error(None, str(exc))
        return _page(request, form, status=exc.status_code)
    messages.success(
        request,
        f"Froze {snapshot.codings} approved codings of {snapshot.discussions} discussions as "
        f"{snapshot.name}.",
    )
    return redirect("audit:snapshots")


@require_POST
@admin_required
def snapshot_remove(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    snapshot = get_object_or_404(GroundTruthSnapshot, pk=pk)
    form = SnapshotDeleteForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"{snapshot.name} was not deleted: tick the box to confirm.")
        return redirect("audit:snapshots")
    name = snapshot.name
    snapshot_delete(snapshot=snapshot, by=request.user, reason=form.cleaned_data["reason"])
    messages.success(request, f"Deleted the snapshot {name} (logged).")
    return redirect("audit:snapshots")
