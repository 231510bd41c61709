"""Stored metric results and imported evaluation runs (background jobs: audit.models).

Pages read these rows; Celery tasks write them. Nothing here computes a metric.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, FloatField, IntegerField, Q
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

# The background-job record belongs to the ground floor (audit runs export/import jobs with it);
# re-exported for metrics' own recompute jobs.
from audit.models import ComputeJob as ComputeJob
from evalsite.fields import RowJSONField as RowJSONField  # migrations 0005/0006 name it here
from evalsite.indexes import NullsLastIndex as BaseNullsLastIndex

# The per-discussion table's sort columns: figures of a discussion row's values, by the name
# the page sorts on (``metrics.selectors.discussion_rows``).
DISCUSSION_SORT_FIGURES: dict[str, tuple[str, type[models.Field]]] = {
    "statements": ("statement_count", IntegerField),
    "f1": ("aggregate_micro_f1", FloatField),
    "people": ("people_f1", FloatField),
    "events": ("events_f1", FloatField),
    "pair_bonds": ("pair_bonds_f1", FloatField),
}
# The rows that table lists: a run's per-discussion extraction results.
DISCUSSION_ROWS = Q(family="extraction", scope="discussion")


def values_figure(key: str, field: type[models.Field]) -> Cast:
    """One figure of a result's stored values, typed: the sort key the indexes below hold."""
    return Cast(KT(f"values__{key}"), field())


class NullsLastIndex(BaseNullsLastIndex):
    """Kept under this name: migration 0007 refers to ``metrics.models.NullsLastIndex``."""


def _discussion_sort_indexes() -> list[models.Index]:
    """One index per sort column and direction over a run's discussion rows (in the order the
    page asks: missing figures last, then by discussion), so a page of the table is read in
    index order instead of sorting every discussion of the run."""
    indexes = [
        models.Index(
            fields=["run", "discussion"], condition=DISCUSSION_ROWS, name="metrics_disc_by_id"
        )
    ]
    for name, (key, field) in DISCUSSION_SORT_FIGURES.items():
        figure = values_figure(key, field)
        for suffix, order in (
            ("a", figure.asc(nulls_last=True)),
            ("d", figure.desc(nulls_last=True)),
        ):
            indexes.append(
                NullsLastIndex(
                    F("run"),
                    order,
                    F("discussion"),
                    condition=DISCUSSION_ROWS,
                    name=f"metrics_disc_{name}_{suffix}",
                )
            )
    return indexes


