"""Shapes of codings (feedback), their review actions and revisions, and the audit log."""

from __future__ import annotations

from typing import TypedDict

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.api.serializers.payloads import MAX_TEXT, PdpField
from audit.api.serializers.runs import existing_run
from audit.models import (
    Adjudication,
    AuditLogEntry,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Statement,
)
from evalsite.api import (
    FilterTextField,
    IdField,
    ReferenceNotFound,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from metrics.families.payload.items import ENTITY_KINDS


class FeedbackFilterSerializer(serializers.Serializer):
    discussion = IdField()
    statement = IdField()
    status = serializers.ChoiceField(choices=Feedback.Status.choices, required=False)
    auditor = IdField(help_text="user id of the auditor")
    run = IdField(help_text="run of the extraction the feedback started from")


class AdjudicatedCredit(TypedDict):
    coders: list[str]
    unanimous_items: int
    adjudicated_items: int


class FeedbackOutputSerializer(serializers.ModelSerializer):
    discussion = serializers.IntegerField(source="statement.discussion_id", read_only=True)
    auditor_username = serializers.CharField(source="auditor.get_username", read_only=True)
    approved_by_username = serializers.SerializerMethodField()
    edited_extraction = PdpField()
    guideline_version = serializers.SerializerMethodField(
        help_text="the coding guidelines version in force when it was last submitted (null: "
        "never submitted, or imported)"
    )
    adjudicated = serializers.SerializerMethodField(
        help_text="For a coding produced by adjudication: {coders (usernames), unanimous_items, "
        "adjudicated_items}; null otherwise."
    )

    class Meta:
        model = Feedback
        fields = [
            "id",
            "statement",
            "discussion",
            "auditor",
            "auditor_username",
            "status",
            "version",
            "edited_extraction",
            "comment",
            "blind",
            "source_extraction",
            "rejection_reason",
            "guideline_version",
            "approved_by",
            "approved_by_username",
            "approved_at",
            "approval",
            "approval_reason",
            "proposed_extraction",
            "proposed_by",
            "adjudicated",
            "created_at",
            "updated_at",
        ]

    def get_adjudicated(self, feedback: Feedback) -> AdjudicatedCredit | None:
        try:
            adjudication = feedback.adjudication
        except Adjudication.DoesNotExist:
            return None
        return {
            "coders": sorted(user.get_username() for user in adjudication.coders.all()),
            "unanimous_items": adjudication.unanimous_items,
            "adjudicated_items": adjudication.adjudicated_items,
        }

    def get_approved_by_username(self, feedback: Feedback) -> str | None:
        return feedback.approved_by.get_username() if feedback.approved_by else None

    def get_guideline_version(self, feedback: Feedback) -> int | None:
        return feedback.guideline_version.number if feedback.guideline_version else None


class FeedbackStartInputSerializer(StrictInputSerializer):
    statement = StrictIntegerField(help_text="id of a subject statement")
    run = StrictIntegerField(
        required=False, help_text="start from this run's extraction (default: the latest run)"
    )

    def validate_statement(self, value: int) -> Statement:
        statement = Statement.objects.select_related("speaker").filter(pk=value).first()
        if statement is None:
            raise ReferenceNotFound("statement", f"No statement {value}.")
        return statement

    def validate_run(self, value: int) -> ExtractionRun:
        return existing_run(value)


class FeedbackSaveInputSerializer(StrictInputSerializer):
    version = StrictIntegerField(help_text="the version your edit is based on")
    edited_extraction = PdpField(help_text="the whole coded payload")
    comment = StrictCharField(required=False, allow_blank=True, max_length=MAX_TEXT)


class FeedbackActionInputSerializer(StrictInputSerializer):
    version = StrictIntegerField(
        required=False, help_text="refuse (409) if the feedback changed since this version"
    )


class FeedbackApproveInputSerializer(StrictInputSerializer):
    version = StrictIntegerField(
        min_value=1, help_text="the version you reviewed; 409 if the feedback changed since"
    )
    replace = StrictBooleanField(
        required=False,
        default=False,
        help_text="replace the statement's approved ground truth (otherwise 409 if there is one)",
    )
    self_approval_reason = StrictCharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=MAX_TEXT,
        help_text="only admin of the deployment approving their own change: why (logged)",
    )


