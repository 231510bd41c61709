"""Shapes of assignments, skips, the review stream and progress."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from audit.api.serializers.payloads import MAX_EXPORT_IDS, MAX_TEXT
from audit.models import (
    Assignment,
    Discussion,
)
from audit.services.api_support import (
    MAX_ORDER,
)
from audit.services.assignments import MAX_OVERLAP_K, AssignmentPlan, Strategy
from evalsite.api import (
    IdField,
    ReferenceNotFound,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)


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
