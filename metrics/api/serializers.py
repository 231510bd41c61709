"""Shapes of the metrics API: stored metric results and background jobs."""

from __future__ import annotations

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from audit.api.serializers.runs import existing_run
from audit.models import LIVE_GROUND_TRUTH, ExtractionRun, RunConfiguration
from evalsite.api import (
    FilterTextField,
    IdField,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from metrics.api.value_schemas import metric_value_components, metric_values_schema
from metrics.engine.comparison import SIDE_PATTERN
from metrics.families.extraction.experiments import FIGURES
from metrics.families.extraction.patterns import PATTERN_REGEX
from metrics.models import MetricResult
from metrics.packets import MAX_STATEMENTS
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
    snapshot = IdField(
        help_text="results on this ground-truth snapshot (family extraction_snapshot)"
    )


class MetricResultOutputSerializer(serializers.ModelSerializer):
    values = MetricValuesField(allow_null=True)
    ground_truth = serializers.SerializerMethodField(
        help_text='what the figures were computed on: "on live ground truth" or "on GT v12"'
    )

    def get_ground_truth(self, result: MetricResult) -> str:
        snapshot = result.snapshot
        return snapshot.basis_label if snapshot else LIVE_GROUND_TRUTH

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
            "snapshot",
            "ground_truth",
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


# --- runs as experiments: figures on a ground truth, replicates ----------------------------------


class GroundTruthBasisSerializer(serializers.Serializer):
    """Which ground truth figures were computed on: live, or a frozen snapshot."""

    kind = serializers.ChoiceField(choices=[("live", "live"), ("snapshot", "snapshot")])
    snapshot = serializers.IntegerField(allow_null=True, help_text="the snapshot's id")
    name = serializers.CharField(allow_null=True, help_text="the snapshot's name")
    label = serializers.CharField(help_text='"on live ground truth" or "on GT v12"')  # type: ignore[assignment]  # the stubs take it for Field.label


def _figure_field(help_text: str = "") -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, help_text=help_text)


class ExtractionFiguresSerializer(serializers.Serializer):
    """The primary extraction-F1 figures (null: nothing to compute them from)."""

    aggregate_micro_f1 = _figure_field("F1 over people, events and pair bonds pooled")
    people_f1 = _figure_field()
    events_f1 = _figure_field()
    pair_bonds_f1 = _figure_field()
    symptom_macro_f1 = _figure_field("SARF: macro-F1 of the symptom codes of matched events")
    anxiety_macro_f1 = _figure_field()
    relationship_macro_f1 = _figure_field()
    functioning_macro_f1 = _figure_field()
    exact_match_rate = _figure_field("share of statements (discussions) matched exactly")


class RunFiguresSerializer(serializers.Serializer):
    """A run's figures on one ground truth, which they name."""

    run = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label
    configuration = serializers.IntegerField()
    replicate = serializers.IntegerField()
    notes = serializers.CharField()
    unit = serializers.ChoiceField(choices=RunConfiguration.Unit.choices)
    ground_truth = GroundTruthBasisSerializer()
    status = serializers.ChoiceField(
        choices=[*MetricResult.Status.choices, ("none", "No result")],
        help_text="fresh; stale (being computed: on a snapshot, for the first time); failed; "
        "none (nothing to score yet)",
    )
    computed_at = serializers.DateTimeField(allow_null=True)
    statement_figures_applicable = serializers.BooleanField(
        help_text="false for a discussion-unit run: it has no statement figures"
    )
    statement = ExtractionFiguresSerializer(
        allow_null=True, help_text="pooled over statements; null: not applicable or none yet"
    )
    cumulative = ExtractionFiguresSerializer(
        allow_null=True, help_text="pooled over discussions' accumulated extractions"
    )
    n_statements = serializers.IntegerField(allow_null=True)
    n_discussions = serializers.IntegerField(allow_null=True)
    n_left_out = serializers.IntegerField(
        allow_null=True,
        help_text="discussion-unit run: discussions it extracted not scored, being partly approved",
    )


class FigureSpreadSerializer(serializers.Serializer):
    """One figure over a configuration's replicates that have it."""

    n = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)
    sd = serializers.FloatField(allow_null=True, help_text="sample SD; null below 2 replicates")
    min = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)


class FigureSpreadsSerializer(serializers.Serializer):
    aggregate_micro_f1 = FigureSpreadSerializer()
    people_f1 = FigureSpreadSerializer()
    events_f1 = FigureSpreadSerializer()
    pair_bonds_f1 = FigureSpreadSerializer()
    symptom_macro_f1 = FigureSpreadSerializer()
    anxiety_macro_f1 = FigureSpreadSerializer()
    relationship_macro_f1 = FigureSpreadSerializer()
    functioning_macro_f1 = FigureSpreadSerializer()
    exact_match_rate = FigureSpreadSerializer()


