"""Audit screens: the auditor's queue, the discussion audit page, the admin review queue."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from audit.models import Discussion, Feedback
from audit.roles import is_admin, is_auditor


def role_required(check):
    def decorator(view):
        @login_required
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not check(request.user):
                raise PermissionDenied("Your account has no role that may open this page.")
            return view(request, *args, **kwargs)

        wrapped.__name__ = view.__name__
        wrapped.__doc__ = view.__doc__
        return wrapped

    return decorator


auditor_required = role_required(is_auditor)
admin_required = role_required(is_admin)


@auditor_required
def home(request: HttpRequest) -> HttpResponse:
    discussions = Discussion.objects.annotate(
        n_statements=Count("statements", distinct=True),
        n_approved=Count(
            "statements__feedback",
            filter=Q(statements__feedback__status=Feedback.Status.APPROVED),
            distinct=True,
        ),
    ).order_by("id")
    return render(request, "audit/home.html", {"discussions": discussions})


@auditor_required
def discussion_detail(request: HttpRequest, pk: int) -> HttpResponse:
    discussion = get_object_or_404(Discussion, pk=pk)
    statements = discussion.statements.select_related("speaker").order_by("order")
    return render(
        request, "audit/discussion.html", {"discussion": discussion, "statements": statements}
    )


@admin_required
def review_queue(request: HttpRequest) -> HttpResponse:
    submitted = (
        Feedback.objects.filter(status=Feedback.Status.SUBMITTED)
        .select_related("statement__discussion", "auditor")
        .order_by("statement__discussion_id", "statement__order")
    )
    return render(request, "audit/review_queue.html", {"submitted": submitted})
