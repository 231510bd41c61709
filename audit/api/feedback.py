"""REST API v1 for the audit app: thin views over ``audit.services``.

Permissions follow the roles: auditors (and admins) read discussions and runs and work on
their own feedback; admins do everything else. Anonymous requests get 401, users in no role
group 403. Every unsafe request is one transaction (see ``evalsite.api.ApiView``).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from audit.api.serializers import (
    AssignmentCreatedSerializer,
    AssignmentCreateInputSerializer,
    AssignmentFilterSerializer,
    AssignmentOutputSerializer,
    AssignmentReassignInputSerializer,
    AuditLogEntryOutputSerializer,
    AuditLogFilterSerializer,
    DiscussionCreatedSerializer,
    DiscussionCreateInputSerializer,
    DiscussionDetailOutputSerializer,
    DiscussionFilterSerializer,
    DiscussionOutputSerializer,
    ExtractionBulkInputSerializer,
    ExtractionBulkOutputSerializer,
    ExtractionFilterSerializer,
    ExtractionOutputSerializer,
    ExtractionRunFilterSerializer,
    ExtractionRunInputSerializer,
    ExtractionRunOutputSerializer,
    FeedbackActionInputSerializer,
    FeedbackApproveInputSerializer,
    FeedbackBulkApproveInputSerializer,
    FeedbackFilterSerializer,
    FeedbackOutputSerializer,
    FeedbackRejectInputSerializer,
    FeedbackRestoreInputSerializer,
    FeedbackRevisionOutputSerializer,
    FeedbackSaveInputSerializer,
    FeedbackStartInputSerializer,
    GroundTruthExportQuerySerializer,
    GroundTruthFileSerializer,
    GroundTruthImportUploadSerializer,
    ImportSummarySerializer,
    NextStatementSerializer,
    ProgressSerializer,
    ReviewNextQuerySerializer,
    ReviewNextSerializer,
    SkipInputSerializer,
)
from audit.models import Assignment, Discussion, ExtractionRun, Feedback, Statement
from audit.selectors.progress import team_progress
from audit.selectors.queues import (
    discussions_list,
    extraction_runs_list,
    extractions_list,
    feedback_list,
    feedback_revisions,
)
from audit.selectors.stream import (
    assignments_list,
    review_stream_next,
    review_waiting_count,
    review_waiting_feedback,
)
from audit.services import (
    extractions_import,
    feedback_approve,
    feedback_reject,
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from audit.services.api_support import (
    api_token_get_or_create,
    discussion_create,
    extraction_run_create,
)
from audit.services.assignments import (
    assignment_next,
    assignment_reassign,
    assignments_create,
    assignments_unassign,
    statement_skip,
)
from audit.services.audit_log import audit_log_list
from audit.services.export_jobs import ground_truth_export_start
from audit.services.feedback import feedback_bulk_approve
from audit.services.import_jobs import ground_truth_import_start
from evalsite.access import ADMIN_ONLY, READ_ALL_WRITE_ADMIN, IsAuditor, is_auditor
from evalsite.api import (
    ApiRequest,
    ApiView,
    ErrorSerializer,
    JobStartedSerializer,
    ReferenceNotFound,
    StrictJSONParser,
    job_started_body,
)
from evalsite.http import HtmxHttpRequest
from metrics.families.payload.rules import mark_edited
from metrics.families.payload.schema import validate_pdp

CONFLICT = OpenApiResponse(
    ErrorSerializer, description="Stale version: `current_version` is the one to base a retry on."
)
NOT_READY = OpenApiResponse(
    ErrorSerializer,
    description="The coding has problems (`errors`: which item, which field, what is expected); "
    "nothing changed.",
)
ROLE_NOTE = "Roles: {}."


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
            "Register an extraction run (model + prompt version). Idempotent: an existing run "
            "with the same model and prompt version answers 200. " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = ExtractionRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run, created = extraction_run_create(**serializer.validated_data)
        return Response(ExtractionRunOutputSerializer(run).data, status=201 if created else 200)


class ExtractionRunDetailApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(operation_id="extraction_runs_retrieve", responses=ExtractionRunOutputSerializer)
    def get(self, request: ApiRequest, pk: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=pk)
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


# --- feedback ----------------------------------------------------------------------------------


class FeedbackListApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="feedback_list",
        parameters=[FeedbackFilterSerializer],
        responses=FeedbackOutputSerializer(many=True),
        description="Auditors see their own feedback; admins see all.",
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(FeedbackFilterSerializer)
        qs = feedback_list(user=request.user, filters=filters)
        return self.paginated(qs, FeedbackOutputSerializer)

    @extend_schema(
        operation_id="feedback_create",
        request=FeedbackStartInputSerializer,
        responses={201: FeedbackOutputSerializer, 200: FeedbackOutputSerializer},
        description=(
            "Start your feedback on a subject statement (from the AI extraction, or empty for "
            "a blind review). Your existing feedback on the statement answers 200."
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = FeedbackStartInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        statement, run = (
            serializer.validated_data["statement"],
            serializer.validated_data.get("run"),
        )
        feedback = feedback_start(statement=statement, auditor=request.user, run=run)
        status = 201 if feedback.just_created else 200
        return Response(FeedbackOutputSerializer(feedback).data, status=status)


def _visible_feedback(request: ApiRequest, pk: int) -> Feedback:
    """Another auditor's feedback is not found (404), not forbidden, for auditors."""
    return get_object_or_404(
        Feedback.objects.visible_to(request.user).select_related("statement", "auditor"), pk=pk
    )


class FeedbackDetailApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(operation_id="feedback_retrieve", responses=FeedbackOutputSerializer)
    def get(self, request: ApiRequest, pk: int) -> Response:
        return Response(FeedbackOutputSerializer(_visible_feedback(request, pk)).data)

    @extend_schema(
        operation_id="feedback_update",
        request=FeedbackSaveInputSerializer,
        responses={200: FeedbackOutputSerializer, 409: CONFLICT},
        description=(
            "Save an edit of your feedback (admins: any feedback); `comment` is kept when "
            "left out. `version` is the version "
            "you edited; if the feedback changed since, the answer is 409 with "
            "`current_version`. Items whose content changed get confidence 1.0 unless you "
            "set another confidence; drafts may keep problems, submit refuses them."
        ),
    )
    def put(self, request: ApiRequest, pk: int) -> Response:
        feedback = _visible_feedback(request, pk)
        serializer = FeedbackSaveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        feedback = feedback_save(
            feedback=feedback,
            user=request.user,
            edited_extraction=mark_edited(
                feedback.edited_extraction, validate_pdp(data["edited_extraction"])
            ),
            base_version=data["version"],
            comment=data.get("comment"),
        )
        feedback.refresh_from_db()  # edited_extraction: the ground truth, not a pending change
        return Response(FeedbackOutputSerializer(feedback).data)


class FeedbackActionApi(ApiView):
    """A POST that moves one visible feedback through the workflow and returns it."""

    input_serializer: type[Serializer] = FeedbackActionInputSerializer

    def post(self, request: ApiRequest, pk: int) -> Response:
        feedback = _visible_feedback(request, pk)
        serializer = self.input_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        feedback = self.perform(feedback, request.user, serializer.validated_data)
        return Response(FeedbackOutputSerializer(feedback).data)

    def perform(self, feedback: Feedback, user, data: dict) -> Feedback:
        raise NotImplementedError


@extend_schema_view(
    post=extend_schema(
        operation_id="feedback_submit",
        request=FeedbackActionInputSerializer,
        responses={200: FeedbackOutputSerializer, 409: CONFLICT, 422: NOT_READY},
        description="Submit your draft (or rejected) feedback for review; refused (422) while "
        "the coding has problems (docs/review.md, Validation).",
    )
)
class FeedbackSubmitApi(FeedbackActionApi):
    permission_classes = [IsAuditor]

    def perform(self, feedback: Feedback, user, data: dict) -> Feedback:
        return feedback_submit(feedback=feedback, user=user, base_version=data.get("version"))


