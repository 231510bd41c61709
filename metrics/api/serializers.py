"""Shapes of the metrics API: stored metric results and background jobs."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.api.serializers import existing_run
from audit.models import ExtractionRun
from evalsite.api import (
    FilterTextField,
    IdField,
    StrictBooleanField,
    StrictInputSerializer,
    StrictIntegerField,
)
from metrics.api.value_schemas import metric_value_components, metric_values_schema
from metrics.models import MetricResult
from metrics.registry import EXTRACTION, RECOMPUTE_JOB


def add_metric_value_components(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: register the components a result's ``values`` refer to."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(metric_value_components())
    return result


@extend_schema_field(metric_values_schema())
class MetricValuesField(serializers.JSONField):
    """A result's figures: typed per family and scope in the schema."""


class MetricResultFilterSerializer(serializers.Serializer):
    family = FilterTextField(max_length=40, help_text="e.g. extraction")
    scope = serializers.ChoiceField(choices=MetricResult.Scope.choices, required=False)
    status = serializers.ChoiceField(choices=MetricResult.Status.choices, required=False)
    run = IdField()
    discussion = IdField()
    statement = IdField()


class MetricResultOutputSerializer(serializers.ModelSerializer):
    values = MetricValuesField(allow_null=True)
    contribution = serializers.JSONField(allow_null=True)
    match_settings = serializers.JSONField()

    class Meta:
        model = MetricResult
        fields = [
            "id",
            "key",
            "family",
            "scope",
            "run",
            "discussion",
            "statement",
            "status",
            "values",
            "contribution",
            "match_settings",
            "code_version",
            "input_hash",
            "error",
            "computed_at",
            "stale_since",
        ]


class RecomputeInputSerializer(StrictInputSerializer):
    family = serializers.ChoiceField(
        choices=list(RECOMPUTE_JOB), required=False, default=EXTRACTION
    )
    run = StrictIntegerField(required=False, help_text="only this extraction run")
    stale_only = StrictBooleanField(required=False, default=False)

    def validate_run(self, value: int) -> ExtractionRun:
        return existing_run(value)
