"""REST API v1 for the metrics app: stored results (read only), recompute, job polling."""

from __future__ import annotations

from django.http import FileResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from audit.selectors.lists import compute_jobs_list
from evalsite.access import ADMIN_ONLY, IsAuditor
from evalsite.api import (
    ApiRequest,
    ApiView,
    ErrorSerializer,
    JobStartedSerializer,
    job_started_body,
)
from metrics.api.serializers import (
    JobFilterSerializer,
    JobOutputSerializer,
    MetricResultFilterSerializer,
    MetricResultOutputSerializer,
    RecomputeInputSerializer,
)
from metrics.engine.recompute import metrics_recompute_all
from metrics.models import ComputeJob
from metrics.selectors import metric_results_list


class MetricResultListApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="metric_results_list",
        parameters=[MetricResultFilterSerializer],
        responses=MetricResultOutputSerializer(many=True),
        description=(
            "Stored metric results (never computed on request). Roles: auditors, admins. "
            "Auditors do not see the inter-auditor figures, nor statement or discussion results "
            "covering a statement they are still coding (a draft, or a blind-review statement "
            "they have not submitted): those carry the approved ground truth."
        ),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(MetricResultFilterSerializer)
        results = metric_results_list(user=request.user, filters=filters)
        return self.paginated(results, MetricResultOutputSerializer)


class MetricResultDetailApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(operation_id="metric_results_retrieve", responses=MetricResultOutputSerializer)
    def get(self, request: ApiRequest, pk: int) -> Response:
        result = get_object_or_404(metric_results_list(user=request.user), pk=pk)
        return Response(MetricResultOutputSerializer(result).data)


class RecomputeApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="recompute_create",
        request=RecomputeInputSerializer,
        responses={202: JobStartedSerializer},
        description=(
            "Recompute stored metrics in the background (all, one run's, or only stale ones); "
            "poll `url` for progress. "
            "A recompute already under way is returned instead of starting another. "
            "Roles: admins."
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = RecomputeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        job = metrics_recompute_all(
            user=request.user,
            family=data["family"],
            run_id=data["run"].pk if data.get("run") else None,
            stale_only=data["stale_only"],
        )
        return Response(job_started_body(request, job), status=202)


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