@extend_schema_view(
    post=extend_schema(
        operation_id="feedback_approve",
        request=FeedbackApproveInputSerializer,
        responses={200: FeedbackOutputSerializer, 409: CONFLICT, 422: NOT_READY},
        description=(
            "Approve exactly `version` of a submitted feedback (or of a pending change to "
            "approved ground truth) as the statement's ground truth; refused (422) while the "
            "coding has problems. A stale version is 409. "
            "If another feedback on the statement is approved, send `replace: true` to replace "
            "it, else 409. Four eyes: never a feedback you coded or edited, except as the only "
            "admin with `self_approval_reason` (logged). See docs/review.md. "
            + ROLE_NOTE.format("admins")
        ),
    )
)
class FeedbackApproveApi(FeedbackActionApi):
    permission_classes = ADMIN_ONLY
    input_serializer = FeedbackApproveInputSerializer

    def perform(self, feedback: Feedback, user, data: dict) -> Feedback:
        return feedback_approve(
            feedback=feedback,
            admin=user,
            base_version=data["version"],
            replace=data["replace"],
            self_approval_reason=data["self_approval_reason"],
        )


class FeedbackBulkApproveApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="feedback_bulk_approve",
        request=FeedbackBulkApproveInputSerializer,
        responses={200: FeedbackOutputSerializer(many=True), 409: CONFLICT},
        description=(
            "Approve the named versions of one auditor's submitted feedback in one discussion, "
            "all or nothing: any stale version (or approved ground truth without `replace`) "
            "is 409 naming each statement, and nothing is approved. " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = FeedbackBulkApproveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        approved = feedback_bulk_approve(
            discussion=get_object_or_404(Discussion, pk=data["discussion"]),
            auditor=get_object_or_404(get_user_model(), pk=data["auditor"]),
            admin=request.user,
            versions={item["id"]: item["version"] for item in data["items"]},
            replace=data["replace"],
        )
        return Response(FeedbackOutputSerializer(approved, many=True).data)


@extend_schema_view(
    post=extend_schema(
        operation_id="feedback_reject",
        request=FeedbackRejectInputSerializer,
        responses={200: FeedbackOutputSerializer, 409: CONFLICT},
        description="Send feedback back to its auditor with a reason. "
        + ROLE_NOTE.format("admins"),
    )
)
class FeedbackRejectApi(FeedbackActionApi):
    permission_classes = ADMIN_ONLY
    input_serializer = FeedbackRejectInputSerializer

    def perform(self, feedback: Feedback, user, data: dict) -> Feedback:
        return feedback_reject(
            feedback=feedback, admin=user, reason=data["reason"], base_version=data.get("version")
        )


# --- history -------------------------------------------------------------------------------------


class FeedbackRevisionListApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="feedback_revisions_list",
        responses=FeedbackRevisionOutputSerializer(many=True),
        description=(
            "A feedback's history, newest first: each revision with its field-level `changes` "
            "(item, field, old -> new) against the revision before it. Autosaves of one person "
            "within a few minutes are folded into one revision (`saves`, `first_version`); a "
            "restore names the revision it came from (`restored_from`). "
            + ROLE_NOTE.format("the feedback's auditor, admins")
        ),
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        feedback = _visible_feedback(request, pk)
        return self.paginated(
            feedback_revisions(feedback=feedback), FeedbackRevisionOutputSerializer
        )


class FeedbackRestoreApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="feedback_restore",
        request=FeedbackRestoreInputSerializer,
        responses={200: FeedbackOutputSerializer, 409: CONFLICT},
        description=(
            "Make an earlier revision's payload (or a conflicting edit that lost) the current one, "
            "as a new `restore` revision naming it. `version` is the feedback's current version; "
            "409 with `current_version` if it changed since. "
            + ROLE_NOTE.format("the feedback's auditor, admins")
        ),
    )
    def post(self, request: ApiRequest, pk: int, revision_pk: int) -> Response:
        feedback = _visible_feedback(request, pk)
        revision = get_object_or_404(feedback.revisions, pk=revision_pk)
        serializer = FeedbackRestoreInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        feedback = feedback_restore(
            feedback=feedback,
            revision=revision,
            user=request.user,
            base_version=serializer.validated_data["version"],
        )
        return Response(FeedbackOutputSerializer(feedback).data)


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
            serializer = GroundTruthImportUploadSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            body, data = serializer.validated_data["file"].read(), None
        else:
            body = request.body  # read before request.data parses the stream
            data = request.data
        outcome = ground_truth_import_start(user=request.user, body=body, data=data)
        if outcome.job is not None:
            return Response(job_started_body(request, outcome.job), status=202)
        return Response(ImportSummarySerializer(outcome.summary).data)


