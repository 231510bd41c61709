"""Shapes of the audit API: input serializers validate shape only, services do the work."""

from __future__ import annotations

import copy
import re
from typing import Any, TypedDict

from django.contrib.auth import get_user_model
from django.core.validators import RegexValidator
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.models import (
    Adjudication,
    Assignment,
    AuditLogEntry,
    Discussion,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    GroundTruthSnapshot,
    RunConfiguration,
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
from audit.services.assignments import MAX_OVERLAP_K, AssignmentPlan, Strategy
from audit.services.imports import MAX_IMPORT_ID, MAX_USERNAME, ImportRun
from audit.services.runs import MAX_PROMPT_TEXT, PROMPT_HASH
from evalsite.api import (
    CaseInsensitiveChoiceField,
    FilterTextField,
    IdField,
    ReferenceNotFound,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
    to_openapi30,
)
from metrics.families.payload.rules import ENTITY_KINDS
from metrics.families.payload.schema import (
    GROUND_TRUTH_EXPORT_SCHEMA,
    PDP_SCHEMA,
    RUN_REFERENCE_SCHEMA,
)

MAX_ITEMS = 10_000
MAX_EXPORT_IDS = 1000
MAX_TEXT = 100_000

USERNAME_PATTERN = r"^[\w.@+-]*$"

# The extraction payload is one component, its items three more, referred to ($ref) wherever a
# payload is read or written: an AI extraction read is a draft that can be sent back as it is.
PAYLOAD_COMPONENT = "PdpDeltas"
ITEM_COMPONENTS = {"people": "PdpPerson", "events": "PdpEvent", "pair_bonds": "PdpPairBond"}
RUN_REFERENCE = "RunReference"  # how a file names an extraction run


def _component_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable_ref(name: str, **meta: Any) -> dict[str, Any]:
    return {"allOf": [_component_ref(name)], "nullable": True, **meta}


def payload_components() -> dict[str, dict[str, Any]]:
    """``PDP_SCHEMA`` as OpenAPI components: the payload, and each item kind by reference."""
    payload = to_openapi30(copy.deepcopy(PDP_SCHEMA))
    payload.pop("title", None)
    payload["description"] = (
        "An extraction (PDP deltas): people, events and pair bonds the statement adds or "
        "changes, and ids it deletes. The AI's extraction and a coding share this shape."
    )
    components = {PAYLOAD_COMPONENT: payload}
    for kind, name in ITEM_COMPONENTS.items():
        components[name] = payload["properties"][kind]["items"]
        payload["properties"][kind]["items"] = _component_ref(name)
    components[RUN_REFERENCE] = to_openapi30(copy.deepcopy(RUN_REFERENCE_SCHEMA))
    return components


def add_payload_components(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: register the payload components the fields refer to."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(payload_components())
    return result


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
    statement["pdp_deltas"] = _nullable_ref(PAYLOAD_COMPONENT, description="the AI extraction")
    statement["ground_truth"] = _nullable_ref(
        PAYLOAD_COMPONENT, description=statement["ground_truth"]["description"]
    )
    statement["provisional_ground_truth"]["properties"]["pdp_deltas"] = _nullable_ref(
        PAYLOAD_COMPONENT
    )
    statement["provisional_ground_truth"]["properties"]["run"] = _component_ref(RUN_REFERENCE)
    statement["extraction_run"] = _nullable_ref(RUN_REFERENCE)
    whole = fields["discussion_extraction"]
    whole["properties"] = {
        "extraction_run": _component_ref(RUN_REFERENCE),
        "pdp": _component_ref(PAYLOAD_COMPONENT),
    }
    whole["required"] = ["pdp"]
    approved = statement["approved_feedback"]["properties"]
    approved["edited_extraction"] = _component_ref(PAYLOAD_COMPONENT)
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


def existing_run(run_id: int, *, field: str = "run") -> ExtractionRun:
    run = ExtractionRun.objects.filter(pk=run_id).first()
    if run is None:
        raise ReferenceNotFound(field, f"No extraction run {run_id}.")
    return run


@extend_schema_field(_component_ref(PAYLOAD_COMPONENT))
class PdpField(serializers.JSONField):
    """A PDP-deltas payload (validated by ``metrics.families.payload.schema.validate_pdp`` in the services)."""


# --- discussions -------------------------------------------------------------------------------


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


# --- feedback ----------------------------------------------------------------------------------


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


# --- assignments, skips, the review stream, progress ------------------------------------------------


class AssignmentOutputSerializer(serializers.ModelSerializer):
    discussion = serializers.IntegerField(source="statement.discussion_id", read_only=True)
    order = serializers.IntegerField(source="statement.order", read_only=True)
    auditor_username = serializers.CharField(source="auditor.get_username", read_only=True)
    assigned_by_username = serializers.CharField(source="assigned_by.get_username", read_only=True)

    class Meta:
        model = Assignment
        fields = [
            "id",
            "statement",
            "discussion",
            "order",
            "auditor",
            "auditor_username",
            "assigned_by_username",
            "status",
            "overlap",
            "due",
            "skip_reason",
            "skip_note",
            "created_at",
            "released_at",
        ]


class AssignmentFilterSerializer(serializers.Serializer):
    auditor = IdField(help_text="user id of the auditor (auditors see only their own)")
    discussion = IdField()
    statement = IdField()
    status = serializers.ChoiceField(choices=Assignment.Status.choices, required=False)


def _existing(model, pk: int, field: str, what: str):
    found = model.objects.filter(pk=pk).first()
    if found is None:
        raise ReferenceNotFound(field, f"No {what} {pk}.")
    return found


class AssignmentCreateInputSerializer(StrictInputSerializer):
    discussions = serializers.ListField(
        child=StrictIntegerField(), min_length=1, max_length=MAX_EXPORT_IDS,
        help_text="ids of the discussions whose unassigned subject statements to assign",
    )  # fmt: skip
    auditors = serializers.ListField(
        child=StrictIntegerField(), min_length=1, max_length=100, help_text="user ids of auditors"
    )
    strategy = serializers.ChoiceField(choices=Strategy.CHOICES, default=Strategy.ROUND_ROBIN)
    first_order = StrictIntegerField(
        required=False, max_value=MAX_ORDER, help_text="range start (one discussion only)"
    )
    last_order = StrictIntegerField(
        required=False, max_value=MAX_ORDER, help_text="range end, inclusive (one discussion only)"
    )
    overlap_percent = StrictIntegerField(
        required=False, default=0, min_value=0, max_value=100,
        help_text="share of the statements coded by `overlap_k` auditors (the overlap sample)",
    )  # fmt: skip
    overlap_k = StrictIntegerField(required=False, default=2, min_value=2, max_value=MAX_OVERLAP_K)
    blind = StrictBooleanField(
        required=False, default=False, help_text="the overlap sample is coded blind"
    )
    due = serializers.DateField(required=False, allow_null=True)
    seed = StrictIntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)

    def validate_discussions(self, value: list[int]) -> list[Discussion]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("each discussion once")
        return [_existing(Discussion, pk, "discussions", "discussion") for pk in value]

    def validate_auditors(self, value: list[int]) -> list[Any]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("each auditor once")
        return [_existing(get_user_model(), pk, "auditors", "user") for pk in value]

    def plan(self) -> AssignmentPlan:
        data = self.validated_data
        return AssignmentPlan(
            discussions=data["discussions"],
            auditors=data["auditors"],
            strategy=data["strategy"],
            first_order=data.get("first_order"),
            last_order=data.get("last_order"),
            overlap_share=data["overlap_percent"] / 100,
            overlap_k=data["overlap_k"],
            blind=data["blind"],
            due=data.get("due"),
            seed=data["seed"],
        )


class AssignmentCreatedSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    overlap_statements = serializers.ListField(child=serializers.IntegerField())
    assignments = AssignmentOutputSerializer(many=True)


class AssignmentReassignInputSerializer(StrictInputSerializer):
    auditor = StrictIntegerField(help_text="user id of the auditor who takes it over")

    def validate_auditor(self, value: int) -> Any:
        return _existing(get_user_model(), value, "auditor", "user")


class SkipInputSerializer(StrictInputSerializer):
    reason = serializers.ChoiceField(choices=Assignment.SkipReason.choices)
    note = StrictCharField(
        required=False, default="", allow_blank=True, max_length=MAX_TEXT,
        help_text="what is unclear; required when the reason is `other`",
    )  # fmt: skip


class NextStatementSerializer(serializers.Serializer):
    statement = serializers.IntegerField(allow_null=True)
    discussion = serializers.IntegerField(allow_null=True)
    order = serializers.IntegerField(allow_null=True)


class ReviewNextQuerySerializer(serializers.Serializer):
    after = IdField(help_text="a statement id: the next item after it (default: the first)")


class ReviewNextSerializer(NextStatementSerializer):
    waiting = serializers.IntegerField(help_text="items waiting for review in all")
    feedback = serializers.ListField(
        child=serializers.IntegerField(), help_text="ids of the feedback waiting on it"
    )


class ProgressRowSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="user id or discussion id")
    label = serializers.CharField(  # type: ignore[assignment]  # a field named like DRF's attribute
        help_text="username or discussion summary"
    )
    assigned = serializers.IntegerField()
    coded = serializers.IntegerField()
    submitted = serializers.IntegerField()
    approved = serializers.IntegerField()
    rejected = serializers.IntegerField()
    skipped = serializers.IntegerField()
    active_minutes = serializers.FloatField()
    median_minutes = serializers.FloatField(allow_null=True)
    per_day = serializers.FloatField(allow_null=True)
    agreement_gt = serializers.FloatField(allow_null=True)
    agreement_coders = serializers.FloatField(allow_null=True)


