"""REST API v1 for the metrics app: stored results (read only), recompute, job polling."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from evalsite.access import ADMIN_ONLY, IsAuditor
from evalsite.api import (
    ApiRequest,
    ApiView,
    JobStartedSerializer,
    job_started_body,
)
from metrics.api.serializers import (
    MetricResultFilterSerializer,
    MetricResultOutputSerializer,
    RecomputeInputSerializer,
)
from metrics.engine.recompute import metrics_recompute_all
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
