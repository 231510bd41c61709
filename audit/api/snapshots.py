"""REST API v1 of frozen ground-truth snapshots: list, freeze, read, export, delete."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import FileResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from audit.api.responses import ROLE_NOTE
from audit.api.serializers.snapshots import (
    SnapshotCreateInputSerializer,
    SnapshotDeleteQuerySerializer,
    SnapshotOutputSerializer,
)
from audit.api.serializers.transfer import GroundTruthFileSerializer
from audit.models import GroundTruthSnapshot
from audit.services.snapshots import (
    snapshot_delete,
    snapshot_export_filename,
    snapshot_export_open,
    snapshot_freeze,
)
from evalsite.access import ADMIN_ONLY, READ_ALL_WRITE_ADMIN
from evalsite.api import ApiRequest, ApiView


def _snapshots() -> QuerySet[GroundTruthSnapshot]:
    return GroundTruthSnapshot.objects.order_by("id")


class SnapshotListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="snapshots_list",
        responses=SnapshotOutputSerializer(many=True),
        description="Frozen ground-truth snapshots, oldest first. "
        + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest) -> Response:
        return self.paginated(_snapshots(), SnapshotOutputSerializer)

    @extend_schema(
        operation_id="snapshots_create",
        request=SnapshotCreateInputSerializer,
        responses={201: SnapshotOutputSerializer},
        description=(
            "Freeze the approved ground truth as it is now under a unique name (logged). The "
            "snapshot never changes: later approvals, edits, restores and imports change live "
            "ground truth only; its export is the same file byte for byte; figures of runs on "
            "it are computed once. A name in use answers 409; no approved ground truth, 409. "
            + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = SnapshotCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        snapshot = snapshot_freeze(by=request.user, **serializer.validated_data)
        return Response(SnapshotOutputSerializer(snapshot).data, status=201)


class SnapshotDetailApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="snapshots_retrieve",
        responses=SnapshotOutputSerializer,
        description=ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        return Response(SnapshotOutputSerializer(get_object_or_404(_snapshots(), pk=pk)).data)

    @extend_schema(
        operation_id="snapshots_destroy",
        parameters=[SnapshotDeleteQuerySerializer],
        responses={204: None},
        description=(
            "Delete a snapshot with the figures computed on it; logged in the audit log with "
            "what it held and `reason`. " + ROLE_NOTE.format("admins")
        ),
    )
    def delete(self, request: ApiRequest, pk: int) -> Response:
        snapshot = get_object_or_404(_snapshots(), pk=pk)
        reason = self.query(SnapshotDeleteQuerySerializer).get("reason", "")
        snapshot_delete(snapshot=snapshot, by=request.user, reason=reason)
        return Response(status=204)


class SnapshotExportApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="snapshots_export",
        responses={
            (200, "application/json"): OpenApiResponse(
                GroundTruthFileSerializer,
                description="The ground-truth export file written when it was frozen "
                "(attachment; schema: /api/schema/ground-truth.json), byte for byte.",
            )
        },
        description=ROLE_NOTE.format("admins"),
    )
    def get(self, request: ApiRequest, pk: int) -> HttpResponseBase:
        snapshot = get_object_or_404(_snapshots(), pk=pk)
        return FileResponse(
            snapshot_export_open(snapshot=snapshot),
            as_attachment=True,
            filename=snapshot_export_filename(snapshot),
            content_type="application/json",
        )
