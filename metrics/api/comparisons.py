"""REST API v1 of the comparison of a baseline and a candidate (each a run or a configuration
with its replicates): ask for it, poll it, read every figure's verdict and the gate's answer.
The comparison is computed by a worker and stored (``metrics.engine.derived``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from evalsite.access import ADMIN_ONLY
from evalsite.api import ApiRequest, ApiView
from metrics.api.serializers import (
    ComparisonInputSerializer,
    ComparisonQuerySerializer,
    ComparisonSerializer,
)
from metrics.experiments import comparison_verdict

NOTE = (
    "A side is a run (`r12` or `12`) or a configuration with all its replicates (`c3`). The "
    "interval of each difference is a paired bootstrap over discussions and, with replicates, "
    "over runs (docs/prompt-loop.md). `gate.passed` is false when a gated figure (`figures`; "
    "by default the overall F1) is worse beyond noise at `level`; it is null until the "
    "comparison is current. A side or snapshot that does not exist is 404. Roles: admins."
)


def _answer(request: ApiRequest, data: dict[str, Any]) -> dict[str, Any]:
    level = data.get("level", 95)
    figures = data.get("figures") or None
    answer = comparison_verdict(
        data["baseline"],
        data["candidate"],
        snapshot=data.get("snapshot"),
        level=level / 100,
        figures=figures,
    )
    query = {"baseline": answer["baseline"]["spec"], "candidate": answer["candidate"]["spec"]}
    if answer["snapshot"] is not None:
        query["snapshot"] = answer["snapshot"]
    query["level"] = level
    if figures:
        query["figures"] = ",".join(figures)
    path = f"{reverse('api-comparison')}?{urlencode(query)}"
    return {**answer, "url": request.build_absolute_uri(path)}


class ComparisonApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="comparison_read",
        parameters=[ComparisonQuerySerializer],
        responses=ComparisonSerializer,
        description="The comparison of `candidate` with `baseline` on live ground truth or "
        "`snapshot`; when missing or outdated, a worker is asked for it and `status` is "
        "`updating`: poll until `fresh`. " + NOTE,
    )
    def get(self, request: ApiRequest) -> Response:
        query = self.query(ComparisonQuerySerializer)
        if "figures" in query:
            query["figures"] = query["figures"].split(",")
        return Response(ComparisonSerializer(_answer(request, query)).data)

    @extend_schema(
        operation_id="comparison_start",
        request=ComparisonInputSerializer,
        responses={200: ComparisonSerializer, 202: ComparisonSerializer},
        description="Ask for the comparison (after registering the candidate run and posting "
        "its extractions): `200` with the verdicts when it is current, else `202` while a "
        "worker computes it (poll `url`). " + NOTE,
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = ComparisonInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        answer = _answer(request, serializer.validated_data)
        code = 202 if answer["status"] == "updating" else 200
        return Response(ComparisonSerializer(answer).data, status=code)
