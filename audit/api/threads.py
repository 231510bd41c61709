"""REST API v1 of the coding guidelines and the statements' comment threads.

Guidelines: everyone with a role reads every version; admins save a new one. Threads: each
user reads what ``audit.selectors.threads.comments_visible_to`` lets them (the blind rule, see
docs/coding-together.md); posting a comment, @mentions and read markers go through
``audit.services.comments``.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from audit.markdown import render_markdown
from audit.models import Comment, Feedback, GuidelineVersion, Notification, Statement
from audit.selectors.lists import guideline_versions
from audit.selectors.threads import (
    comments_unread_count,
    comments_unread_summary,
    comments_visible_to,
    notifications_list,
    threads_unread,
)
from audit.services.comments import MAX_COMMENT, comment_add, thread_mark_read
from audit.services.guidelines import MAX_GUIDELINES, MAX_NOTE, guideline_current, guideline_save
from evalsite.access import READ_ALL_WRITE_ADMIN, IsAuditor
from evalsite.api import (
    ApiRequest,
    ApiView,
    ErrorSerializer,
    ReferenceNotFound,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)

ROLES = "Roles: auditors, admins."

# --- guidelines ----------------------------------------------------------------------------------


class GuidelineVersionOutputSerializer(serializers.ModelSerializer):
    version = serializers.IntegerField(source="number", read_only=True)
    author_username = serializers.CharField(source="author.get_username", read_only=True)
    html = serializers.SerializerMethodField(
        help_text="the text rendered from Markdown and sanitised"
    )

    class Meta:
        model = GuidelineVersion
        fields = ["version", "text", "html", "note", "author", "author_username", "created_at"]

    def get_html(self, version: GuidelineVersion) -> str:
        return str(render_markdown(version.text))


class GuidelineSaveInputSerializer(StrictInputSerializer):
    text = StrictCharField(
        max_length=MAX_GUIDELINES, trim_whitespace=False, help_text="the guidelines, Markdown"
    )
    note = StrictCharField(
        required=False, default="", allow_blank=True, max_length=MAX_NOTE,
        help_text="what changed, in a line",
    )  # fmt: skip
    base_version = StrictIntegerField(
        required=False, min_value=0,
        help_text="the version you edited (0: none yet); 409 if another was saved since",
    )  # fmt: skip


class GuidelineListApi(ApiView):
    permission_classes = READ_ALL_WRITE_ADMIN

    @extend_schema(
        operation_id="guidelines_list",
        responses=GuidelineVersionOutputSerializer(many=True),
        description="Every saved version of the coding guidelines, newest first. " + ROLES,
    )
    def get(self, request: ApiRequest) -> Response:
        return self.paginated(guideline_versions(), GuidelineVersionOutputSerializer)

    @extend_schema(
        operation_id="guidelines_create",
        request=GuidelineSaveInputSerializer,
        responses={
            201: GuidelineVersionOutputSerializer,
            200: OpenApiResponse(
                GuidelineVersionOutputSerializer, description="the same text: nothing saved"
            ),
            409: OpenApiResponse(ErrorSerializer, description="another version was saved since"),
        },
        description="Save the guidelines as the next version (versions never change). The "
        "very text in force answers 200 with that version. Roles: admins.",
    )
    def post(self, request: ApiRequest) -> Response:
        serializer = GuidelineSaveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        version = guideline_save(
            text=data["text"],
            note=data["note"],
            admin=request.user,
            base_number=data.get("base_version"),
        )
        status = 201 if version.created else 200
        return Response(GuidelineVersionOutputSerializer(version).data, status=status)


class GuidelineCurrentApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="guidelines_current",
        responses={200: GuidelineVersionOutputSerializer, 404: ErrorSerializer},
        description="The version in force (the newest); 404 before the first. " + ROLES,
    )
    def get(self, request: ApiRequest) -> Response:
        current = guideline_current()
        if current is None:
            return Response({"detail": "No guidelines have been saved yet."}, status=404)
        return Response(GuidelineVersionOutputSerializer(current).data)


class GuidelineDetailApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="guidelines_retrieve",
        responses={200: GuidelineVersionOutputSerializer, 404: ErrorSerializer},
        description="One version of the guidelines by its number. " + ROLES,
    )
    def get(self, request: ApiRequest, number: int) -> Response:
        version = get_object_or_404(
            GuidelineVersion.objects.select_related("author"), number=number
        )
        return Response(GuidelineVersionOutputSerializer(version).data)


# --- comment threads -----------------------------------------------------------------------------


class CommentOutputSerializer(serializers.ModelSerializer):
    author_username = serializers.CharField(source="author.get_username", read_only=True)

    class Meta:
        model = Comment
        fields = ["id", "statement", "feedback", "author", "author_username", "kind", "body",
                  "created_at"]  # fmt: skip


class CommentCreatedSerializer(CommentOutputSerializer):
    notified = serializers.ListField(
        child=serializers.CharField(), read_only=True,
        help_text="usernames the comment's @mentions notified",
    )  # fmt: skip

    class Meta(CommentOutputSerializer.Meta):
        fields = [*CommentOutputSerializer.Meta.fields, "notified"]


class CommentCreateInputSerializer(StrictInputSerializer):
    body = StrictCharField(max_length=MAX_COMMENT, help_text="the comment; @username notifies")
    feedback = StrictIntegerField(
        required=False, allow_null=True,
        help_text="a coding of this statement the comment is about (then only its auditor and "
        "admins read it): admins any, auditors their own; null or absent: the whole statement",
    )  # fmt: skip


class ThreadReadSerializer(serializers.Serializer):
    statement = serializers.IntegerField()
    last_read = serializers.IntegerField(help_text="the newest comment id read (0: none)")
    unread = serializers.IntegerField(help_text="unread comments left in all threads")


def _statement(pk: int) -> Statement:
    return get_object_or_404(Statement, pk=pk)


class StatementCommentsApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="statement_comments_list",
        responses=CommentOutputSerializer(many=True),
        description="The statement's thread as you may read it, oldest first. Auditors read "
        "their own comments, comments about their own coding and admins' statement-wide "
        "comments; other auditors' statement-wide comments only once they have submitted a "
        "coding of the statement (blind rule). Reading does not mark the thread read: POST "
        "`read/`. " + ROLES,
    )
    def get(self, request: ApiRequest, pk: int) -> Response:
        statement = _statement(pk)
        comments = comments_visible_to(user=request.user, statement=statement).order_by("id")
        return self.paginated(comments, CommentOutputSerializer)

    @extend_schema(
        operation_id="statement_comments_create",
        request=CommentCreateInputSerializer,
        responses={201: CommentCreatedSerializer, 200: CommentCreatedSerializer},
        description="Add a comment to the statement's thread (a reply: the same, with "
        "`feedback` of your rejected coding). @username of an active auditor or admin who may "
        "read it notifies them. Logged in the audit log. The same body posted again by you "
        "about the same coding within 10 seconds (a double click, a retry) stores nothing: "
        "200 with the first comment (`notified` empty). " + ROLES,
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        statement = _statement(pk)
        serializer = CommentCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        feedback = None
        if data.get("feedback") is not None:
            feedback = (
                Feedback.objects.visible_to(request.user)
                .select_related("auditor")
                .filter(pk=data["feedback"])
                .first()
            )
            if feedback is None:
                raise ReferenceNotFound("feedback", f"no visible feedback {data['feedback']}")
        comment = comment_add(
            statement=statement, author=request.user, body=data["body"], feedback=feedback
        )
        status = 201 if comment.created else 200  # type: ignore[attr-defined]
        return Response(CommentCreatedSerializer(comment).data, status=status)


class StatementThreadReadApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="statement_comments_read",
        request=None,
        responses=ThreadReadSerializer,
        description="Mark the thread read as far as you may see it (and your mentions in it). "
        + ROLES,
    )
    def post(self, request: ApiRequest, pk: int) -> Response:
        statement = _statement(pk)
        last_read = thread_mark_read(statement=statement, user=request.user)
        unread = comments_unread_count(user=request.user)
        return Response({"statement": statement.pk, "last_read": last_read, "unread": unread})


class UnreadThreadSerializer(serializers.Serializer):
    statement = serializers.IntegerField(source="statement.pk")
    discussion = serializers.IntegerField(source="statement.discussion_id")
    unread = serializers.IntegerField()


class NotificationOutputSerializer(serializers.ModelSerializer):
    statement = serializers.IntegerField(source="comment.statement_id", read_only=True)
    author_username = serializers.CharField(source="comment.author.get_username", read_only=True)
    body = serializers.CharField(source="comment.body", read_only=True)

    class Meta:
        model = Notification
        fields = ["id", "comment", "statement", "author_username", "body", "read_at",
                  "created_at"]  # fmt: skip


class InboxSerializer(serializers.Serializer):
    unread = serializers.IntegerField(help_text="unread comments in all threads you may read")
    threads = UnreadThreadSerializer(many=True)
    notifications = NotificationOutputSerializer(many=True, help_text="newest 50 mentions")


class InboxApi(ApiView):
    permission_classes = [IsAuditor]

    @extend_schema(
        operation_id="inbox_retrieve",
        responses=InboxSerializer,
        description="Your unread comment count, the threads with unread comments and your "
        "newest mentions. " + ROLES,
    )
    def get(self, request: ApiRequest) -> Response:
        unread = comments_unread_summary(user=request.user)
        body = {
            "unread": unread.total,
            "threads": threads_unread(unread=unread),
            "notifications": notifications_list(user=request.user)[:50],
        }
        return Response(InboxSerializer(body).data)
