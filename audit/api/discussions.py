"""REST API v1 of discussions, extraction runs and their extractions, and the ground truth's
export and import. Auditors (and admins) read; admins write.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from audit.api.responses import ROLE_NOTE
from audit.api.serializers.discussions import (
    DiscussionCreatedSerializer,
    DiscussionCreateInputSerializer,
    DiscussionDetailOutputSerializer,
    DiscussionFilterSerializer,
    DiscussionOutputSerializer,
)
from audit.api.serializers.runs import (
    ExtractionBulkInputSerializer,
    ExtractionBulkOutputSerializer,
    ExtractionFilterSerializer,
    ExtractionOutputSerializer,
    ExtractionRunFilterSerializer,
    ExtractionRunInputSerializer,
    ExtractionRunOutputSerializer,
    ExtractionRunUpdateInputSerializer,
)
from audit.api.serializers.transfer import (
    GroundTruthExportQuerySerializer,
    GroundTruthFileSerializer,
    GroundTruthImportUploadSerializer,
    ImportRunFieldsSerializer,
    ImportSummarySerializer,
)
from audit.models import ExtractionRun
from audit.selectors.lists import discussions_list, extraction_runs_list, extractions_list
from audit.services import (
    extractions_import,
)
from audit.services.api_support import discussion_create
from audit.services.export_jobs import ground_truth_export_start
from audit.services.import_jobs import ground_truth_import_start, summary_body
from audit.services.runs import run_notes_update, run_register_from
from evalsite.access import ADMIN_ONLY, READ_ALL_WRITE_ADMIN, IsAuditor
from evalsite.api import (
    ApiRequest,
    ApiView,
    JobStartedSerializer,
    StrictJSONParser,
    job_started_body,
)

# --- discussions -------------------------------------------------------------------------------


class DiscussionListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="discussions_list",
        parameters=[DiscussionFilterSerializer],
        responses=DiscussionOutputSerializer(many=True),
        description=ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(DiscussionFilterSerializer)
        return self.paginated(discussions_list(filters=filters), DiscussionOutputSerializer)

    @extend_schema(
        operation_id="discussions_create",
        request=DiscussionCreateInputSerializer,
        responses={201: DiscussionCreatedSerializer, 200: DiscussionCreatedSerializer},
        description=(
            "Create a discussion with its statements (and their AI extractions as `pdp_deltas`"
            " of `run`). Idempotent by `external_id`: an existing discussion answers 200 "
            "unchanged. " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = DiscussionCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        discussion, created = discussion_create(
            data=serializer.import_payload(),
            by=request.user,
            run=serializer.validated_data.get("run"),
        )
        discussion = discussions_list().get(pk=discussion.pk)
        body = DiscussionCreatedSerializer(discussion, context={"created": created}).data
        return Response(body, status=201 if created else 200)


class DiscussionDetailApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="discussions_retrieve",
        responses=DiscussionDetailOutputSerializer,
        description="A discussion with its statements. " + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        discussion = get_object_or_404(discussions_list(), pk=pk)
        return Response(DiscussionDetailOutputSerializer(discussion).data)


# --- extraction runs and extractions -------------------------------------------------------------


# Where a JSON body's extractions go, as query parameters (a form upload's fields otherwise).
IMPORT_RUN_PARAMS = ("run", "model_name", "prompt_version", "unit", "notes", "external_id")


class ExtractionRunListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="extraction_runs_list",
        parameters=[ExtractionRunFilterSerializer],
        responses=ExtractionRunOutputSerializer(many=True),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(ExtractionRunFilterSerializer)
        return self.paginated(extraction_runs_list(filters=filters), ExtractionRunOutputSerializer)

    @extend_schema(
        operation_id="extraction_runs_create",
        request=ExtractionRunInputSerializer,
        responses={201: ExtractionRunOutputSerializer, 200: ExtractionRunOutputSerializer},
        description=(
            "Register an extraction run: a new replicate (201) of `configuration`, or of the "
            "configuration the fields describe (found by model, prompt version, prompt hash, "
            "parameters and unit, or created). Give `configuration` alone, or at least "
            "`model_name` and `prompt_version` (400 otherwise). Never merged with an earlier run: registering "
            "the same configuration again is another replicate with its own id and notes. "
            "Idempotent only by `external_id`: the run registered under it answers 200, "
            "unchanged (409 if it belongs to another configuration). " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = ExtractionRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run, created = run_register_from(dict(serializer.validated_data), by=request.user)
        return Response(ExtractionRunOutputSerializer(run).data, status=201 if created else 200)


class ExtractionRunDetailApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(operation_id="extraction_runs_retrieve", responses=ExtractionRunOutputSerializer)
    def get(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(extraction_runs_list(), pk=pk)
        return Response(ExtractionRunOutputSerializer(run).data)

    @extend_schema(
        operation_id="extraction_runs_partial_update",
        request=ExtractionRunUpdateInputSerializer,
        responses=ExtractionRunOutputSerializer,
        description="Change a replicate's notes. " + ROLE_NOTE.format("admins"),
    )
    def patch(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(extraction_runs_list(), pk=pk)
        serializer = ExtractionRunUpdateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = run_notes_update(run=run, notes=serializer.validated_data["notes"])
        return Response(ExtractionRunOutputSerializer(run).data)


EXTRACTIONS_SEEN = (
    "Auditors read the AI extractions their editor shows them: not those of statements in "
    "the blind sample (they code those from an empty start). "
)


class ExtractionRunExtractionsApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="extraction_runs_extractions_list",
        parameters=[ExtractionFilterSerializer],
        responses=ExtractionOutputSerializer(many=True),
        description="The run's extractions. "
        + EXTRACTIONS_SEEN
        + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=pk)
        filters = {**self.query(ExtractionFilterSerializer), "run": run.pk}
        extractions = extractions_list(user=request.user, filters=filters)
        return self.paginated(extractions, ExtractionOutputSerializer)

    @extend_schema(
        operation_id="extraction_runs_extractions_create",
        request=ExtractionBulkInputSerializer,
        responses={201: ExtractionBulkOutputSerializer},
        description=(
            "Create or replace the run's extractions in bulk (e.g. a whole discussion or run in "
            "one request); all or nothing. " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=pk)
        serializer = ExtractionBulkInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        items = [dict(item) for item in serializer.validated_data["extractions"]]
        saved = extractions_import(run=run, items=items)
        body = {"run": run.pk, "count": len(saved), "extraction_ids": [e.pk for e in saved]}
        return Response(ExtractionBulkOutputSerializer(body).data, status=201)


class ExtractionListApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="extractions_list",
        parameters=[ExtractionFilterSerializer],
        responses=ExtractionOutputSerializer(many=True),
        description="AI extractions, filtered (e.g. `?statement=` for one statement's, no "
        "draft started). " + EXTRACTIONS_SEEN + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(ExtractionFilterSerializer)
        extractions = extractions_list(user=request.user, filters=filters)
        return self.paginated(extractions, ExtractionOutputSerializer)


# --- ground truth ------------------------------------------------------------------------------


class GroundTruthExportApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="ground_truth_export",
        parameters=[GroundTruthExportQuerySerializer],
        responses={
            200: OpenApiResponse(GroundTruthFileSerializer, description="The export (attachment)."),
            202: OpenApiResponse(
                JobStartedSerializer,
                description="Large export: a background job; poll `url`, then fetch "
                "`download_url`.",
            ),
        },
        description=(
            "Approved ground truth as a JSON download (schema: /api/schema/ground-truth.json). "
            "Give `discussion_ids=30,31,32` or `all=true`. Selections with more approved "
            "statements than EXPORT_SYNC_MAX_STATEMENTS run as a background job (202). "
            + ROLE_NOTE.format("admins")
        ),
    )
    def get(self, request: ApiRequest) -> HttpResponse:
        query = self.query(GroundTruthExportQuerySerializer)
        outcome = ground_truth_export_start(
            user=request.user,
            discussion_ids=query.get("discussion_ids"),
            all_discussions=query.get("all", False),
            run=query.get("run"),
            include_provisional=query.get("include_provisional", False),
            include_notes=query.get("include_notes", False),
            include_f1=query.get("include_f1", False),
        )
        if outcome.job is not None:
            return Response(job_started_body(request, outcome.job), status=202)
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = JsonResponse(outcome.data, json_dumps_params={"ensure_ascii": False})
        response["Content-Disposition"] = f'attachment; filename="ground-truth-{stamp}.json"'
        return response


class GroundTruthImportApi(ApiView):
    permission_classes = ADMIN_ONLY
    parser_classes = [StrictJSONParser, MultiPartParser]

    @extend_schema(
        operation_id="ground_truth_import",
        # One media type: a generated client sends the form (scripts may also send the file
        # itself as an application/json body, as the description says).
        request={"multipart/form-data": GroundTruthImportUploadSerializer},
        responses={200: ImportSummarySerializer, 202: JobStartedSerializer},
        description=(
            "Import a ground-truth file (what `GET ground-truth/export` produces, schema: "
            "/api/schema/ground-truth.json), sent as the `file` of a form upload (or as the "
            "request body itself, `Content-Type: application/json`): "
            "idempotent by discussion external id, all or nothing. Imported ground truth "
            "becomes its own feedback approved by you, marked `imported`; it never replaces "
            "anyone's feedback or approved ground truth. Files larger than "
            "IMPORT_SYNC_MAX_BYTES are imported by a background job (202 with the job's `url`; "
            "the job's `result` holds the summary, its `error` the problems). "
            + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        if request.content_type.startswith("multipart/"):
            serializer: ImportRunFieldsSerializer = GroundTruthImportUploadSerializer(
                data=request.data
            )
            serializer.is_valid(raise_exception=True)
            upload = serializer.validated_data["file"]
            body, data, source = upload.read(), None, upload.name or "upload"
        else:
            body = request.body  # read before request.data parses the stream
            params = request.query_params
            query = {k: params[k] for k in IMPORT_RUN_PARAMS if k in params}
            serializer = ImportRunFieldsSerializer(data=query)
            serializer.is_valid(raise_exception=True)
            data, source = request.data, "request body"
        run = serializer.import_run(source=source)
        outcome = ground_truth_import_start(user=request.user, body=body, data=data, run=run)
        if outcome.job is not None:
            return Response(job_started_body(request, outcome.job), status=202)
        summary: Any = outcome.summary  # no job: the import's summary
        return Response(ImportSummarySerializer(summary_body(summary)).data)
