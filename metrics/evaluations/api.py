"""REST API v1 for imported evaluations: list, upload (multipart), detail, retry.

``POST /api/v1/evaluations/`` takes multipart form data: ``family``, optional ``name`` and
``options`` (a JSON object), and one file field per input role (``run``, ``tests``,
``results``, …; repeat a role's field for several files). It calls the same service as the
upload page and ``manage.py import_evaluation``; a bad file answers 400 with the message naming
the file, the row or key and the problem. Roles: auditors and admins read; admins upload.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from evalsite.access import ADMIN_ONLY, READ_ALL_WRITE_ADMIN, IsAuditor
from evalsite.api import ApiRequest, ApiView, ErrorSerializer
from evalsite.middleware import body_limit
from metrics.evaluations import services
from metrics.evaluations.registry import UPLOADS
from metrics.evaluations.serializers import (
    EvaluationCreateInputSerializer,
    EvaluationDetailOutputSerializer,
    EvaluationFilterSerializer,
    EvaluationOutputSerializer,
)
from metrics.models import Evaluation

_ROLES = sorted({role.name for family in UPLOADS.values() for role in family.roles})
_UPLOAD_SCHEMA = {
    "multipart/form-data": {
        "type": "object",
        "properties": {
            "family": {"type": "string", "enum": sorted(UPLOADS)},
            "name": {"type": "string"},
            "options": {"type": "string", "description": "JSON object of family options."},
            **{
                role: {"type": "string", "format": "binary", "description": "Input file."}
                for role in _ROLES
            },
        },
        "required": ["family"],
    }
}


@body_limit(services.max_upload_bytes)  # the files' own limit, not MAX_REQUEST_BYTES
class EvaluationListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="evaluations_list",
        parameters=[EvaluationFilterSerializer],
        responses=EvaluationOutputSerializer(many=True),
        description="Imported evaluations, newest first. Roles: auditors, admins.",
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(EvaluationFilterSerializer)
        return self.paginated(
            services.evaluations_list(filters=filters), EvaluationOutputSerializer
        )

    @extend_schema(
        operation_id="evaluations_create",
        request=_UPLOAD_SCHEMA,
        responses={
            201: EvaluationOutputSerializer,
            400: OpenApiResponse(ErrorSerializer, description="A bad file or option."),
        },
        description=(
            "Upload an evaluation run's output files (one field per role) to compute its "
            "metric family in the background; poll `url` until `status` is done or failed. "
            "Roles: admins."
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = EvaluationCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        files = {
            role: [services.input_file_from_upload(upload) for upload in uploads]
            for role, uploads in request.FILES.lists()
        }
        evaluation = services.evaluation_create(
            family=data["family"],
            name=data.get("name"),
            files=files,
            options=data.get("options") or {},
            user=request.user,
        )
        body = EvaluationOutputSerializer(evaluation, context={"request": request}).data
        return Response(body, status=201)


class EvaluationDetailApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="evaluations_retrieve",
        responses=EvaluationDetailOutputSerializer,
        description="One evaluation with its artifact once done. Roles: auditors, admins.",
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        evaluation = get_object_or_404(services.evaluations_list(), pk=pk)
        return Response(
            EvaluationDetailOutputSerializer(evaluation, context={"request": request}).data
        )


class EvaluationRetryApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="evaluations_retry",
        request=None,
        responses={202: EvaluationOutputSerializer},
        description=(
            "Queue a failed evaluation again, or one still queued (its task was lost, e.g. "
            "uploaded while the broker was down). Roles: admins."
        ),
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        evaluation = get_object_or_404(Evaluation, pk=pk)
        evaluation = services.evaluation_retry(evaluation=evaluation, user=request.user)
        body = EvaluationOutputSerializer(evaluation, context={"request": request}).data
        return Response(body, status=202)
