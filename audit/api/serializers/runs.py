"""Shapes of run configurations, extraction runs and their extractions."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.api.serializers.payloads import MAX_ITEMS, MAX_TEXT, PdpField
from audit.models import (
    ExtractionRun,
    RunConfiguration,
)
from audit.services.api_support import (
    MAX_EXTERNAL_ID,
    MAX_MODEL_NAME,
    MAX_PROMPT_VERSION,
)
from audit.services.runs import MAX_PROMPT_TEXT, PROMPT_HASH
from evalsite.api import (
    FilterTextField,
    IdField,
    ReferenceNotFound,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)


def existing_run(run_id: int, *, field: str = "run") -> ExtractionRun:
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        raise ReferenceNotFound(field, f"No extraction run {run_id}.")
    return run


# --- extraction runs and extractions -------------------------------------------------------------


PARAMETERS_OPENAPI = {
    "type": "object",
    "description": "free parameters of the configuration (temperature, top_p, seed...): each "
    "a text, a number, true/false or null; 1 and 1.0 are the same value",
    "additionalProperties": {
        "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}],
        "nullable": True,
    },
}


@extend_schema_field(PARAMETERS_OPENAPI)
class ParametersField(serializers.JSONField):
    """A configuration's parameters (checked by ``audit.services.runs.parameters_checked``)."""


class ConfigurationFilterSerializer(serializers.Serializer):
    model_name = FilterTextField(max_length=MAX_MODEL_NAME)
    prompt_version = FilterTextField(max_length=MAX_PROMPT_VERSION)
    unit = serializers.ChoiceField(choices=RunConfiguration.Unit.choices, required=False)


class ConfigurationOutputSerializer(serializers.ModelSerializer):
    """A configuration: what produces extractions. Its runs are its replicates."""

    label = serializers.CharField(read_only=True)  # type: ignore[assignment]  # the stubs take it for Field.label
    parameters = ParametersField()
    unit = serializers.ChoiceField(choices=RunConfiguration.Unit.choices)
    replicates = serializers.IntegerField(read_only=True, help_text="how many runs it has")

    class Meta:
        model = RunConfiguration
        fields = [
            "id",
            "label",
            "model_name",
            "prompt_version",
            "prompt_hash",
            "prompt_text",
            "parameters",
            "unit",
            "notes",
            "replicates",
            "created_at",
        ]


class ExtractionRunFilterSerializer(serializers.Serializer):
    model_name = FilterTextField(max_length=MAX_MODEL_NAME)
    prompt_version = FilterTextField(max_length=MAX_PROMPT_VERSION)
    configuration = IdField(help_text="only the replicates of this configuration")
    external_id = FilterTextField(max_length=MAX_EXTERNAL_ID)


class ExtractionRunOutputSerializer(serializers.ModelSerializer):
    """An extraction run: one replicate of its configuration."""

    label = serializers.CharField(read_only=True)  # type: ignore[assignment]  # the stubs take it for Field.label
    configuration = serializers.IntegerField(source="configuration_id", read_only=True)
    unit = serializers.ChoiceField(
        choices=RunConfiguration.Unit.choices,
        read_only=True,
        help_text="statement: one extraction per subject statement; discussion: one PDP per "
        "discussion",
    )

    class Meta:
        model = ExtractionRun
        fields = [
            "id",
            "configuration",
            "replicate",
            "external_id",
            "unit",
            "model_name",
            "prompt_version",
            "notes",
            "label",
            "created_at",
        ]


class ConfigurationDetailOutputSerializer(ConfigurationOutputSerializer):
    runs = ExtractionRunOutputSerializer(many=True, read_only=True, help_text="its replicates")

    class Meta(ConfigurationOutputSerializer.Meta):
        fields = [*ConfigurationOutputSerializer.Meta.fields, "runs"]


CONFIGURATION_FIELDS = ("model_name", "prompt_version", "prompt_text", "prompt_hash", "parameters")


