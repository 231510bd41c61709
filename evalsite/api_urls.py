"""The REST API under /api/: version 1, the OpenAPI schema and its docs, the token page."""

from django.http import JsonResponse
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.permissions import AllowAny

from audit.api import api_tokens
from evalsite.api import api_not_found
from metrics import adjudication_api, triage_api
from metrics import api as metrics_api
from metrics.families.payload.schema import GROUND_TRUTH_EXPORT_SCHEMA


def ground_truth_schema(request):
    """The JSON Schema of the ground-truth export format (public)."""
    return JsonResponse(GROUND_TRUTH_EXPORT_SCHEMA, content_type="application/schema+json")


v1: list[URLPattern | URLResolver] = [
    path("", include("audit.api_urls")),
    path("metric-results/", metrics_api.MetricResultListApi.as_view(), name="api-metric-results"),
    path(
        "metric-results/<int:pk>/",
        metrics_api.MetricResultDetailApi.as_view(),
        name="api-metric-result",
    ),
    path("recompute/", metrics_api.RecomputeApi.as_view(), name="api-recompute"),
    path("jobs/", metrics_api.JobListApi.as_view(), name="api-jobs"),
    path("jobs/<int:pk>/", metrics_api.JobDetailApi.as_view(), name="api-job-detail"),
    path("jobs/<int:pk>/download", metrics_api.JobDownloadApi.as_view(), name="api-job-download"),
    path("evaluations/", include("metrics.evaluations.api_urls")),
    path("extraction-runs/<int:run_id>/triage/", triage_api.TriageApi.as_view(), name="api-triage"),
    path(
        "extraction-runs/<int:run_id>/triage/statements/",
        triage_api.TriageStatementListApi.as_view(),
        name="api-triage-statements",
    ),
    path(
        "statements/<int:pk>/adjudication/",
        adjudication_api.AdjudicationApi.as_view(),
        name="api-adjudication",
    ),
    path(
        "statements/<int:pk>/adjudication/choices/",
        adjudication_api.AdjudicationChoiceApi.as_view(),
        name="api-adjudication-choice",
    ),
    path(
        "statements/<int:pk>/adjudication/remerge/",
        adjudication_api.AdjudicationRemergeApi.as_view(),
        name="api-adjudication-remerge",
    ),
    path(
        "statements/<int:pk>/adjudication/submit/",
        adjudication_api.AdjudicationSubmitApi.as_view(),
        name="api-adjudication-submit",
    ),
]

urlpatterns = [
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="api-schema"),
    path("schema/ground-truth.json", ground_truth_schema, name="api-ground-truth-schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[AllowAny]),
        name="api-docs",
    ),
    path(
        "redoc/",
        SpectacularRedocView.as_view(url_name="api-schema", permission_classes=[AllowAny]),
        name="api-redoc",
    ),
    path("tokens/", api_tokens, name="api-tokens"),
    # Last: unknown /api/ paths answer JSON, like the rest of the API.
    re_path(r"^[\s\S]*$", api_not_found),
]
