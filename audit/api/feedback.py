"""REST API v1 of feedback (coding): its list, detail, submit, approve, bulk approve and reject,
its revisions, and the audit log; thin views over ``audit.services``.

Permissions follow the roles: auditors (and admins) read discussions and runs and work on
their own feedback; admins do everything else. Anonymous requests get 401, users in no role
group 403. Every unsafe request is one transaction (see ``evalsite.api.ApiView``).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from audit.api.responses import CONFLICT, NOT_READY, ROLE_NOTE
from audit.api.serializers.feedback import (
    AuditLogEntryOutputSerializer,
    AuditLogFilterSerializer,
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
)
from audit.models import Discussion, Feedback
from audit.selectors.history import feedback_revisions
from audit.selectors.lists import feedback_list
from audit.services import (
    feedback_approve,
    feedback_reject,
    feedback_restore,
    feedback_save,
    feedback_start,
    feedback_submit,
)
from audit.services.audit_log import audit_log_list
from audit.services.feedback import feedback_bulk_approve
from evalsite.access import ADMIN_ONLY, IsAuditor
from evalsite.api import (
    ApiRequest,
    ApiView,
)
from metrics.families.payload.edits import mark_edited
from metrics.families.payload.schema import validate_pdp

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