class FeedbackBulkApproveItemSerializer(StrictInputSerializer):
    id = StrictIntegerField(min_value=1)
    version = StrictIntegerField(min_value=1)


class FeedbackBulkApproveInputSerializer(StrictInputSerializer):
    discussion = StrictIntegerField(min_value=1)
    auditor = StrictIntegerField(min_value=1)
    items = serializers.ListField(
        child=FeedbackBulkApproveItemSerializer(), min_length=1, max_length=5000
    )
    replace = StrictBooleanField(required=False, default=False)


class FeedbackRejectInputSerializer(FeedbackActionInputSerializer):
    reason = StrictCharField(min_length=1, max_length=MAX_TEXT)


class FieldChangeSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=[*ENTITY_KINDS, "delete"])
    item_id = serializers.JSONField(help_text="the item's id in the payload")
    item = serializers.CharField(help_text='readable, e.g. "Person John Smith (#-1)"')
    field = serializers.CharField()
    old = serializers.CharField(help_text='readable old value ("—" for none)')
    new = serializers.CharField(help_text='readable new value ("—" for none)')
    change = serializers.ChoiceField(choices=["added", "removed", "changed"])


class RevisionRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label
    action = serializers.CharField()


class FeedbackRevisionOutputSerializer(serializers.ModelSerializer):
    author_username = serializers.CharField(source="author.get_username", read_only=True)
    label = serializers.CharField(read_only=True, help_text='"v7", or "v3–v7" when folded')  # type: ignore[assignment]  # the stubs take it for Field.label
    first_version = serializers.IntegerField(source="first", read_only=True)
    restored_from = serializers.SerializerMethodField()
    is_current = serializers.BooleanField(read_only=True)
    summary = serializers.CharField(read_only=True)
    changes = serializers.SerializerMethodField()
    after = PdpField(read_only=True, help_text="the whole payload after this revision")

    class Meta:
        model = FeedbackRevision
        fields = [
            "id",
            "version",
            "first_version",
            "label",
            "saves",
            "action",
            "after_submit",
            "status",
            "author",
            "author_username",
            "created_at",
            "updated_at",
            "restored_from",
            "is_current",
            "summary",
            "changes",
            "after",
        ]

    @extend_schema_field(RevisionRefSerializer(allow_null=True))
    def get_restored_from(self, revision: FeedbackRevision) -> dict | None:
        source = revision.restored_from
        if source is None:
            return None
        return {
            "id": source.pk,
            "version": source.version,
            "label": source.label,
            "action": source.action,
        }

    @extend_schema_field(FieldChangeSerializer(many=True))
    def get_changes(self, revision: FeedbackRevision) -> list[dict]:
        return [change.as_dict() for change in revision.changes]


class FeedbackRestoreInputSerializer(StrictInputSerializer):
    version = StrictIntegerField(
        help_text="the feedback's current version; 409 if it changed since"
    )


# --- audit log ---------------------------------------------------------------------------------


class AuditLogFilterSerializer(serializers.Serializer):
    actor = IdField(help_text="user id: who")
    action = serializers.ChoiceField(required=False, choices=AuditLogEntry.Action.choices)
    object_type = FilterTextField(max_length=40, help_text="e.g. feedback")
    object_id = FilterTextField(max_length=64)
    since = serializers.DateField(required=False, help_text="from this day (inclusive)")
    until = serializers.DateField(required=False, help_text="to this day (inclusive)")

    def validate(self, attrs):
        if attrs.get("since") and attrs.get("until") and attrs["since"] > attrs["until"]:
            raise serializers.ValidationError({"until": "must not be before since"})
        return attrs


class AuditLogEntryOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditLogEntry
        fields = [
            "id",
            "created_at",
            "actor",
            "actor_name",
            "action",
            "object_type",
            "object_id",
            "message",
            "details",
        ]
