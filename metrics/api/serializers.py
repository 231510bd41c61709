"""Shapes of the metrics API: stored metric results and background jobs."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.api.serializers import ImportSummarySerializer, existing_run
from audit.models import ExtractionRun
from evalsite.api import (
    FilterTextField,
    IdField,
    StrictBooleanField,
    StrictInputSerializer,
    StrictIntegerField,
)
from metrics.api.value_schemas import metric_value_components, metric_values_schema
from metrics.models import ComputeJob, MetricResult
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


class JobFilterSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ComputeJob.Kind.choices, required=False)
    status = serializers.ChoiceField(choices=ComputeJob.Status.choices, required=False)


class JobOutputSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    elapsed_seconds = serializers.FloatField(read_only=True, allow_null=True)
    eta_seconds = serializers.FloatField(read_only=True, allow_null=True)
    url = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField()
    result = serializers.SerializerMethodField(
        help_text="An import job's summary once done (null otherwise)."
    )

    class Meta:
        model = ComputeJob
        fields = [
            "id",
            "kind",
            "status",
            "done",
            "total",
            "percent",
            "result",
            "error",
            "attempt",
            "heartbeat_at",
            "cancel_requested",
            "created_at",
            "started_at",
            "finished_at",
            "elapsed_seconds",
            "eta_seconds",
            "url",
            "download_url",
        ]

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_url(self, job: ComputeJob) -> str:
        return self._absolute(reverse("api-job-detail", args=[job.pk]))

    @extend_schema_field(ImportSummarySerializer(allow_null=True))
    def get_result(self, job: ComputeJob) -> dict | None:
        return (job.params or {}).get("result") if job.kind == ComputeJob.Kind.IMPORT else None

    def get_download_url(self, job: ComputeJob) -> str | None:
        if job.status != ComputeJob.Status.DONE or not job.result_file:
            return None
        return self._absolute(reverse("api-job-download", args=[job.pk]))


class RecomputeInputSerializer(StrictInputSerializer):
    family = serializers.ChoiceField(
        choices=list(RECOMPUTE_JOB), required=False, default=EXTRACTION
    )
    run = StrictIntegerField(required=False, help_text="only this extraction run")
    stale_only = StrictBooleanField(required=False, default=False)

    def validate_run(self, value: int) -> ExtractionRun:
        return existing_run(value)
