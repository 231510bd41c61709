"""REST API v1 of runs as experiments: a run's or a configuration's figures on a chosen ground
truth (live, or a frozen snapshot), and two runs of any unit compared on cumulative F1."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from audit.models import ExtractionRun, GroundTruthSnapshot, RunConfiguration
from evalsite.access import IsAuditor
from evalsite.api import ApiRequest, ApiView, ReferenceNotFound
from metrics.api.serializers import (
    BasisQuerySerializer,
    ConfigurationFiguresSerializer,
    CumulativeComparisonQuerySerializer,
    CumulativeComparisonSerializer,
    RunFiguresSerializer,
)
from metrics.experiments import Basis, configuration_figures, cumulative_comparison, run_figures

BASIS_NOTE = (
    "`snapshot`: figures on that frozen ground truth, computed once in the background the "
    "first time they are asked for (status `stale` until then: poll) and never stale after; "
    "left out: on live ground truth. Every answer names its ground truth (`ground_truth`). "
    "Roles: auditors, admins."
)


def _basis(query: dict) -> Basis:
    snapshot_id = query.get("snapshot")
    if snapshot_id is None:
        return Basis()
    snapshot = GroundTruthSnapshot.objects.filter(pk=snapshot_id).first()
    if snapshot is None:
        raise ReferenceNotFound("snapshot", f"No snapshot {snapshot_id}.")
    return Basis(snapshot)


def _run(pk: int, field: str = "run") -> ExtractionRun:
    run = ExtractionRun.objects.select_related("configuration").filter(pk=pk).first()
    if run is None:
        raise ReferenceNotFound(field, f"No extraction run {pk}.")
    return run


class RunFiguresApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="extraction_runs_figures",
        parameters=[BasisQuerySerializer],
        responses=RunFiguresSerializer,
        description="A run's extraction-F1 figures (statement level: null for a "
        "discussion-unit run, not applicable; cumulative per discussion). " + BASIS_NOTE,
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        basis = _basis(self.query(BasisQuerySerializer))
        run = get_object_or_404(ExtractionRun.objects.select_related("configuration"), pk=pk)
        return Response(RunFiguresSerializer(run_figures(run, basis)).data)


class ConfigurationFiguresApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="configurations_figures",
        parameters=[BasisQuerySerializer],
        responses=ConfigurationFiguresSerializer,
        description="A configuration's figures: each replicate's, and per figure their mean, "
        "sample SD and min-max. " + BASIS_NOTE,
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        basis = _basis(self.query(BasisQuerySerializer))
        configuration = get_object_or_404(RunConfiguration, pk=pk)
        return Response(
            ConfigurationFiguresSerializer(configuration_figures(configuration, basis)).data
        )


class CumulativeComparisonApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="cumulative_comparison",
        parameters=[CumulativeComparisonQuerySerializer],
        responses=CumulativeComparisonSerializer,
        description="Two runs of any unit (statement or discussion) on the figure they share: "
        "cumulative F1 per discussion both were scored on, and pooled over those. " + BASIS_NOTE,
    )
    def get(self, request: ApiRequest) -> Response:
        query = self.query(CumulativeComparisonQuerySerializer)
        basis = _basis(query)
        left, right = _run(query["left"], "left"), _run(query["right"], "right")
        for run in (left, right):
            run_figures(run, basis)  # on a snapshot: asks for them if never computed
        comparison = cumulative_comparison(left, right, basis)
        return Response(CumulativeComparisonSerializer(comparison).data)
