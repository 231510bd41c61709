"""The REST API under /api/: version 1 and the OpenAPI schema."""

from django.urls import include, path

urlpatterns = [
    path("v1/", include("audit.api_urls")),
]
