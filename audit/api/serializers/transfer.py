"""The ground-truth file (its OpenAPI schema), its export query and its import."""

from __future__ import annotations

import copy
import re
from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from audit.api.serializers.payloads import (
    MAX_EXPORT_IDS,
    MAX_TEXT,
    PAYLOAD_COMPONENT,
    RUN_REFERENCE,
    USERNAME_PATTERN,
    component_ref,
    nullable_ref,
)
from audit.api.serializers.runs import existing_run
from audit.models import (
    ExtractionRun,
    RunConfiguration,
    Speaker,
)
from audit.services.api_support import (
    MAX_EXTERNAL_ID,
    MAX_MODEL_NAME,
    MAX_ORDER,
    MAX_PROMPT_VERSION,
    MAX_SPEAKER,
)
from audit.services.imports import MAX_IMPORT_ID, MAX_USERNAME, ImportRun
from evalsite.api import (
    IdField,
    to_openapi30,
)
from metrics.families.payload.schema import (
    GROUND_TRUTH_EXPORT_SCHEMA,
)


def ground_truth_openapi() -> dict[str, Any]:
    """The export format as an OpenAPI 3.0 schema, with the limits the import enforces and the
    payloads as references to the shared component."""
    schema = to_openapi30(copy.deepcopy(GROUND_TRUTH_EXPORT_SCHEMA))
    schema.pop("title", None)  # a title names the generated class: the component's name does
    discussion = schema["properties"]["discussions"]["items"]
    fields = discussion["properties"]
    fields["external_id"].update(minLength=1, maxLength=MAX_EXTERNAL_ID)
    fields["id"].update(minimum=-MAX_IMPORT_ID, maximum=MAX_IMPORT_ID)
    fields["date"]["format"] = "date"
    statement = fields["statements"]["items"]["properties"]
    statement["order"].update(minimum=0, maximum=MAX_ORDER)
    statement["speaker"]["maxLength"] = MAX_SPEAKER
    statement["speaker_type"] = {
        "type": "string",
        "enum": [label for _, label in Speaker.Type.choices],
        "description": "Subject or Expert (an import accepts any case)",
    }
    statement["pdp_deltas"] = nullable_ref(PAYLOAD_COMPONENT, description="the AI extraction")
    statement["ground_truth"] = nullable_ref(
        PAYLOAD_COMPONENT, description=statement["ground_truth"]["description"]
    )
    statement["provisional_ground_truth"]["properties"]["pdp_deltas"] = nullable_ref(
        PAYLOAD_COMPONENT
    )
    statement["provisional_ground_truth"]["properties"]["run"] = component_ref(RUN_REFERENCE)
    statement["extraction_run"] = nullable_ref(RUN_REFERENCE)
    whole = fields["discussion_extraction"]
    whole["properties"] = {
        "extraction_run": component_ref(RUN_REFERENCE),
        "pdp": component_ref(PAYLOAD_COMPONENT),
    }
    whole["required"] = ["pdp"]
    approved = statement["approved_feedback"]["properties"]
    approved["edited_extraction"] = component_ref(PAYLOAD_COMPONENT)
    # Names the import may create as users: Django usernames (auditor_id/approved_by may be "").
    approved["auditor"].update(pattern=USERNAME_PATTERN, minLength=1, maxLength=MAX_USERNAME)
    for name in ("auditor_id", "approved_by"):
        approved[name].update(pattern=USERNAME_PATTERN, maxLength=MAX_USERNAME)
    approved["approved_at"]["format"] = "date-time"
    return schema


GROUND_TRUTH_OPENAPI = ground_truth_openapi()


class GroundTruthFileSerializer(serializers.Serializer):
    """Documentation only: the ground-truth export file (``GROUND_TRUTH_EXPORT_SCHEMA``)."""


class GroundTruthFileExtension(OpenApiSerializerExtension):
    target_class = GroundTruthFileSerializer

    def get_name(self, auto_schema, direction) -> str:
        return "GroundTruthFile"  # one component, what an export gives and an import takes

    def map_serializer(self, auto_schema, direction) -> dict[str, Any]:
        return copy.deepcopy(GROUND_TRUTH_OPENAPI)


# --- ground truth ------------------------------------------------------------------------------

_IDS = re.compile(r"^\s*\d{1,18}\s*(,\s*\d{1,18}\s*)*,?\s*$")


