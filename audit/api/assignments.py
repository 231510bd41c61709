"""REST API v1 of assignments, skips, the review stream and the progress figures."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from audit.api.responses import ROLE_NOTE
from audit.api.serializers.assignments import (
    AssignmentCreatedSerializer,
    AssignmentCreateInputSerializer,
    AssignmentFilterSerializer,
    AssignmentOutputSerializer,
    AssignmentReassignInputSerializer,
    NextStatementSerializer,
    ProgressSerializer,
    ReviewNextQuerySerializer,
    ReviewNextSerializer,
    SkipInputSerializer,
)
from audit.models import Assignment, Statement
from audit.selectors.progress import team_progress
from audit.selectors.stream import (
    assignments_list,
    review_stream_next,
    review_waiting_count,
    review_waiting_feedback,
)
from audit.services.assignments import (
    assignment_next,
    assignment_reassign,
    assignments_create,
    assignments_unassign,
    statement_skip,
)
from evalsite.access import ADMIN_ONLY, READ_ALL_WRITE_ADMIN, IsAuditor
from evalsite.api import (
    ApiRequest,
    ApiView,
    ReferenceNotFound,
)

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
