"""REST API v1 of background jobs (audit.models.ComputeJob) of every kind: recompute, export,
import. A job's progress, and the file an export wrote. Admins only.
"""

from __future__ import annotations

from django.http import FileResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from audit.api.serializers.transfer import ImportSummarySerializer
from audit.models import ComputeJob
from audit.selectors.lists import compute_jobs_list
from evalsite.access import ADMIN_ONLY
from evalsite.api import (
    ApiRequest,
    ApiView,
    ErrorSerializer,
)


class JobFilterSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ComputeJob.Kind.choices, required=False)
    status = serializers.ChoiceField(choices=ComputeJob.Status.choices, required=False)


class JobOutputSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    elapsed_seconds = serializers.FloatField(read_only=True, allow_null=True)
    eta_seconds = serializers.FloatField(read_only=True, allow_null=True)
    url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    result = serializers.SerializerMethodField(
        help_text="An import job's summary once done (null otherwise)."
    )

    class Meta:
        model = ComputeJob
        fields = [
            "id",
            "kind",
            "status",
            "done",
            "total",
            "percent",
            "result",
            "error",
            "attempt",
            "heartbeat_at",
            "cancel_requested",
            "created_at",
            "started_at",
            "finished_at",
            "elapsed_seconds",
            "eta_seconds",
            "url",
            "download_url",
        ]

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_url(self, job: ComputeJob) -> str:
        return self._absolute(reverse("api-job-detail", args=[job.pk]))

    @extend_schema_field(ImportSummarySerializer(allow_null=True))
    def get_result(self, job: ComputeJob) -> dict | None:
        return (job.params or {}).get("result") if job.kind == ComputeJob.Kind.IMPORT else None

    def get_download_url(self, job: ComputeJob) -> str | None:
        if job.status != ComputeJob.Status.DONE or not job.result_file:
            return None
        return self._absolute(reverse("api-job-download", args=[job.pk]))


class JobListApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="jobs_list",
        parameters=[JobFilterSerializer],
        responses=JobOutputSerializer(many=True),
        description="Background jobs (recompute, export). Roles: admins.",
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(JobFilterSerializer)
        return self.paginated(compute_jobs_list(filters=filters), JobOutputSerializer)


class JobDetailApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="jobs_retrieve",
        responses=JobOutputSerializer,
        description="A job's progress: status, done, total, percent. Roles: admins.",
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        job = get_object_or_404(ComputeJob, pk=pk)
        return Response(JobOutputSerializer(job, context={"request": request}).data)


class JobDownloadApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="jobs_download",
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT, description="The file the job wrote (attachment)."
            ),
            409: OpenApiResponse(ErrorSerializer, description="The job has not finished."),
        },
        description="The file an export job wrote, once it is done. Roles: admins.",
    )
    def get(self, request: ApiRequest, pk: int) -> HttpResponseBase:
        job = get_object_or_404(ComputeJob, pk=pk)
        if job.status != ComputeJob.Status.DONE:
            return Response(
                {
                    "detail": f"Job {job.pk} is {job.status}; the file is not ready."
                    + (f" Error: {job.error}" if job.error else "")
                },
                status=409,
            )
        if not job.result_file:
            return Response({"detail": f"Job {job.pk} wrote no file."}, status=404)
        name = job.result_file.name.rsplit("/", 1)[-1]
        try:
            handle = job.result_file.open("rb")
        except OSError:
            return Response({"detail": f"The file of job {job.pk} is gone."}, status=404)
        return FileResponse(
            handle,
            as_attachment=True,
            filename=name,
            content_type="application/json",
        )