class MetricResult(models.Model):
    """One computed metric value set: a family, at a scope, for an extraction run."""

    class Scope(models.TextChoices):
        STATEMENT = "statement", "Statement"
        DISCUSSION = "discussion", "Discussion"
        RUN = "run", "Extraction run"
        SYSTEM = "system", "System"

    class Status(models.TextChoices):
        FRESH = "fresh", "Fresh"
        STALE = "stale", "Stale"
        FAILED = "failed", "Failed"

    # Unique by a constraint (below), not `unique=True`: that would add a second index on the
    # key for LIKE queries (none are made), written with every row. `family` has no index of
    # its own: the first index below starts with it.
    key = models.CharField(max_length=200)
    family = models.CharField(max_length=40)
    scope = models.CharField(max_length=12, choices=Scope.choices)
    run = models.ForeignKey(
        "audit.ExtractionRun",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="metric_results",
    )
    discussion = models.ForeignKey(
        "audit.Discussion",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="metric_results",
    )
    statement = models.ForeignKey(
        "audit.Statement",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="metric_results",
    )
    # The frozen ground truth the figures were computed on; null: live ground truth.
    snapshot = models.ForeignKey(
        "audit.GroundTruthSnapshot",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    match_settings = models.JSONField(default=dict)
    code_version = models.CharField(max_length=40, blank=True)
    input_hash = models.CharField(max_length=64, blank=True)
    values = RowJSONField(null=True, blank=True)
    # Additive totals this result contributes to its run's system figures.
    contribution = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.STALE)
    error = models.TextField(blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    stale_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key"], name="metrics_result_key")]
        indexes = [
            models.Index(fields=["family", "scope", "run", "status"]),
            models.Index(fields=["status", "stale_since"]),
            # "Has this run a stale row?" after every approval's results: a run with none
            # answers from an empty index, whatever the planner believes of the other runs'
            # (during another run's recompute-all its figures say half the table is stale,
            # and it scanned every row of the run for one).
            models.Index(
                fields=["run", "scope"], condition=Q(status="stale"), name="metrics_stale_by_run"
            ),
            *_discussion_sort_indexes(),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"

    @staticmethod
    def make_key(
        family: str, scope: str, *, run_id=None, discussion_id=None, statement_id=None
    ) -> str:
        return f"{family}:{scope}:r{run_id or '-'}:d{discussion_id or '-'}:s{statement_id or '-'}"

    @property
    def is_fresh(self) -> bool:
        return self.status == self.Status.FRESH


class Evaluation(models.Model):
    """An evaluation run produced elsewhere, uploaded to compute one metric family on it."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    family = models.CharField(max_length=40, db_index=True)
    name = models.CharField(max_length=200)
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    artifact = models.JSONField(null=True, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # When its task reached the broker; null while queued means the broker never got it.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set on an evaluation computed from two others' stored inputs (a paired comparison).
    paired_left = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    paired_right = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.family}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class EvaluationFile(models.Model):
    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="files")
    role = models.CharField(max_length=40)
    file = models.FileField(upload_to="evaluations/%Y/%m/")
    original_name = models.CharField(max_length=255)
    size = models.PositiveIntegerField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.original_name}"


class StatementPiece(models.Model):
    """What one statement contributes to a family computed whole from our data (review
    savings, calibration, inter-auditor agreement, review triage): a few numbers per statement
    from which the run's (or the system's) figures are derived without re-running the matcher.

    ``input_hash`` is the hash of the statement's inputs (ground truth and extraction stamps,
    its codings, or its extraction in the run and the partner run) with the family's code version and the match settings: a piece whose
    hash differs from the current inputs' is computed again (``metrics.own_data.pieces``).
    The error index keeps its per-statement hashes here too (family ``error_analysis``, an
    empty piece: its rows are ``StatementError``).
    """

    key = models.CharField(max_length=200, unique=True)
    family = models.CharField(max_length=40)
    run = models.ForeignKey(
        "audit.ExtractionRun", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    statement = models.ForeignKey("audit.Statement", on_delete=models.CASCADE, related_name="+")
    input_hash = models.CharField(max_length=64)
    piece = RowJSONField()

    class Meta:
        indexes = [models.Index(fields=["family", "run"])]

    def __str__(self) -> str:
        return self.key

    @staticmethod
    def make_key(family: str, *, run_id: int | None, statement_id: int) -> str:
        return f"{family}:r{run_id or '-'}:s{statement_id}"


class StatementResultChange(models.Model):
    """A statement's extraction result in a run was written or removed (or the statement
    moved) since the run's error index was last brought up to date. Written in the
    transaction that changes the result, so it commits with it or not at all; read and deleted
    by the next update of the index (``metrics.engine.errors``), which then reads only these
    statements' results rather than every result of the run. Rows, not one flag per statement:
    a change committed after the update read them is another row, which the update does not
    delete."""

    run = models.ForeignKey("audit.ExtractionRun", on_delete=models.CASCADE, related_name="+")
    statement = models.ForeignKey("audit.Statement", on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"statement {self.statement_id} changed in run {self.run_id}"


class StatementError(models.Model):
    """How many times one statement counts in one figure of its run's error analysis (missed
    people, wrong SARF codes, one event kind missed, one SARF confusion cell, ...), so the
    page of the statements behind a figure reads one page of an index rather than every
    statement result of the run. Written with the stored error analysis, for the statements
    whose results changed since the last one (``metrics.engine.errors``); as current as that
    analysis."""

    run = models.ForeignKey("audit.ExtractionRun", on_delete=models.CASCADE, related_name="+")
    # e.g. "people_fn", "sarf", "events_fn:married", "sarf:symptom:none:up" (variable, AI, GT)
    figure = models.CharField(max_length=200)
    discussion = models.ForeignKey("audit.Discussion", on_delete=models.CASCADE, related_name="+")
    statement = models.ForeignKey("audit.Statement", on_delete=models.CASCADE, related_name="+")
    order = models.IntegerField()
    count = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(
                fields=["run", "figure", "discussion", "order", "statement"],
                name="metrics_staterr_listed",
            )
        ]

    def __str__(self) -> str:
        return f"{self.figure} x{self.count} in statement {self.statement_id} (run {self.run_id})"