class ConfigurationFiguresSerializer(serializers.Serializer):
    """A configuration's figures: each replicate's, and their mean and spread."""

    configuration = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label
    unit = serializers.ChoiceField(choices=RunConfiguration.Unit.choices)
    ground_truth = GroundTruthBasisSerializer()
    complete = serializers.BooleanField(help_text="every replicate's figures are current")
    replicates = RunFiguresSerializer(many=True)
    statement = FigureSpreadsSerializer(allow_null=True, help_text="null: not applicable")
    cumulative = FigureSpreadsSerializer()


class BasisQuerySerializer(serializers.Serializer):
    snapshot = IdField(help_text="a snapshot's id; left out: live ground truth")


class DiscussionPairSerializer(serializers.Serializer):
    discussion = serializers.IntegerField()
    left = serializers.FloatField(allow_null=True, help_text="the left run's cumulative F1")
    right = serializers.FloatField(allow_null=True)


class CumulativeComparisonSerializer(serializers.Serializer):
    """Two runs of any unit on what they share: cumulative F1 per discussion both were scored
    on, and pooled over those discussions."""

    left = serializers.IntegerField()
    right = serializers.IntegerField()
    ground_truth = GroundTruthBasisSerializer()
    n_shared = serializers.IntegerField()
    n_left_only = serializers.IntegerField()
    n_right_only = serializers.IntegerField()
    left_pooled = ExtractionFiguresSerializer(allow_null=True)
    right_pooled = ExtractionFiguresSerializer(allow_null=True)
    discussions = DiscussionPairSerializer(many=True)


class CumulativeComparisonQuerySerializer(BasisQuerySerializer):
    left = IdField(required=True, help_text="a run (either unit)")
    right = IdField(required=True, help_text="another run (either unit)")


# --- the comparison and its gate -------------------------------------------------------------

SIDE_HELP = "a run (r12, or 12) or a configuration with all its replicates (c3)"
LEVEL_CHOICES = [80, 90, 95, 99]
SIDE_VALIDATOR = RegexValidator(SIDE_PATTERN, message=f"expected {SIDE_HELP}")
FIGURE_LIST = "|".join(FIGURES)
FIGURES_PATTERN = rf"^({FIGURE_LIST})(,({FIGURE_LIST}))*\Z"


class ComparisonQuerySerializer(BasisQuerySerializer):
    baseline = serializers.RegexField(SIDE_PATTERN, trim_whitespace=False, help_text=SIDE_HELP)
    candidate = serializers.RegexField(SIDE_PATTERN, trim_whitespace=False, help_text=SIDE_HELP)
    level = serializers.ChoiceField(
        choices=LEVEL_CHOICES, required=False, help_text="confidence level in percent (95)"
    )
    figures = serializers.RegexField(
        FIGURES_PATTERN,
        required=False,
        trim_whitespace=False,
        help_text="the figures the gate checks, comma-separated (default: aggregate, or "
        "cumulative when a side is a whole-discussion run)",
    )


class ComparisonInputSerializer(StrictInputSerializer):
    baseline = StrictCharField(
        validators=[SIDE_VALIDATOR], trim_whitespace=False, help_text=SIDE_HELP
    )
    candidate = StrictCharField(
        validators=[SIDE_VALIDATOR], trim_whitespace=False, help_text=SIDE_HELP
    )
    snapshot = StrictIntegerField(
        required=False, min_value=1, help_text="a snapshot's id; left out: live ground truth"
    )
    level = serializers.ChoiceField(choices=LEVEL_CHOICES, required=False, default=95)
    figures = serializers.ListField(
        child=serializers.ChoiceField(choices=list(FIGURES)),
        required=False,
        max_length=len(FIGURES),
        help_text="the figures the gate checks (default: aggregate)",
    )


class ComparisonSideSerializer(serializers.Serializer):
    spec = serializers.CharField(help_text="r12 or c3")
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label
    unit = serializers.ChoiceField(choices=RunConfiguration.Unit.choices)
    runs = serializers.ListField(child=serializers.IntegerField(), help_text="its replicates")


