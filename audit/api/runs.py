"""REST API v1 of configurations and their replicates' extractions: the configurations
(with their runs), a discussion-unit run's extractions (one PDP per discussion). Registering
a run is ``POST /api/v1/extraction-runs/`` (audit/api.py)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from audit.api.responses import ROLE_NOTE
from audit.api.serializers.runs import (
    ConfigurationDetailOutputSerializer,
    ConfigurationFilterSerializer,
    ConfigurationOutputSerializer,
    ConfigurationUpdateInputSerializer,
    DiscussionExtractionBulkInputSerializer,
    DiscussionExtractionOutputSerializer,
    ExtractionBulkOutputSerializer,
)
from audit.models import DiscussionExtraction, ExtractionRun
from audit.selectors.lists import configuration_detail, configurations_list
from audit.services.runs import configuration_notes_update, discussion_extractions_import
from evalsite.access import ADMIN_ONLY, READ_ALL_WRITE_ADMIN
from evalsite.api import ApiRequest, ApiView


class ConfigurationListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="configurations_list",
        parameters=[ConfigurationFilterSerializer],
        responses=ConfigurationOutputSerializer(many=True),
        description="Configurations (model, prompt version, prompt hash, parameters, unit), "
        "each with how many replicates (runs) it has. Register a run to create one. "
        + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(ConfigurationFilterSerializer)
        return self.paginated(configurations_list(filters=filters), ConfigurationOutputSerializer)


class ConfigurationDetailApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="configurations_retrieve",
        responses=ConfigurationDetailOutputSerializer,
        description="A configuration with its replicates in order. "
        + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        configuration = configuration_detail(pk=pk)
        if configuration is None:
            return Response({"detail": f"No configuration {pk}."}, status=404)
        return Response(ConfigurationDetailOutputSerializer(configuration).data)

    @extend_schema(
        operation_id="configurations_partial_update",
        request=ConfigurationUpdateInputSerializer,
        responses=ConfigurationDetailOutputSerializer,
        description="Change a configuration's notes (what identifies it never changes: "
        "register a run of another configuration instead). " + ROLE_NOTE.format("admins"),
    )
    def patch(self, request: ApiRequest, pk: int) -> Response:
        configuration = get_object_or_404(configurations_list(), pk=pk)
        serializer = ConfigurationUpdateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        configuration_notes_update(
            configuration=configuration, notes=serializer.validated_data["notes"]
        )
        return Response(ConfigurationDetailOutputSerializer(configuration_detail(pk=pk)).data)


class RunDiscussionExtractionsApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="extraction_runs_discussion_extractions_list",
        responses=DiscussionExtractionOutputSerializer(many=True),
        description="A discussion-unit run's extractions, one PDP per discussion. "
        + ROLE_NOTE.format("admins"),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=pk)
        rows = DiscussionExtraction.objects.filter(run=run).order_by("id")
        return self.paginated(rows, DiscussionExtractionOutputSerializer)

    @extend_schema(
        operation_id="extraction_runs_discussion_extractions_create",
        request=DiscussionExtractionBulkInputSerializer,
        responses={201: ExtractionBulkOutputSerializer},
        description=(
            "Create or replace a discussion-unit run's extractions: one PDP of each whole "
            "discussion, validated like any extraction; all or nothing. A statement-unit run "
            "answers 409. " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(ExtractionRun.objects.select_related("configuration"), pk=pk)
        serializer = DiscussionExtractionBulkInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        items = [dict(item) for item in serializer.validated_data["extractions"]]
        saved = discussion_extractions_import(run=run, items=items)
        body = {"run": run.pk, "count": len(saved), "extraction_ids": [e.pk for e in saved]}
        return Response(ExtractionBulkOutputSerializer(body).data, status=201)
