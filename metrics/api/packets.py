"""REST API v1 of failure packets: one error pattern of a run or a configuration, with the
statements where it happens most, as JSON (``metrics.packets`` builds it)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from evalsite.access import ADMIN_ONLY
from evalsite.api import ApiRequest, ApiView
from metrics import packets
from metrics.api.serializers import FailurePacketQuerySerializer, FailurePacketSerializer
from metrics.engine.comparison import side_get


class FailurePacketApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="failure_packet",
        parameters=[FailurePacketQuerySerializer],
        responses=FailurePacketSerializer,
        description="The failure packet of `pattern` over `side` (a run `r12` or a "
        "configuration's replicates `c3`): its counts and the `n` statements where it happens "
        "most, each with its context, the AI's and the ground truth's items, the auditor's "
        "note and comments; the guideline sections in force. `409` while a run's error "
        "analysis is computed for the first time (try again). Roles: admins.",
    )
    def get(self, request: ApiRequest) -> Response:
        query = self.query(FailurePacketQuerySerializer)
        packet = packets.failure_packet(
            user=request.user,
            side=side_get(query["side"], name="side"),
            pattern=query["pattern"],
            n=query.get("n", packets.DEFAULT_STATEMENTS),
            base_url=request.build_absolute_uri("/").rstrip("/"),
        )
        return Response(FailurePacketSerializer(packet).data)