class ExtractionRunInputSerializer(StrictInputSerializer):
    """A new replicate: of an existing ``configuration``, or of the configuration these fields
    describe (found, or created when new)."""

    configuration = StrictIntegerField(
        required=False,
        help_text="register a replicate of this configuration (leave its fields out)",
    )
    model_name = StrictCharField(required=False, min_length=1, max_length=MAX_MODEL_NAME)
    prompt_version = StrictCharField(required=False, min_length=1, max_length=MAX_PROMPT_VERSION)
    prompt_text = StrictCharField(
        required=False, allow_blank=True, max_length=MAX_PROMPT_TEXT, trim_whitespace=False
    )
    prompt_hash = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=64,
        validators=[RegexValidator(PROMPT_HASH, "expected 64 lowercase hex digits (SHA-256)")],
        help_text="SHA-256 (hex) of the prompt, when its text is not sent",
    )
    parameters = ParametersField(required=False)
    unit = serializers.ChoiceField(
        choices=RunConfiguration.Unit.choices,
        required=False,
        help_text="what one extraction covers (default: statement)",
    )
    configuration_notes = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=MAX_TEXT,
        help_text="stored with a new configuration; different notes for an existing one are a "
        "409 (change them on the configuration)",
    )
    notes = StrictCharField(
        required=False, allow_blank=True, max_length=MAX_TEXT, help_text="this replicate's"
    )
    external_id = StrictCharField(
        required=False,
        min_length=1,
        max_length=MAX_EXTERNAL_ID,
        help_text="your key for this run: registering it again answers the same run (200)",
    )

    def validate_configuration(self, value: int) -> RunConfiguration:
        configuration = RunConfiguration.objects.filter(pk=value).first()
        if configuration is None:
            raise ReferenceNotFound("configuration", f"No configuration {value}.")
        return configuration

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("configuration") is not None:
            given = [
                f for f in (*CONFIGURATION_FIELDS, "unit", "configuration_notes") if f in attrs
            ]
            if given:
                raise serializers.ValidationError(
                    {f: ["leave it out: the configuration says it"] for f in given}
                )
            return attrs
        missing = [f for f in ("model_name", "prompt_version") if not attrs.get(f)]
        if missing:
            raise serializers.ValidationError(
                {f: ["This field is required (or give a configuration)."] for f in missing}
            )
        return attrs


class ConfigurationUpdateInputSerializer(StrictInputSerializer):
    notes = StrictCharField(allow_blank=True, max_length=MAX_TEXT)


class ExtractionRunUpdateInputSerializer(StrictInputSerializer):
    notes = StrictCharField(allow_blank=True, max_length=MAX_TEXT)


class ExtractionFilterSerializer(serializers.Serializer):
    run = IdField()
    discussion = IdField()
    statement = IdField()


class ExtractionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    statement = serializers.IntegerField(source="statement_id")
    discussion = serializers.IntegerField(source="statement.discussion_id")
    run = serializers.IntegerField(source="run_id")
    pdp_deltas = PdpField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ExtractionItemInputSerializer(StrictInputSerializer):
    statement = StrictIntegerField(help_text="id of a subject statement")
    pdp_deltas = PdpField()


class ExtractionBulkInputSerializer(StrictInputSerializer):
    extractions = serializers.ListField(
        child=ExtractionItemInputSerializer(), min_length=1, max_length=MAX_ITEMS
    )


class ExtractionBulkOutputSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    count = serializers.IntegerField()
    extraction_ids = serializers.ListField(child=serializers.IntegerField())


class DiscussionExtractionItemInputSerializer(StrictInputSerializer):
    discussion = StrictIntegerField(help_text="id of the discussion")
    pdp = PdpField(help_text="the AI's PDP of the whole discussion")


class DiscussionExtractionBulkInputSerializer(StrictInputSerializer):
    extractions = serializers.ListField(
        child=DiscussionExtractionItemInputSerializer(), min_length=1, max_length=MAX_ITEMS
    )


class DiscussionExtractionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    discussion = serializers.IntegerField(source="discussion_id")
    run = serializers.IntegerField(source="run_id")
    pdp = PdpField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
