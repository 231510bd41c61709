"""Answers the audit API documents alike in several operations."""

from drf_spectacular.utils import OpenApiResponse

from evalsite.api import ErrorSerializer

CONFLICT = OpenApiResponse(
    ErrorSerializer, description="Stale version: `current_version` is the one to base a retry on."
)
NOT_READY = OpenApiResponse(
    ErrorSerializer,
    description="The coding has problems (`errors`: which item, which field, what is expected); "
    "nothing changed.",
)
ROLE_NOTE = "Roles: {}."
