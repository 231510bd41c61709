"""Shapes of the evaluations API."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from evalsite.api import FilterTextField
from metrics.evaluations.registry import UPLOADS
from metrics.families.json_input import JsonInputError, parse_json
from metrics.models import Evaluation, EvaluationFile


class EvaluationFilterSerializer(serializers.Serializer):
    family = serializers.ChoiceField(choices=sorted(UPLOADS), required=False)
    status = serializers.ChoiceField(choices=Evaluation.Status.choices, required=False)
    q = FilterTextField(max_length=200, help_text="Name contains.")


class EvaluationCreateInputSerializer(serializers.Serializer):
    """The multipart form's text fields; every file field is named after its role."""

    family = serializers.ChoiceField(choices=sorted(UPLOADS))
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    options = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text='The options as a JSON object, e.g. {"loss": "abs", "seed": 42}.',
    )

    def validate_options(self, value: str) -> dict[str, Any]:
        if not value.strip():
            return {}
        try:
            options = parse_json(value)
        except JsonInputError as exc:
            raise serializers.ValidationError(str(exc)) from None
        if not isinstance(options, dict):
            raise serializers.ValidationError("expected a JSON object")
        return options


class EvaluationFileSerializer(serializers.ModelSerializer):
    name = serializers.CharField(source="original_name")

    class Meta:
        model = EvaluationFile
        fields = ["role", "name", "size"]


class EvaluationOutputSerializer(serializers.ModelSerializer):
    options = serializers.JSONField()
    files = EvaluationFileSerializer(many=True, read_only=True)
    uploaded_by = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    artifact_url = serializers.SerializerMethodField()

    class Meta:
        model = Evaluation
        fields = [
            "id",
            "family",
            "name",
            "options",
            "status",
            "error",
            "files",
            "uploaded_by",
            "created_at",
            "started_at",
            "finished_at",
            "paired_left",
            "paired_right",
            "url",
            "page_url",
            "artifact_url",
        ]

    def get_uploaded_by(self, evaluation: Evaluation) -> str | None:
        return evaluation.uploaded_by.get_username() if evaluation.uploaded_by else None

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path

    def get_url(self, evaluation: Evaluation) -> str:
        return self._absolute(reverse("api-evaluation", args=[evaluation.pk]))

    def get_page_url(self, evaluation: Evaluation) -> str:
        return self._absolute(reverse("metrics:evaluation_detail", args=[evaluation.pk]))

    def get_artifact_url(self, evaluation: Evaluation) -> str | None:
        if evaluation.status != Evaluation.Status.DONE:
            return None
        return self._absolute(reverse("metrics:evaluation_artifact", args=[evaluation.pk]))


class EvaluationDetailOutputSerializer(EvaluationOutputSerializer):
    artifact = serializers.JSONField(allow_null=True)

    class Meta(EvaluationOutputSerializer.Meta):
        fields = [*EvaluationOutputSerializer.Meta.fields, "artifact"]