class ProgressSerializer(serializers.Serializer):
    auditors = ProgressRowSerializer(many=True)
    discussions = ProgressRowSerializer(many=True, help_text="admins only; empty for auditors")


# --- ground-truth snapshots ----------------------------------------------------------------------


class SnapshotItemCountsSerializer(serializers.Serializer):
    people = serializers.IntegerField()
    events = serializers.IntegerField()
    pair_bonds = serializers.IntegerField()


class SnapshotOutputSerializer(serializers.ModelSerializer):
    """Approved ground truth frozen under a name: who froze it, when, why, and what it holds."""

    created_by = serializers.CharField(source="created_by_name", read_only=True)
    items = SnapshotItemCountsSerializer(read_only=True, help_text="approved items by kind")
    basis_label = serializers.CharField(
        read_only=True, help_text='what figures on it say beside them: "on GT v12"'
    )

    class Meta:
        model = GroundTruthSnapshot
        fields = [
            "id",
            "name",
            "note",
            "created_by",
            "created_at",
            "discussions",
            "complete_discussions",
            "codings",
            "items",
            "export_sha256",
            "export_size",
            "basis_label",
        ]
        extra_kwargs = {
            "discussions": {"help_text": "discussions with approved ground truth"},
            "complete_discussions": {
                "help_text": "of those, the ones whose every subject statement is approved: what "
                "discussion-unit runs are scored on"
            },
            "codings": {"help_text": "approved codings"},
            "export_sha256": {"help_text": "SHA-256 of the export file, the same forever"},
        }


class SnapshotCreateInputSerializer(StrictInputSerializer):
    name = StrictCharField(max_length=100, help_text='unique, e.g. "GT v12"')
    note = StrictCharField(required=False, allow_blank=True, max_length=10_000, default="")


class SnapshotDeleteQuerySerializer(serializers.Serializer):
    reason = serializers.CharField(
        required=False, max_length=10_000, trim_whitespace=False, help_text="logged with the act"
    )