class ComparisonFigureSerializer(serializers.Serializer):
    key = serializers.ChoiceField(choices=list(FIGURES))
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label
    applicable = serializers.BooleanField()
    baseline = serializers.FloatField(allow_null=True, help_text="mean over its replicates")
    baseline_replicates = serializers.ListField(child=serializers.FloatField(allow_null=True))
    candidate = serializers.FloatField(allow_null=True)
    candidate_replicates = serializers.ListField(child=serializers.FloatField(allow_null=True))
    delta = serializers.FloatField(allow_null=True, help_text="candidate − baseline")
    low = serializers.FloatField(allow_null=True, help_text="the interval at `level`")
    high = serializers.FloatField(allow_null=True)
    verdict = serializers.ChoiceField(choices=["better", "worse", "within noise", "not applicable"])


class ComparisonGateSerializer(serializers.Serializer):
    gated = serializers.ListField(child=serializers.ChoiceField(choices=list(FIGURES)))
    worse = serializers.ListField(
        child=serializers.ChoiceField(choices=list(FIGURES)),
        help_text="the gated figures worse beyond noise",
    )
    passed = serializers.BooleanField(help_text="no gated figure is worse beyond noise")


class ComparisonSerializer(serializers.Serializer):
    """Baseline vs candidate: every figure with its interval and verdict at ``level``, and the
    gate's answer. Computed by a worker: poll ``url`` while ``status`` is ``updating``."""

    status = serializers.ChoiceField(
        choices=["fresh", "updating", "failed"],
        help_text="fresh: current; updating: being computed (the figures, if any, are the last "
        "ones stored); failed: see error (tried again when the runs' results change)",
    )
    error = serializers.CharField(allow_blank=True)
    url = serializers.URLField(help_text="this comparison: poll it while updating")
    baseline = ComparisonSideSerializer()
    candidate = ComparisonSideSerializer()
    ground_truth = serializers.CharField(help_text='"on live ground truth" or "on GT v12"')
    snapshot = serializers.IntegerField(allow_null=True)
    level = serializers.FloatField(help_text="0.95")
    method = serializers.CharField(
        allow_null=True, help_text="discussions and replicates, or discussions only"
    )
    n_statements = serializers.IntegerField(allow_null=True)
    n_discussions = serializers.IntegerField(allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True)
    figures = ComparisonFigureSerializer(many=True)
    gate = ComparisonGateSerializer(
        allow_null=True, help_text="null until the comparison is current (status fresh)"
    )


# --- failure packets ----------------------------------------------------------------------------


class FailurePacketQuerySerializer(serializers.Serializer):
    side = serializers.RegexField(SIDE_PATTERN, trim_whitespace=False, help_text=SIDE_HELP)
    pattern = serializers.RegexField(
        PATTERN_REGEX,
        max_length=74,
        trim_whitespace=False,
        help_text="people_fn, events_fp, pair_bonds_fn (…_fn missed, …_fp spurious), "
        "events_fn:<kind>, sarf_high:<variable>, sarf_low:<variable>, sarf_wrong:<variable>, "
        "parent_links",
    )
    n = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_STATEMENTS, help_text="statements listed (20)"
    )


class PacketPatternSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label


class PacketSideSerializer(serializers.Serializer):
    spec = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label


class PacketRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # the stubs take it for Field.label
    replicate = serializers.IntegerField()


class PacketCountsSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="how often the pattern happens")
    statements = serializers.IntegerField(help_text="in how many statements")
    discussions = serializers.IntegerField()
    total_errors = serializers.IntegerField(
        help_text="missed and spurious items and wrong SARF codes, all patterns"
    )
    share_of_errors = serializers.FloatField(allow_null=True)
    per_run = serializers.DictField(child=serializers.IntegerField(), help_text="by run id")


class FailurePacketSerializer(serializers.Serializer):
    """One error pattern of a run or a configuration, with the statements where it happens
    most (docs/prompt-loop.md)."""

    format_version = serializers.IntegerField()
    pattern = PacketPatternSerializer()
    side = PacketSideSerializer()
    runs = PacketRunSerializer(many=True)
    ground_truth = serializers.CharField()
    updating = serializers.BooleanField(help_text="the counts are the last stored ones")
    counts = PacketCountsSerializer()
    summary = serializers.CharField(help_text="the pattern and its counts in one line")
    limits = serializers.DictField(child=serializers.IntegerField())
    guidelines = serializers.DictField(allow_null=True, help_text="version and sections")
    statements = serializers.ListField(
        child=serializers.DictField(),
        help_text="each: text, the statements before it, ai_items and gt_items side by side, "
        "pairs, coding (auditor, note, guidelines version), comments, url",
    )
    truncated = serializers.CharField(allow_blank=True)
