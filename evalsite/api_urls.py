"""The REST API under /api/: version 1, the OpenAPI schema and its docs, the token page."""

from django.http import JsonResponse
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.permissions import AllowAny

from audit.api.tokens import api_tokens
from evalsite.api import api_not_found
from metrics.families.payload.schema import GROUND_TRUTH_EXPORT_SCHEMA


def ground_truth_schema(request):
    """The JSON Schema of the ground-truth export format (public)."""
    return JsonResponse(GROUND_TRUTH_EXPORT_SCHEMA, content_type="application/schema+json")


v1: list[URLPattern | URLResolver] = [
    path("", include("audit.api.urls")),
    path("", include("metrics.api.urls")),
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
