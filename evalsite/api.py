"""API plumbing shared by both apps: the exception handler that keeps every error a 4xx."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from audit.schemas import PayloadError
from audit.services import WorkflowError
from metrics.families.common import InputError


def exception_handler(exc, context):
    if isinstance(exc, PayloadError):
        return Response({"detail": "Invalid payload.", "errors": exc.messages()}, status=400)
    if isinstance(exc, InputError):
        return Response({"detail": str(exc), "errors": [str(exc)]}, status=400)
    if isinstance(exc, WorkflowError):
        body = {"detail": str(exc)}
        current = getattr(exc, "current_version", None)
        if current is not None:
            body["current_version"] = current
        return Response(body, status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response({"detail": "Request body too large."}, status=413)
    if isinstance(exc, PermissionDenied):
        return Response(
            {"detail": str(exc) or "Permission denied."}, status=status.HTTP_403_FORBIDDEN
        )
    return drf_exception_handler(exc, context)