class GroundTruthExportQuerySerializer(serializers.Serializer):
    discussion_ids = serializers.CharField(
        required=False, help_text="comma-separated discussion ids, e.g. 30,31,32"
    )
    all = serializers.BooleanField(
        required=False, default=False, help_text="true: every discussion with approved GT"
    )
    run = IdField(help_text="extraction run whose pdp_deltas are exported (default: latest)")
    include_provisional = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: add each statement's provisional_ground_truth (what review triage "
        "accepted without review; never human ground truth)",
    )
    include_notes = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: add each approved coding's auditor note (`comment`) and its "
        "statement's comment thread (`comments`)",
    )
    include_f1 = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true (with `run`): add each statement's stored F1 figures for that run and "
        "its matched, missed and spurious items (`f1`)",
    )

    def validate_discussion_ids(self, value: str) -> list[int]:
        if not _IDS.match(value):
            raise serializers.ValidationError(
                f"expected comma-separated integer ids such as 30,31,32, got {value!r}"
            )
        ids = sorted({int(part) for part in value.split(",") if part.strip()})
        if len(ids) > MAX_EXPORT_IDS:
            raise serializers.ValidationError(
                f"at most {MAX_EXPORT_IDS} ids per request (use all=true for everything)"
            )
        return ids

    def validate_run(self, value: int) -> ExtractionRun:
        return existing_run(value)

    def validate(self, attrs: dict) -> dict:
        if not attrs.get("all") and not attrs.get("discussion_ids"):
            raise serializers.ValidationError(
                "Choose what to export: ?discussion_ids=30,31,32 or ?all=true."
            )
        if attrs.get("include_f1") and not attrs.get("run"):
            raise serializers.ValidationError(
                {"include_f1": "choose the run whose F1 figures are exported (run=ID)"}
            )
        return attrs


class ImportRunFieldsSerializer(serializers.Serializer):
    """Where a file's extractions go (the command's --run, --run-model, --run-prompt)."""

    run = serializers.IntegerField(
        required=False, min_value=1, max_value=2**63 - 1,
        help_text="an existing extraction run: the extractions the file gives no run of their own go there",
    )  # fmt: skip
    model_name = serializers.CharField(
        required=False, max_length=MAX_MODEL_NAME,
        help_text="the run (model and prompt version, created if new) of the extractions the "
        "file gives no run of their own; without either, the import makes a run of its own "
        "named after the file and the time (none when the file has no extraction)",
    )  # fmt: skip
    prompt_version = serializers.CharField(required=False, max_length=MAX_PROMPT_VERSION)
    unit = serializers.ChoiceField(
        choices=RunConfiguration.Unit.choices,
        required=False,
        help_text="with model_name: what one extraction of that run covers (default statement; "
        "discussion: the file's discussion_extraction PDPs go there)",
    )
    notes = serializers.CharField(
        required=False, max_length=MAX_TEXT, help_text="with model_name: the new replicate's notes"
    )
    external_id = serializers.CharField(
        required=False,
        min_length=1,
        max_length=MAX_EXTERNAL_ID,
        help_text="with model_name: your key for the new replicate (importing again with it "
        "adds to that run instead of registering another)",
    )

    def validate_run(self, value: int) -> ExtractionRun:
        return existing_run(value)

    def validate(self, attrs: dict) -> dict:
        if "run" in attrs and ("model_name" in attrs or "prompt_version" in attrs):
            raise serializers.ValidationError("give run, or model_name and prompt_version")
        if "prompt_version" in attrs and "model_name" not in attrs:
            raise serializers.ValidationError({"model_name": ["required with prompt_version"]})
        described = [key for key in ("unit", "notes", "external_id") if key in attrs]
        if described and "model_name" not in attrs:
            raise serializers.ValidationError({key: ["needs model_name"] for key in described})
        return attrs

    def import_run(self, source: str) -> ImportRun:
        data = self.validated_data
        return ImportRun(
            run=data.get("run"),
            model_name=data.get("model_name", ""),
            prompt_version=data.get("prompt_version", ""),
            source=source,
            unit=data.get("unit", ""),
            notes=data.get("notes", ""),
            external_id=data.get("external_id", ""),
        )


class GroundTruthImportUploadSerializer(ImportRunFieldsSerializer):
    file = serializers.FileField(
        help_text="the file (JSON, UTF-8): evalsite's export, one discussion as "
        '{"discussion", "statements"}, an admin export with speakers, or a list of cases '
        "(docs/api.md, Imports)"
    )


class ImportSummarySerializer(serializers.Serializer):
    discussions_created = serializers.IntegerField()
    discussions_existing = serializers.IntegerField()
    statements_created = serializers.IntegerField()
    extractions_created = serializers.IntegerField()
    approved_created = serializers.IntegerField()
    approved_kept = serializers.IntegerField(
        help_text="statements whose approved ground truth was kept (never overwritten)"
    )
    run = serializers.CharField(
        allow_null=True, help_text="the run the file's extractions went to (null: none)"
    )
    details = serializers.ListField(
        child=serializers.CharField(),
        help_text="the file's shape, warnings (one line per distinct one, with a count), what "
        "it holds that was not imported and the keys ignored",
    )
    message = serializers.CharField()
