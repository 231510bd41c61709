"""REST API v1 of review triage: a run's settings, threshold and monitor; its triaged
statements with their provisional ground truth. Admins only: the QA sample must stay blind."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from audit.models import Extraction, ExtractionRun, TriageStatement
from audit.selectors.queues import triage_counts, triage_statements_list
from audit.services.triage import (
    BOUNDS,
    TriageChoice,
    triage_settings_get,
    triage_settings_update,
)
from evalsite.access import ADMIN_ONLY
from evalsite.api import ApiRequest, ApiView, StrictBooleanField, StrictInputSerializer
from metrics.models import MetricResult
from metrics.registry import TRIAGE
from metrics.results import run_key


class StrictFloatField(serializers.FloatField):
    default_error_messages = {"invalid": "A JSON number is required."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        value: float = super().to_internal_value(data)
        return value


def _bounded(field: str, help_text: str) -> StrictFloatField:
    low, high, low_ok = BOUNDS[field]
    text = f"{help_text} In {'[' if low_ok else '('}{low}, {high}]."
    return StrictFloatField(min_value=low, max_value=high, help_text=text)


class TriageSettingsInputSerializer(StrictInputSerializer):
    enabled = StrictBooleanField()
    alpha = _bounded("alpha", "Risk level: the share of unacceptable statements let through.")
    delta = _bounded("delta", "Probability that the bound fails.")
    acceptable_f1 = _bounded("acceptable_f1", "A statement is acceptable when its F1 >= this.")
    qa_rate = _bounded("qa_rate", "Share of accepted statements still coded (the QA sample).")
    lowest_first = StrictBooleanField(help_text="Order the remaining queue weakest AI first.")
    score = serializers.ChoiceField(
        choices=["raw", "calibrated"],
        required=False,
        default="raw",
        help_text="raw: weakest item confidence × agreement with the other run (default); "
        "calibrated: P(acceptable) from a logistic calibrator fitted on other discussions.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        low = {f for f, (lowest, _, low_ok) in BOUNDS.items() if not low_ok}
        for field in low & attrs.keys():
            if attrs[field] <= BOUNDS[field][0]:
                raise serializers.ValidationError({field: [f"must be above {BOUNDS[field][0]}"]})
        return attrs


class TriageOutputSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    state = serializers.ChoiceField(choices=["off", "active", "suspended"])
    settings = serializers.DictField(help_text="enabled, alpha, delta, acceptable_f1, ...")
    suspended_reason = serializers.CharField(allow_blank=True)
    result_status = serializers.CharField(allow_null=True, help_text="fresh, stale or failed")
    threshold = serializers.DictField(
        allow_null=True, help_text="threshold (tau, null: none), bound, risk, coverage, curve"
    )
    coverage_unreviewed = serializers.FloatField(allow_null=True)
    reviews_saved = serializers.DictField(help_text="statements, hours, seconds_per_statement")
    counts = serializers.DictField(help_text="n_provisional, n_qa, n_qa_approved")
    monitor = serializers.DictField(allow_null=True, help_text="e-values, tripped_at, history")


class TriageStatementSerializer(serializers.ModelSerializer):
    discussion = serializers.IntegerField(source="statement.discussion_id")
    provisional_ground_truth = serializers.SerializerMethodField(
        help_text="The AI's extraction, accepted without review (null unless provisional). "
        "Never human ground truth."
    )

    class Meta:
        model = TriageStatement
        fields = ["statement", "discussion", "confidence", "provisional", "qa",
                  "provisional_ground_truth", "updated_at"]  # fmt: skip

    def get_provisional_ground_truth(self, row: TriageStatement) -> dict | None:
        if not row.provisional:
            return None
        payloads = self.context.get("payloads") or {}
        payload: dict | None = payloads.get(row.statement_id)
        return payload


class TriageFilterSerializer(serializers.Serializer):
    provisional = serializers.BooleanField(required=False, allow_null=True, default=None)


def triage_body(run: ExtractionRun) -> dict[str, Any]:
    settings = triage_settings_get(run=run)
    row = MetricResult.objects.filter(key=run_key(TRIAGE, run.pk)).first()
    values = (row.values if row else None) or {}
    return {
        "run": run.pk,
        "state": settings.state,
        "settings": settings.chosen(),
        "suspended_reason": settings.suspended_reason,
        "result_status": row.status if row else None,
        "threshold": values.get("threshold"),
        "coverage_unreviewed": values.get("coverage_unreviewed"),
        "reviews_saved": {
            "statements": values.get("n_saved", 0),
            "hours": values.get("hours_saved", 0.0),
            "seconds_per_statement": values.get("seconds_per_statement"),
            "timing_source": values.get("timing_source"),
        },
        "counts": triage_counts(run_id=run.pk),
        "monitor": values.get("monitor"),
    }


class TriageApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="triage_retrieve",
        responses=TriageOutputSerializer,
        description=(
            "A run's review triage: settings, state (off, active, suspended and why), the "
            "stored threshold with its guaranteed bound and coverage, reviews saved, and the QA "
            "monitor with its history. Roles: admins."
        ),
    )
    def get(self, request: ApiRequest, run_id: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=run_id)
        return Response(triage_body(run))

    @extend_schema(
        operation_id="triage_update",
        request=TriageSettingsInputSerializer,
        responses=TriageOutputSerializer,
        description=(
            "Change a run's triage settings (every field required). Turning triage on, or on "
            "again after a suspension, restarts the QA monitor; turning it off sends every "
            "provisional statement back to the queue. The threshold is recomputed in the "
            "background. Roles: admins."
        ),
    )
    def put(self, request: ApiRequest, run_id: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=run_id)
        serializer = TriageSettingsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        triage_settings_update(
            run=run, admin=request.user, choice=TriageChoice(**serializer.validated_data)
        )
        return Response(triage_body(run))


class TriageStatementListApi(ApiView):
    permission_classes = ADMIN_ONLY

    @extend_schema(
        operation_id="triage_statements_list",
        parameters=[TriageFilterSerializer],
        responses=TriageStatementSerializer(many=True),
        description=(
            "A run's triaged statements (id order): confidence, whether AI accepted "
            "(provisional) or drawn for QA, and the provisional ground truth in its own field. "
            "`?provisional=true` lists only the AI-accepted ones. Roles: admins."
        ),
    )
    def get(self, request: ApiRequest, run_id: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=run_id)
        filters = self.query(TriageFilterSerializer)
        rows = triage_statements_list(run_id=run.pk, provisional=filters.get("provisional"))
        payloads = dict(
            Extraction.objects.filter(
                run=run, statement__triage__run=run, statement__triage__provisional=True
            ).values_list("statement_id", "pdp_deltas")
        )
        return self.paginated(rows, TriageStatementSerializer, payloads=payloads)
