"""The API's lists of audit records, filtered and in id order (so pages of a list are stable),
and the few record lists the pages share (blind reviews, guideline versions)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import (
    Count,
    Prefetch,
    Q,
    QuerySet,
)

from audit.models import (
    BlindReview,
    ComputeJob,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    GuidelineVersion,
    RunConfiguration,
    Statement,
)
from evalsite.access import is_admin


def filtered_by(
    queryset: QuerySet[Any], filters: dict[str, Any] | None, lookups: dict[str, str]
) -> QuerySet[Any]:
    """The API's list filters (name -> ORM lookup) that were given, in id order: pages of a
    list stay stable while rows are added."""
    given = filters or {}
    return queryset.filter(
        **{lookup: given[name] for name, lookup in lookups.items() if name in given}
    ).order_by("id")


def discussions_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Discussion]:
    filters = filters or {}
    qs = Discussion.objects.annotate(
        n_statements=Count("statements", distinct=True),
        n_approved=Count(
            "statements__feedback",
            filter=Q(statements__feedback__status=Feedback.Status.APPROVED),
            distinct=True,
        ),
    )
    if "external_id" in filters:
        qs = qs.filter(external_id=filters["external_id"])
    if filters.get("has_approved") is True:
        qs = qs.filter(n_approved__gt=0)
    elif filters.get("has_approved") is False:
        qs = qs.filter(n_approved=0)
    return qs.order_by("id")


def discussion_statements(*, discussion: Discussion) -> QuerySet[Statement]:
    return discussion.statements.select_related("speaker").order_by("order", "id")


def extraction_runs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ExtractionRun]:
    lookups = {
        "model_name": "model_name",
        "prompt_version": "prompt_version",
        "configuration": "configuration_id",
        "external_id": "external_id",
    }
    runs = ExtractionRun.objects.select_related("configuration")
    return filtered_by(runs, filters, lookups)


def configurations_list(*, filters: dict[str, Any] | None = None) -> QuerySet[RunConfiguration]:
    """Configurations with how many replicates each has, oldest first (API order: by id)."""
    lookups = {"model_name": "model_name", "prompt_version": "prompt_version", "unit": "unit"}
    configurations = RunConfiguration.objects.annotate(replicates=Count("runs")).order_by("id")
    return filtered_by(configurations, filters, lookups)


def configuration_detail(*, pk: int) -> RunConfiguration | None:
    """A configuration with its replicates (in replicate order) read alongside."""
    replicates = Prefetch(
        "runs", queryset=ExtractionRun.objects.select_related("configuration").order_by("replicate")
    )
    return configurations_list().prefetch_related(replicates).filter(pk=pk).first()


def unassigned_visible() -> bool:
    return settings.UNASSIGNED_WORK_VISIBLE


def hidden_discussion_filter(user: User) -> Q | None:
    """With unassigned work hidden, an auditor's queue lists only discussions with their
    assignments (or their coding); None: no restriction."""
    if unassigned_visible() or is_admin(user):
        return None
    return Q(statements__assignments__auditor=user) | Q(statements__feedback__auditor=user)


def extractions_list(
    *, user: User | None = None, filters: dict[str, Any] | None = None
) -> QuerySet[Extraction]:
    """Extractions, filtered; for an auditor (``user``) only those their editor shows: none of
    a statement in the blind sample, and with unassigned work hidden only of their discussions."""
    lookups = {
        "run": "run_id",
        "discussion": "statement__discussion_id",
        "statement": "statement_id",
    }
    extractions = Extraction.objects.select_related("statement")
    if user is not None and not is_admin(user):
        extractions = extractions.filter(statement__blind_review__isnull=True)
        hidden = hidden_discussion_filter(user)
        if hidden is not None:
            visible = Discussion.objects.filter(hidden).values("pk")
            extractions = extractions.filter(statement__discussion__in=visible)
    return filtered_by(extractions, filters, lookups)


def feedback_list(*, user: User, filters: dict[str, Any] | None = None) -> QuerySet[Feedback]:
    """The feedback the user may see (auditors: their own; admins: all), filtered."""
    qs = (
        Feedback.objects.visible_to(user)
        .select_related("statement", "auditor", "approved_by", "guideline_version", "adjudication")
        .prefetch_related("adjudication__coders")
    )
    lookups = {
        "discussion": "statement__discussion_id",
        "statement": "statement_id",
        "status": "status",
        "auditor": "auditor_id",
        "run": "source_extraction__run_id",
    }
    return filtered_by(qs, filters, lookups)


def compute_jobs_list(*, filters: dict[str, Any] | None = None) -> QuerySet[ComputeJob]:
    return filtered_by(ComputeJob.objects.all(), filters, {"kind": "kind", "status": "status"})


def blind_reviews_page(*, number: str | None, per_page: int) -> Page:
    """The statements marked for blind review, newest first, one page of them; each with how
    many blind and pre-filled codings were sent for it, counted for that page's marks only."""
    order = ("-created_at", "-statement_id")
    ids = BlindReview.objects.order_by(*order).values_list("pk", flat=True)
    page = Paginator(ids, per_page).get_page(number)
    coded = Q(statement__feedback__status__in=(Feedback.Status.SUBMITTED, Feedback.Status.APPROVED))
    marks = BlindReview.objects.filter(pk__in=list(page.object_list)).annotate(
        n_blind=Count("statement__feedback", filter=coded & Q(statement__feedback__blind=True)),
        n_prefilled=Count(
            "statement__feedback", filter=coded & Q(statement__feedback__blind=False)
        ),
    )
    listed: Any = list(marks.select_related("statement__discussion", "marked_by").order_by(*order))
    page.object_list = listed
    return page


def guideline_versions() -> QuerySet[GuidelineVersion]:
    """Every saved version of the guidelines, newest first."""
    return GuidelineVersion.objects.select_related("author").order_by("-number")
