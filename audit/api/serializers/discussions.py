"""Shapes of discussions and their statements."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.api.serializers.payloads import MAX_ITEMS, MAX_TEXT, PdpField
from audit.api.serializers.runs import existing_run
from audit.models import (
    Discussion,
    ExtractionRun,
    Speaker,
    Statement,
)
from audit.selectors.lists import discussion_statements
from audit.services.api_support import (
    MAX_EXTERNAL_ID,
    MAX_MODEL_NAME,
    MAX_ORDER,
    MAX_PROMPT_VERSION,
    MAX_SPEAKER,
)
from evalsite.api import (
    CaseInsensitiveChoiceField,
    FilterTextField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)


class DiscussionFilterSerializer(serializers.Serializer):
    external_id = FilterTextField(max_length=MAX_EXTERNAL_ID)
    has_approved = serializers.BooleanField(
        required=False, help_text="only discussions with (true) / without (false) approved GT"
    )


class StatementOutputSerializer(serializers.ModelSerializer):
    speaker = serializers.CharField(source="speaker.name")
    speaker_type = serializers.ChoiceField(source="speaker.type", choices=Speaker.Type.choices)

    class Meta:
        model = Statement
        fields = ["id", "order", "text", "speaker", "speaker_type"]


class DiscussionOutputSerializer(serializers.ModelSerializer):
    n_statements = serializers.IntegerField(read_only=True)
    n_approved = serializers.IntegerField(read_only=True, help_text="approved statements")

    class Meta:
        model = Discussion
        fields = [
            "id",
            "external_id",
            "summary",
            "date",
            "created_at",
            "updated_at",
            "n_statements",
            "n_approved",
        ]


class DiscussionDetailOutputSerializer(DiscussionOutputSerializer):
    statements = serializers.SerializerMethodField()

    class Meta(DiscussionOutputSerializer.Meta):
        fields = [*DiscussionOutputSerializer.Meta.fields, "statements"]

    @extend_schema_field(StatementOutputSerializer(many=True))
    def get_statements(self, discussion: Discussion) -> list[dict]:
        return list(
            StatementOutputSerializer(discussion_statements(discussion=discussion), many=True).data
        )


class DiscussionFieldsInputSerializer(StrictInputSerializer):
    summary = StrictCharField(allow_blank=True, max_length=MAX_TEXT)
    external_id = StrictCharField(
        required=False, allow_null=True, min_length=1, max_length=MAX_EXTERNAL_ID
    )
    date = serializers.DateField(required=False, allow_null=True)


class ExtractionRunRefSerializer(serializers.Serializer):
    model_name = StrictCharField(max_length=MAX_MODEL_NAME)
    prompt_version = StrictCharField(max_length=MAX_PROMPT_VERSION)


class StatementInputSerializer(StrictInputSerializer):
    text = StrictCharField(allow_blank=True, max_length=MAX_TEXT, trim_whitespace=False)
    speaker_type = CaseInsensitiveChoiceField(
        choices=Speaker.Type.choices, help_text="subject or expert (any case)"
    )
    speaker = StrictCharField(required=False, min_length=1, max_length=MAX_SPEAKER)
    order = StrictIntegerField(required=False, min_value=0, max_value=MAX_ORDER)
    pdp_deltas = PdpField(required=False, allow_null=True, help_text="the AI extraction")


class DiscussionCreateInputSerializer(StrictInputSerializer):
    discussion = DiscussionFieldsInputSerializer()
    statements = serializers.ListField(
        child=StatementInputSerializer(), max_length=MAX_ITEMS, allow_empty=True
    )
    run = StrictIntegerField(
        required=False, help_text="extraction run the statements' pdp_deltas belong to"
    )

    def validate_run(self, value: int) -> ExtractionRun:
        return existing_run(value)

    def import_payload(self) -> dict[str, Any]:
        """The validated request in the import format (``discussions_import``)."""
        data = self.validated_data
        fields = dict(data["discussion"])
        if fields.get("date") is not None:
            fields["date"] = fields["date"].isoformat()
        return {"discussion": fields, "statements": [dict(s) for s in data["statements"]]}


class DiscussionCreatedSerializer(DiscussionDetailOutputSerializer):
    created = serializers.SerializerMethodField()

    class Meta(DiscussionDetailOutputSerializer.Meta):
        fields = [*DiscussionDetailOutputSerializer.Meta.fields, "created"]

    def get_created(self, discussion: Discussion) -> bool:
        return bool(self.context.get("created"))