# --- audit log ---------------------------------------------------------------------------------


class AuditLogApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="audit_log_list",
        parameters=[AuditLogFilterSerializer],
        responses=AuditLogEntryOutputSerializer(many=True),
        description=(
            "Blind marks, approvals (self-approvals with their reason), rejections, imports and "
            "evaluation run uploads, newest first; filter by who, what, when and which object. "
            + ROLE_NOTE.format("admins")
        ),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(AuditLogFilterSerializer)
        return self.paginated(audit_log_list(filters=filters), AuditLogEntryOutputSerializer)


# --- tokens (an HTML page, not part of the OpenAPI schema) ---------------------------------------


@login_required
def api_tokens(request: HtmxHttpRequest) -> HttpResponse:
    """Auditors and admins see and (re)create their own API token."""
    if not is_auditor(request.user):
        raise PermissionDenied("Only auditors and admins have API tokens.")
    token = None
    if request.method == "POST":
        token = api_token_get_or_create(
            user=request.user, regenerate=request.POST.get("action") == "regenerate"
        )
    else:
        from rest_framework.authtoken.models import Token

        token = Token.objects.filter(user=request.user).first()
    return render(request, "api/tokens.html", {"token": token})


# --- assignments, skips, the review stream, progress ------------------------------------------------


class AssignmentListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="assignments_list",
        parameters=[AssignmentFilterSerializer],
        responses=AssignmentOutputSerializer(many=True),
        description="Assignments, in id order. Auditors see only their own; admins all. "
        + ROLE_NOTE.format("auditors, admins"),
    )
    def get(self, request: ApiRequest) -> Response:
        filters = self.query(AssignmentFilterSerializer)
        return self.paginated(
            assignments_list(user=request.user, filters=filters), AssignmentOutputSerializer
        )

    @extend_schema(
        operation_id="assignments_create",
        request=AssignmentCreateInputSerializer,
        responses={201: AssignmentCreatedSerializer},
        description=(
            "Assign the unassigned subject statements of `discussions` (or of one discussion's "
            "range `first_order`..`last_order`) to `auditors`: `round_robin` gives whole "
            "discussions in turn, `balanced` to the auditor with the fewest statements so far. "
            "`overlap_percent` of the statements also go to `overlap_k` - 1 other auditors (the "
            "overlap sample, blind with `blind`). Logged. " + ROLE_NOTE.format("admins")
        ),
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = AssignmentCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        created = assignments_create(plan=serializer.plan(), admin=request.user)
        body = {
            "created": len(created),
            "overlap_statements": sorted({a.statement_id for a in created if a.overlap}),
            "assignments": created,
        }
        return Response(AssignmentCreatedSerializer(body).data, status=201)


def _visible_assignment(request: ApiRequest, pk: int) -> Assignment:
    """Another auditor's assignment is not found (404) for auditors."""
    visible = Assignment.objects.visible_to(request.user).select_related(
        "statement", "auditor", "assigned_by"
    )
    return get_object_or_404(visible, pk=pk)


class AssignmentDetailApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(operation_id="assignments_retrieve", responses=AssignmentOutputSerializer)
    def get(self, request: ApiRequest, pk: int) -> Response:
        return Response(AssignmentOutputSerializer(_visible_assignment(request, pk)).data)

    @extend_schema(
        operation_id="assignments_destroy",
        responses={204: None},
        description="Unassign (the auditor's coding stays). Logged. " + ROLE_NOTE.format("admins"),
    )
    def delete(self, request: ApiRequest, pk: int) -> Response:
        assignment = _visible_assignment(request, pk)
        assignments_unassign(
            assignments=Assignment.objects.filter(pk=assignment.pk), admin=request.user
        )
        return Response(status=204)


class AssignmentReassignApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="assignments_reassign",
        request=AssignmentReassignInputSerializer,
        responses={200: AssignmentOutputSerializer},
        description="Give an open or skipped assignment to another auditor; it opens again. "
        "A submitted one is 409. Logged. " + ROLE_NOTE.format("admins"),
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        assignment = _visible_assignment(request, pk)
        serializer = AssignmentReassignInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment = assignment_reassign(
            assignment=assignment, auditor=serializer.validated_data["auditor"], admin=request.user
        )
        return Response(AssignmentOutputSerializer(assignment).data)


def _next_body(statement: Statement | None) -> dict:
    if statement is None:
        return {"statement": None, "discussion": None, "order": None}
    return {
        "statement": statement.pk,
        "discussion": statement.discussion_id,
        "order": statement.order,
    }


class AssignmentNextApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="assignments_next",
        responses=NextStatementSerializer,
        description="The next statement that needs you: your open assignments by due date, "
        "then discussion order (`statement` is null when nothing is left).",
    )
    def get(self, request: ApiRequest) -> Response:
        statement = assignment_next(user=request.user)
        return Response(NextStatementSerializer(_next_body(statement)).data)


class StatementSkipApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="statements_skip",
        request=SkipInputSerializer,
        responses={200: AssignmentOutputSerializer},
        description="Skip a statement you cannot code, with a reason (`note` required for "
        "`other`): your assignment of it is released and it goes to the admins' list of "
        "skipped statements. Refused (409) once you submitted it. Logged.",
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        statement = get_object_or_404(Statement.objects.select_related("speaker"), pk=pk)
        serializer = SkipInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment = statement_skip(
            statement=statement,
            auditor=request.user,
            reason=serializer.validated_data["reason"],
            note=serializer.validated_data["note"],
        )
        return Response(AssignmentOutputSerializer(assignment).data)


class ReviewNextApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="review_stream_next",
        parameters=[ReviewNextQuerySerializer],
        responses=ReviewNextSerializer,
        description="The next statement with coding waiting for review, in discussion order "
        "after `after` (wrapping to the start); `statement` is null when nothing waits. "
        + ROLE_NOTE.format("admins"),
    )
    def get(self, request: ApiRequest) -> Response:
        after_id = self.query(ReviewNextQuerySerializer).get("after")
        after = None
        if after_id is not None:
            after = Statement.objects.filter(pk=after_id).first()
            if after is None:
                raise ReferenceNotFound("after", f"No statement {after_id}.")
        statement = review_stream_next(after=after)
        body = {
            **_next_body(statement),
            "waiting": review_waiting_count(),
            "feedback": review_waiting_feedback(statement=statement),
        }
        return Response(ReviewNextSerializer(body).data)


class ProgressApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="progress_retrieve",
        responses=ProgressSerializer,
        description="Per auditor and per discussion: assigned, coded, submitted, approved, "
        "rejected, skipped, active coding minutes, median minutes per submitted statement, "
        "submitted statements per active day, agreement with approved ground truth and with "
        "other coders (docs/team.md). Auditors get only their own row and no discussions.",
    )
    def get(self, request: ApiRequest) -> Response:
        body = team_progress(user=request.user)
        return Response(ProgressSerializer(body).data)
