"""Discussions, statements, AI extractions and the auditors' feedback that becomes ground truth."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import CASCADE, Exists, OuterRef, ProtectedError, Q
from django.utils import timezone

from evalsite.access import is_admin
from evalsite.fields import RowJSONField
from evalsite.indexes import NullsLastIndex

if TYPE_CHECKING:
    from audit.display import FieldChange


def empty_pdp() -> dict:
    return {"people": [], "events": [], "pair_bonds": [], "delete": []}


# --- history is permanent ------------------------------------------------------------------------
# A coding's revisions and the audit log are never deleted: not by the admin site, not by a
# cascade from a deleted coding, statement or discussion, not by a queryset. Only data a
# benchmark or test seeded itself is purged, inside ``history_purge``.
_purging: ContextVar[bool] = ContextVar("history_purging", default=False)
HISTORY_IS_PERMANENT = (
    "Revisions and audit-log entries are permanent: a coding with history, its statement "
    "and its discussion cannot be deleted."
)


@contextmanager
def history_purge() -> Iterator[None]:
    """Let the code inside delete revisions and log entries (its own seeded data only)."""
    token = _purging.set(True)
    try:
        yield
    finally:
        _purging.reset(token)


def history_kept(collector: Any, field: Any, sub_objs: Any, using: str) -> None:
    """``on_delete`` of a revision's coding: refuse the deletion, unless purging."""
    if not _purging.get():
        raise ProtectedError(HISTORY_IS_PERMANENT, sub_objs)
    CASCADE(collector, field, sub_objs, using)


class HistoryQuerySet(models.QuerySet):
    def delete(self) -> tuple[int, dict[str, int]]:
        if not _purging.get():
            raise ProtectedError(HISTORY_IS_PERMANENT, set(self[:20]))
        return super().delete()

    delete.alters_data = True  # type: ignore[attr-defined]


class HistoryModel(models.Model):
    """A row of history: deleted only inside ``history_purge``."""

    objects = HistoryQuerySet.as_manager()

    class Meta:
        abstract = True

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if not _purging.get():
            raise ProtectedError(HISTORY_IS_PERMANENT, {self})
        return super().delete(*args, **kwargs)


class DiscussionQuerySet(models.QuerySet):
    def with_approved(self) -> DiscussionQuerySet:
        return self.filter(statements__feedback__status=Feedback.Status.APPROVED).distinct()


class Discussion(models.Model):
    summary = models.TextField()
    date = models.DateField(null=True, blank=True)
    external_id = models.CharField(max_length=200, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DiscussionQuerySet.as_manager()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.summary[:60]}"

    def save(self, *args, **kwargs) -> None:
        # Every discussion carries an external id so exports re-import idempotently.
        if not self.external_id:
            self.external_id = uuid.uuid4().hex
        super().save(*args, **kwargs)

    def subject_statements(self) -> models.QuerySet[Statement]:
        return self.statements.filter(speaker__type=Speaker.Type.SUBJECT).order_by("order")


class Speaker(models.Model):
    class Type(models.TextChoices):
        SUBJECT = "subject", "Subject"
        EXPERT = "expert", "Expert"

    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="speakers")
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=10, choices=Type.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["discussion", "name"], name="unique_speaker_name")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class StatementQuerySet(models.QuerySet):
    def subjects(self) -> StatementQuerySet:
        return self.filter(speaker__type=Speaker.Type.SUBJECT)

    def to_code(self) -> StatementQuerySet:
        """Subject statements auditors still have to code: not AI accepted by review triage."""
        return self.subjects().exclude(triage__provisional=True)


class Statement(models.Model):
    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="statements")
    speaker = models.ForeignKey(Speaker, on_delete=models.CASCADE, related_name="statements")
    order = models.PositiveIntegerField()
    text = models.TextField()

    objects = StatementQuerySet.as_manager()

    class Meta:
        ordering = ["discussion_id", "order"]
        constraints = [
            models.UniqueConstraint(fields=["discussion", "order"], name="unique_statement_order")
        ]

    def __str__(self) -> str:
        return f"Statement {self.pk} (#{self.order} of discussion {self.discussion_id})"

    @property
    def is_subject(self) -> bool:
        return self.speaker.type == Speaker.Type.SUBJECT

    def approved_feedback(self) -> Feedback | None:
        return self.feedback.filter(status=Feedback.Status.APPROVED).first()


def configuration_fingerprint(
    *, model_name: str, prompt_version: str, prompt_hash: str, parameters: dict, unit: str
) -> str:
    """What makes two registrations the same configuration, as a SHA-256 (parameters in key
    order, JSON escapes for anything outside ASCII). Stored: never change how it is computed."""
    identity = {
        "model_name": model_name,
        "prompt_version": prompt_version,
        "prompt_hash": prompt_hash,
        "parameters": parameters,
        "unit": unit,
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class RunConfiguration(models.Model):
    """How extractions are produced: model, prompt version (and optionally the prompt itself or
    its hash), free parameters such as the temperature, and the unit extracted. Running it
    again is a replicate: another ``ExtractionRun`` of the same configuration."""

    class Unit(models.TextChoices):
        STATEMENT = "statement", "Statement"
        DISCUSSION = "discussion", "Discussion"

    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    prompt_text = models.TextField(blank=True)
    prompt_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 (hex) of the prompt text; blank: not given."
    )
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Free key/values: temperature, top_p, seed..."
    )
    unit = models.CharField(max_length=10, choices=Unit.choices, default=Unit.STATEMENT)
    notes = models.TextField(blank=True)
    # The identity (configuration_fingerprint of the fields above but the text and notes):
    # registering the same one again adds a replicate instead of a configuration.
    fingerprint = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """ "model · prompt version", with the parameters and the unit when they say more."""
        label = f"{self.model_name} · {self.prompt_version}"
        if self.parameters:
            label += " (" + ", ".join(f"{k}={v}" for k, v in sorted(self.parameters.items())) + ")"
        if self.unit == self.Unit.DISCUSSION:
            label += " · whole discussions"
        return label

    @property
    def is_discussion_unit(self) -> bool:
        return self.unit == self.Unit.DISCUSSION

    @staticmethod
    def plain(*, model_name: str, prompt_version: str) -> RunConfiguration:
        """The configuration of a model and prompt version with nothing else said (no prompt
        hash, no parameters, statement unit), created if new."""
        fingerprint = configuration_fingerprint(
            model_name=model_name,
            prompt_version=prompt_version,
            prompt_hash="",
            parameters={},
            unit=RunConfiguration.Unit.STATEMENT,
        )
        configuration, _ = RunConfiguration.objects.get_or_create(
            fingerprint=fingerprint,
            defaults={"model_name": model_name, "prompt_version": prompt_version},
        )
        return configuration


class ExtractionRunQuerySet(models.QuerySet):
    def latest_first(self) -> ExtractionRunQuerySet:
        return self.order_by("-created_at", "-id")

    def discussion_unit(self) -> ExtractionRunQuerySet:
        return self.filter(configuration__unit=RunConfiguration.Unit.DISCUSSION)


class ExtractionRun(models.Model):
    """One replicate of a configuration: a set of AI extractions made by running it once.

    ``model_name`` and ``prompt_version`` are the configuration's, copied (lists and filters
    read them without a join); ``replicate`` numbers the runs of a configuration from 1;
    ``external_id`` is the client's key that makes registering idempotent."""

    configuration = models.ForeignKey(
        RunConfiguration, on_delete=models.PROTECT, related_name="runs"
    )
    replicate = models.PositiveIntegerField(default=0)
    external_id = models.CharField(max_length=200, unique=True)
    model_name = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ExtractionRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "replicate"], name="one_run_per_replicate_number"
            )
        ]

    def __str__(self) -> str:
        return self.label

    def save(self, *args, **kwargs) -> None:
        # A run made without a configuration (tests, old code paths) gets the plain one of its
        # model and prompt version; the copied names always follow the configuration.
        if self.configuration_id is None:
            self.configuration = RunConfiguration.plain(
                model_name=self.model_name, prompt_version=self.prompt_version
            )
        self.model_name = self.configuration.model_name
        self.prompt_version = self.configuration.prompt_version
        if not self.replicate:
            self.replicate = self.configuration.runs.count() + 1
        if not self.external_id:
            self.external_id = uuid.uuid4().hex
        super().save(*args, **kwargs)

    @property
    def label(self) -> str:
        label = self.configuration.label
        return label if self.replicate <= 1 else f"{label} · replicate {self.replicate}"

    @property
    def unit(self) -> str:
        return self.configuration.unit

    @property
    def is_discussion_unit(self) -> bool:
        return self.configuration.is_discussion_unit


class Extraction(models.Model):
    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="extractions")
    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="extractions")
    pdp_deltas = RowJSONField(default=empty_pdp)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["statement", "run"], name="unique_extraction_per_run")
        ]

    def __str__(self) -> str:
        return f"Extraction of statement {self.statement_id} by run {self.run_id}"


class DiscussionExtraction(models.Model):
    """A discussion-unit run's extraction: one PDP for the whole discussion (what the AI
    extracted reading it all), scored against the discussion's cumulative ground truth."""

    discussion = models.ForeignKey(
        Discussion, on_delete=models.CASCADE, related_name="discussion_extractions"
    )
    run = models.ForeignKey(
        ExtractionRun, on_delete=models.CASCADE, related_name="discussion_extractions"
    )
    pdp = RowJSONField(default=empty_pdp)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["discussion", "run"], name="one_discussion_extraction_per_run"
            )
        ]
        indexes = [models.Index(fields=["run", "discussion"])]

    def __str__(self) -> str:
        return f"Extraction of discussion {self.discussion_id} by run {self.run_id}"


class FeedbackQuerySet(models.QuerySet):
    def approved(self) -> FeedbackQuerySet:
        return self.filter(status=Feedback.Status.APPROVED)

    def visible_to(self, user) -> FeedbackQuerySet:
        return self if is_admin(user) else self.filter(auditor=user)


class Feedback(models.Model):
    """One auditor's ground-truth coding of one statement."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Needs changes"

    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="feedback")
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="feedback"
    )
    edited_extraction = RowJSONField(default=empty_pdp)
    source_extraction = models.ForeignKey(
        Extraction, null=True, blank=True, on_delete=models.SET_NULL, related_name="feedback"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    blind = models.BooleanField(
        default=False, help_text="Coded from an empty extraction instead of the AI's."
    )
    # The coding as its auditor first submitted it: final for the agreement figures, since
    # submitting lifts the seal (docs/review.md, "Final once submitted"). Later changes are
    # revisions marked after_submit; an undone submit (nothing seen yet) clears it.
    submitted_extraction = RowJSONField(
        null=True,
        blank=True,
        editable=False,
        help_text="The coding as first submitted: what the agreement figures compare.",
    )
    comment = models.TextField(blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="approved_feedback",
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    approval = models.CharField(
        max_length=10,
        blank=True,
        choices=[
            ("reviewed", "Reviewed by another admin"),
            ("self", "Self-approved"),
            ("imported", "Imported"),
        ],
        help_text="How the approval came about; self-approvals carry approval_reason.",
    )
    approval_reason = models.TextField(blank=True)
    # A change to approved ground truth waits here for another admin; until then the approved
    # edited_extraction stays the ground truth (see docs/review.md).
    proposed_extraction = RowJSONField(null=True, blank=True)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    rejection_reason = models.TextField(blank=True)
    # The coding guidelines in force when the auditor last submitted (none before a submit,
    # or for imported ground truth).
    guideline_version = models.ForeignKey(
        "GuidelineVersion",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="feedback",
    )
    version = models.PositiveIntegerField(default=1)
    review_opened_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a reviewer first opened this submission; its auditor may undo the "
        "submit until then.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = FeedbackQuerySet.as_manager()
    # Not stored: True on the instance feedback_start has just created (the API answers 201).
    just_created = False

    class Meta:
        ordering = ["statement_id", "auditor_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["statement"],
                condition=Q(status="approved"),
                name="one_approved_feedback_per_statement",
            ),
            models.UniqueConstraint(
                fields=["statement", "auditor"], name="one_feedback_per_auditor_per_statement"
            ),
        ]
        # an auditor's coding by status (sent back to them, waiting) without reading the rest
        indexes = [
            models.Index(fields=["auditor", "status"], name="feedback_auditor_status"),
            # the few changes to approved ground truth waiting, among every approved coding
            models.Index(
                fields=["statement"],
                condition=Q(proposed_extraction__isnull=False),
                name="feedback_proposed",
            ),
        ]

    def __str__(self) -> str:
        return f"Feedback {self.pk} by {self.auditor} on statement {self.statement_id}"

    @property
    def is_approved(self) -> bool:
        return self.status == self.Status.APPROVED

    @property
    def has_proposal(self) -> bool:
        return self.proposed_extraction is not None

    @property
    def working_extraction(self) -> Any:
        """What an editor works on: a pending change to approved ground truth, else the coding."""
        return self.proposed_extraction if self.has_proposal else self.edited_extraction

    def as_working_copy(self) -> Feedback:
        """This instance with the pending change in edited_extraction, for editors to display.

        Display only: every workflow service reloads the row under a lock before writing.
        """
        if self.has_proposal:
            self.edited_extraction = self.proposed_extraction
        return self

    @property
    def is_editable(self) -> bool:
        """Approved ground truth is edited by admins only; anything else by its auditor."""
        return self.status != self.Status.APPROVED


class FeedbackRevision(HistoryModel):
    """A step of a feedback's history, with the full payload before and after.

    Consecutive autosaves by one person fold into one "edit" revision (``saves`` counts them,
    from ``first_version`` to ``version``); every other action starts its own.
    """

    feedback = models.ForeignKey(Feedback, on_delete=history_kept, related_name="revisions")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    version = models.PositiveIntegerField()
    first_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="The first version folded into this revision."
    )
    saves = models.PositiveIntegerField(default=1, help_text="Saves folded into this revision.")
    action = models.CharField(max_length=30)
    status = models.CharField(max_length=10, choices=Feedback.Status.choices)
    before = RowJSONField(null=True, blank=True)
    after = RowJSONField()
    after_submit = models.BooleanField(
        default=False,
        help_text="A change made after the coding was first submitted: the agreement figures "
        "keep the coding as submitted.",
    )
    restored_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The revision a restore brought back.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(
        null=True, blank=True, help_text="The last save folded into this revision."
    )
    # Not stored: what the history shows of it, set by audit.selectors.history.feedback_revisions.
    changes: list[FieldChange]
    summary: str
    first: int
    after_json: str
    is_current: bool

    class Meta:
        ordering = ["-version", "-id"]
        indexes = [
            # A coder's moments from a day on, and the last one before it: the stored active
            # time replays only the changed days (audit.derived.coding_times).
            models.Index(fields=["author", "created_at"], name="revision_author_created"),
            models.Index(fields=["author", "updated_at"], name="revision_author_updated"),
        ]

    def __str__(self) -> str:
        return f"Revision v{self.version} of feedback {self.feedback_id} ({self.action})"

    @property
    def label(self) -> str:
        """The version, or the range of versions folded into it ("v7", "v3–v7")."""
        first = self.first_version or self.version
        return f"v{self.version}" if first == self.version else f"v{first}–v{self.version}"


class BlindReview(models.Model):
    """A statement an admin marked for blind double coding."""

    statement = models.OneToOneField(
        Statement, on_delete=models.CASCADE, related_name="blind_review"
    )
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The marked statements, newest first, are listed a page at a time in this order.
        indexes = [models.Index(fields=["-created_at", "-statement"], name="audit_blind_newest")]

    def __str__(self) -> str:
        return f"Blind review of statement {self.statement_id}"


class Adjudication(models.Model):
    """A reviewer's merge of two or more auditors' codings of one statement into one.

    audit stores what the merge decided, not how the codings were aligned (that is the metric
    library's matcher): the reviewer's choices per disputed item, how many aligned items the
    coders agreed on and how many the reviewer decided, and the coding it produced, which is
    credited as adjudicated and follows the usual approval rules.
    """

    statement = models.OneToOneField(
        Statement, on_delete=models.CASCADE, related_name="adjudication"
    )
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    coders = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+")
    feedback = models.OneToOneField(
        Feedback, null=True, blank=True, on_delete=models.SET_NULL, related_name="adjudication"
    )
    choices = models.JSONField(
        default=dict, blank=True, help_text="Per disputed item key: {coder: n} or {edit: item}."
    )
    basis = models.JSONField(
        default=dict,
        blank=True,
        help_text="The codings the choices were made on: feedback id -> its version.",
    )
    reset_choices = models.JSONField(
        default=list,
        blank=True,
        help_text="Choices reset since the codings changed under them (key, choice, reason, "
        "when), shown to the reviewer until the merge is re-merged or produced.",
    )
    unanimous_items = models.PositiveIntegerField(default=0)
    adjudicated_items = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Adjudication of statement {self.statement_id}"

    @property
    def aligned_items(self) -> int:
        return self.unanimous_items + self.adjudicated_items


class AuditLogEntry(HistoryModel):
    """One named act on ground truth or its inputs, for admins to look back on."""

    class Action(models.TextChoices):
        BLIND_MARK = "blind_mark", "Blind review marked"
        BLIND_UNMARK = "blind_unmark", "Blind review unmarked"
        APPROVE = "approve", "Approved"
        SELF_APPROVE = "self_approve", "Self-approved"
        UNAPPROVE = "unapprove", "Unapproved"
        REJECT = "reject", "Rejected"
        PROPOSE = "propose", "Change to approved ground truth proposed"
        IMPORT = "import", "Imported"
        RUN_UPLOAD = "run_upload", "Evaluation run uploaded"
        ASSIGN = "assign", "Assigned"
        REASSIGN = "reassign", "Reassigned"
        UNASSIGN = "unassign", "Unassigned"
        SKIP = "skip", "Skipped"
        TRIAGE_SETTINGS = "triage_settings", "Review triage settings changed"
        TRIAGE_ACCEPT = "triage_accept", "Review triage accepted statements provisionally"
        TRIAGE_SUSPEND = "triage_suspend", "Review triage suspended"
        GUIDELINES = "guidelines", "Coding guidelines saved"
        COMMENT = "comment", "Commented"
        ADJUDICATE = "adjudicate", "Codings adjudicated"
        ADJUDICATION_REMERGE = "adjud_remerge", "Adjudication re-merged"
        ADJUDICATION_RESET = "adjud_reset", "Adjudication choices reset (a coding changed)"
        RUN_REGISTER = "run_register", "Extraction run registered"
        SNAPSHOT_FREEZE = "snapshot_freeze", "Ground truth frozen as a snapshot"
        SNAPSHOT_DELETE = "snapshot_delete", "Ground-truth snapshot deleted"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as text too, so the log still says who after a user is deleted.
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    object_type = models.CharField(max_length=40)
    object_id = models.CharField(max_length=64, blank=True)
    message = models.TextField()
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"])]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.object_type} {self.object_id}"


class GroundTruthSnapshot(models.Model):
    """The approved ground truth frozen under a name ("GT v12"): every approved coding as it
    was, the subject statements then still without one, and the export file written at
    freezing. Never changed once frozen (later approvals, edits, restores and imports change
    live ground truth only); deleting one is a logged admin act (``snapshot_delete``)."""

    name = models.CharField(max_length=100, unique=True)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Counts at freezing: discussions with approved ground truth, those whose every subject
    # statement is approved (what a discussion-unit run is scored on), approved codings, and
    # the items they hold by kind.
    discussions = models.PositiveIntegerField(default=0)
    complete_discussions = models.PositiveIntegerField(default=0)
    codings = models.PositiveIntegerField(default=0)
    items = models.JSONField(default=dict, blank=True)
    export_file = models.FileField(upload_to="snapshots/", blank=True)
    export_sha256 = models.CharField(max_length=64, blank=True)
    export_size = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding and self.is_frozen_in_database():
            raise ValueError("A frozen ground-truth snapshot is immutable.")
        super().save(*args, **kwargs)

    def is_frozen_in_database(self) -> bool:
        return GroundTruthSnapshot.objects.filter(pk=self.pk).exclude(export_sha256="").exists()

    @property
    def basis_label(self) -> str:
        return f"on {self.name}"


LIVE_GROUND_TRUTH = "on live ground truth"


class SnapshotCoding(models.Model):
    """One subject statement of a snapshot's discussions: its approved coding when frozen
    (``payload``), or none (null) when it had none then. Plain ids: a snapshot outlives the
    statements it names."""

    snapshot = models.ForeignKey(
        GroundTruthSnapshot, on_delete=models.CASCADE, related_name="snapshot_codings"
    )
    statement_id = models.BigIntegerField()
    discussion_id = models.BigIntegerField()
    order = models.IntegerField()
    feedback_id = models.BigIntegerField(null=True, blank=True)
    version = models.PositiveIntegerField(null=True, blank=True)
    payload = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "statement_id"], name="one_snapshot_coding_per_statement"
            )
        ]
        indexes = [
            models.Index(
                fields=["snapshot", "discussion_id", "order"], name="snapshot_coding_order"
            )
        ]

    def __str__(self) -> str:
        return f"statement {self.statement_id} in snapshot {self.snapshot_id}"


class ComputeJobQuerySet(models.QuerySet):
    def active(self) -> ComputeJobQuerySet:
        """Queued or running."""
        return self.filter(status__in=["queued", "running"])


class ComputeJob(models.Model):
    """A long background job whose progress a page can poll: a large ground-truth export or
    import (audit) or a recompute of stored metrics (metrics). The table keeps its first name,
    metrics_computejob."""

    # Set by compute_job_start (not stored): whether that call created the job or found it.
    created: bool = False

    class Kind(models.TextChoices):
        RECOMPUTE = "recompute", "Recompute metrics"
        EXPORT = "export", "Ground-truth export"
        IMPORT = "import", "Ground-truth import"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    kind = models.CharField(max_length=12, choices=Kind.choices)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    result_file = models.FileField(upload_to="exports/", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # What may run only once at a time ("recompute", "import:<sha256>"); blank: no limit.
    scope = models.CharField(max_length=80, blank=True, default="")
    # The running task writes a heartbeat; past settings.JOB_LEASE_SECONDS without one the
    # sweep takes the job for dead (resumes or fails it). ``attempt`` counts the runs, so a
    # task that lost its lease notices and stops.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempt = models.PositiveSmallIntegerField(default=0)

    objects = ComputeJobQuerySet.as_manager()

    class Meta:
        db_table = "metrics_computejob"
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["scope"],
                condition=models.Q(status__in=["queued", "running"]) & ~models.Q(scope=""),
                name="one_active_job_per_scope",
                violation_error_message="A job for this is already queued or running.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} job {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def percent(self) -> int:
        if not self.total:  # nothing counted yet: finished means all of nothing, else none
            return 100 if self.status == self.Status.DONE else 0
        return min(100, round(100 * self.done / self.total))

    @property
    def elapsed_seconds(self) -> float | None:
        if not self.started_at:
            return None
        end = self.finished_at or timezone.now()
        return (end - self.started_at).total_seconds()

    @property
    def eta_seconds(self) -> float | None:
        elapsed = self.elapsed_seconds
        if not elapsed or not self.done or not self.total or not self.is_active:
            return None
        return elapsed / self.done * (self.total - self.done)


class AssignmentQuerySet(models.QuerySet):
    def open(self) -> AssignmentQuerySet:
        return self.filter(status=Assignment.Status.OPEN)

    def of(self, user) -> AssignmentQuerySet:
        return self.filter(auditor=user)

    def visible_to(self, user) -> AssignmentQuerySet:
        return self if is_admin(user) else self.filter(auditor=user)

    def in_due_order(self) -> AssignmentQuerySet:
        """What to code first: the earliest due date (none last), then discussion order. The
        stored discussion makes the first two keys an index's (``assignment_due_order``)."""
        return self.order_by(
            models.F("due").asc(nulls_last=True), "discussion_id", "statement__order"
        )


class Assignment(models.Model):
    """One subject statement an admin gave one auditor to code.

    Admins assign discussions or statement ranges; the services store one row per statement,
    so "what needs this auditor next" and "is anyone else on it" are single queries. The
    assignment is released (no longer open) when its auditor submits, skips or is unassigned
    (an unassignment deletes the row; the audit log keeps the act).
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"

    class SkipReason(models.TextChoices):
        UNCLEAR = "unclear", "Unclear"
        NOT_CODABLE = "not_codable", "Not codable"
        NEEDS_CONTEXT = "needs_context", "Needs context"
        OTHER = "other", "Other"

    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="assignments")
    # The statement's discussion (a statement never moves), stored so that an auditor's open
    # assignments can be read in due order along an index, as far as a page needs.
    discussion = models.ForeignKey(
        Discussion, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments"
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # Part of a planned overlap sample: coded by several auditors on purpose.
    overlap = models.BooleanField(default=False)
    due = models.DateField(null=True, blank=True)
    skip_reason = models.CharField(max_length=20, choices=SkipReason.choices, blank=True)
    skip_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    released_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["statement_id", "auditor_id"]
        # The skipped list, newest first, is read a page at a time in this order.
        indexes = [
            models.Index(
                fields=["-released_at", "-id"],
                condition=Q(status="skipped"),
                name="audit_assignment_skipped",
            ),
            # An auditor's open assignments in due order (``in_due_order``: a btree's ascending
            # order puts no date last on PostgreSQL); each discussion's few are sorted by place.
            models.Index(
                fields=["auditor", "due", "discussion"],
                condition=Q(status="open"),
                name="assignment_due_order",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["statement", "auditor"], name="one_assignment_per_auditor_per_statement"
            ),
            # Outside an overlap sample a statement is open for one auditor at a time.
            models.UniqueConstraint(
                fields=["statement"],
                condition=Q(status="open", overlap=False),
                name="one_open_assignment_per_statement",
            ),
        ]

    def __str__(self) -> str:
        return f"Statement {self.statement_id} assigned to {self.auditor} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class TriageSettings(models.Model):
    """Review triage of one extraction run: statements the AI very likely got right skip the
    auditors' queue as provisional ground truth, with a proven bound (alpha, delta) on the share
    of unacceptable ones let through, and a QA sample coded by auditors as usual."""

    class State(models.TextChoices):
        OFF = "off", "Off"
        ACTIVE = "active", "Active"
        SUSPENDED = "suspended", "Suspended"

    run = models.OneToOneField(ExtractionRun, on_delete=models.CASCADE, related_name="triage")
    enabled = models.BooleanField(default=False)
    alpha = models.FloatField(default=0.05, help_text="Risk level: share of unacceptable ones.")
    delta = models.FloatField(default=0.10, help_text="Chance the bound fails.")
    acceptable_f1 = models.FloatField(default=1.0, help_text="F1 at or above: acceptable.")
    qa_rate = models.FloatField(default=0.10, help_text="Share of accepted ones coded anyway.")
    lowest_first = models.BooleanField(default=False, help_text="Queue: weakest AI first.")

    class Score(models.TextChoices):
        RAW = "raw", "Weakest item confidence × agreement with the other run"
        CALIBRATED = "calibrated", "Calibrated P(acceptable), fitted on other discussions"

    score = models.CharField(max_length=12, choices=Score.choices, default=Score.RAW)
    # The monitor reads QA results approved since triage was (re)enabled.
    enabled_at = models.DateTimeField(null=True, blank=True)
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_reason = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    # What triage has done to the queue, counted whenever it applies its outcome or gives the
    # accepted statements back (``triage_counts_store``): counting on a page read every triage
    # row of the run.
    n_provisional = models.PositiveIntegerField(default=0)
    n_qa = models.PositiveIntegerField(default=0)
    n_qa_approved = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"triage of {self.run} ({self.state})"

    @property
    def state(self) -> str:
        if not self.enabled:
            return self.State.OFF
        return self.State.SUSPENDED if self.suspended_at else self.State.ACTIVE

    @property
    def is_active(self) -> bool:
        return self.state == self.State.ACTIVE

    def chosen(self) -> dict[str, Any]:
        """What an admin chooses for the run's triage: logged before and after a change, shown
        by the API, stored with the triage result."""
        return {
            "enabled": self.enabled,
            "alpha": self.alpha,
            "delta": self.delta,
            "acceptable_f1": self.acceptable_f1,
            "qa_rate": self.qa_rate,
            "lowest_first": self.lowest_first,
            "score": self.score,
        }


class TriageStatementQuerySet(models.QuerySet):
    def provisional(self) -> TriageStatementQuerySet:
        return self.filter(provisional=True)

    def open_scores(self) -> TriageStatementQuerySet:
        """The scores of statements still to code (a subject's, AI accepted by no run's
        triage): what review triage's weakest-first queue orders by."""
        accepted = TriageStatement.objects.filter(
            statement_id=OuterRef("statement_id"), provisional=True
        )
        return self.filter(
            provisional=False, statement__speaker__type=Speaker.Type.SUBJECT
        ).exclude(Exists(accepted))

    def qa(self) -> TriageStatementQuerySet:
        return self.filter(qa=True)


class TriageStatement(models.Model):
    """A subject statement of a triaged run: its confidence score, whether it is AI accepted
    (provisional: out of the auditors' queue) and whether it was drawn for QA (stays in the
    queue, coded blind as usual; kept after approval, the monitor reads it)."""

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="+")
    # indexed below, with its score (``triage_statement_score``)
    statement = models.ForeignKey(
        Statement, on_delete=models.CASCADE, related_name="triage", db_index=False
    )
    confidence = models.FloatField()
    provisional = models.BooleanField(default=False)
    qa = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TriageStatementQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "statement"], name="one_triage_row_per_run")
        ]
        indexes = [
            models.Index(fields=["run", "provisional"]),
            # The queue's weakest-first order walks the rows from the lowest confidence up.
            models.Index(
                fields=["confidence", "statement"],
                condition=Q(provisional=False),
                name="triage_weakest_first",
            ),
            # Every "still to code" (``Statement.objects.to_code``) asks whether some run AI
            # accepted the statement: probed in this small index, not by hashing every accepted
            # row.
            models.Index(
                fields=["statement"], condition=Q(provisional=True), name="triage_accepted"
            ),
            # A statement's scores are read with it (the queue's weakest score of a page's
            # discussions) without visiting the table (a key column, not INCLUDE: SQLite too).
            models.Index(fields=["statement", "confidence"], name="triage_statement_score"),
        ]

    def __str__(self) -> str:
        return f"triage {self.run_id}/{self.statement_id} ({self.confidence:.3f})"


class GuidelineVersion(models.Model):
    """One saved version of the coding guidelines (Markdown). Never changed once saved: an edit
    saves the next number, so a feedback can name the version its auditor coded under."""

    # Set by guideline_save (not stored): whether that call saved this version.
    created: bool = False

    number = models.PositiveIntegerField(unique=True)
    text = models.TextField()
    note = models.CharField(max_length=300, blank=True, help_text="What changed, in a line.")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"Guidelines v{self.number}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None and not self._state.adding:
            raise ValueError("A saved guideline version is immutable: save a new version.")
        super().save(*args, **kwargs)

    @property
    def label(self) -> str:
        return f"v{self.number}"


class CommentQuerySet(models.QuerySet):
    def in_thread_order(self) -> CommentQuerySet:
        return self.order_by("created_at", "id")


class Comment(models.Model):
    """A message in a statement's thread. ``feedback`` set: about that coding only (a rejection
    reason, the auditor's reply), seen by its auditor and admins; unset: the whole statement.
    Who sees which comment is decided in ``audit.services.comments`` (blind rules)."""

    class Kind(models.TextChoices):
        COMMENT = "comment", "Comment"
        REJECTION = "rejection", "Rejection reason"

    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="comments")
    feedback = models.ForeignKey(
        Feedback, null=True, blank=True, on_delete=models.CASCADE, related_name="comments"
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.COMMENT)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CommentQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["statement", "id"])]

    def __str__(self) -> str:
        return f"Comment {self.pk} on statement {self.statement_id}"


class ThreadRead(models.Model):
    """How far one user has read one statement's thread (the newest comment id they saw)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="+")
    last_read = models.PositiveBigIntegerField(default=0)
    read_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "statement"], name="one_read_marker_per_thread")
        ]

    def __str__(self) -> str:
        return f"{self.user} read statement {self.statement_id} up to comment {self.last_read}"


class Notification(models.Model):
    """An in-app notice for one user: someone @mentioned them in a comment."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="notifications")
    read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "comment"], name="one_notice_per_mention")
        ]

    def __str__(self) -> str:
        return f"Mention of {self.user} in comment {self.comment_id}"


class CodingTally(models.Model):
    """One auditor's work in one discussion, counted by status, so pages that show progress or
    what waits for review read a row per discussion and auditor instead of every coding.

    Kept true by ``audit.derived.tallies``: every save or deletion of a feedback or an assignment
    refreshes the pairs it touches in the same transaction; bulk writes refresh theirs in
    batches; ``tallies_rebuild`` recounts everything from the rows themselves. Counts cover
    subject statements (the only ones coded)."""

    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="+")
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    coded = models.PositiveIntegerField(default=0)
    submitted = models.PositiveIntegerField(default=0, help_text="Sent: not a draft.")
    approved = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    in_review = models.PositiveIntegerField(default=0, help_text="Submitted, not yet decided.")
    waiting = models.PositiveIntegerField(default=0, help_text="In the review stream.")
    assigned = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    open = models.PositiveIntegerField(default=0, help_text="Assigned, not submitted or skipped.")
    open_unsent = models.PositiveIntegerField(
        default=0, help_text="Open assignments of statements the auditor has not sent."
    )
    to_adjudicate = models.PositiveIntegerField(
        default=0,
        help_text="Statements the auditor's sent coding shares with another auditor's, "
        "not yet merged by an adjudication and without approved ground truth.",
    )
    sent_to_code = models.PositiveIntegerField(
        default=0, help_text="Sent codings of statements still to code (not AI accepted)."
    )
    weakest = models.FloatField(
        null=True,
        blank=True,
        help_text="When the auditor has coded something here: the lowest review triage score "
        "among the statements still to code they have not coded (none: none scored), their "
        "weakest-first queue's order. Kept by audit.derived.tallies and audit.derived.team_figures.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["discussion", "auditor"], name="one_tally_per_pair")
        ]
        indexes = [
            models.Index(fields=["auditor", "discussion"]),
            # The auditor's own weakest-first order, from the lowest score up.
            models.Index(
                fields=["auditor", "weakest", "discussion"],
                condition=Q(weakest__isnull=False),
                name="tally_weakest_first",
            ),
            models.Index(
                fields=["discussion", "auditor"], condition=Q(waiting__gt=0), name="tally_waiting"
            ),
            models.Index(
                fields=["discussion", "auditor"],
                condition=Q(in_review__gt=0),
                name="tally_in_review",
            ),
            models.Index(
                fields=["discussion"], condition=Q(to_adjudicate__gt=0), name="tally_to_adjudicate"
            ),
            # the auditor's discussions with open assignments to code (``my_open_assignments``),
            # without reading a tally per discussion they ever worked in
            models.Index(
                fields=["auditor", "discussion"],
                condition=Q(open_unsent__gt=0),
                name="tally_open_unsent",
            ),
        ]

    def __str__(self) -> str:
        return f"tally of auditor {self.auditor_id} in discussion {self.discussion_id}"


class TeamFigures(models.Model):
    """The team page's figures of one discussion or one auditor, stored so a page reads its
    rows instead of summing every tally and replaying every coder's history on each view.

    - The counts are the sums of the row's ``CodingTally`` rows (``pairs``: how many have
      work), changed by the difference each tally refresh makes, in its transaction
      (``audit.derived.team_figures``); ``tallies_rebuild`` recounts them with the tallies.
    - Active time, median and statements per day are written by the worker that follows the
      recorded changes (``audit.derived.coding_times``: the changed days of the changed coders'
      history, from the stored ``CodingTime`` rows).
    - Agreement is written by the worker that computes the inter-auditor family (``None``:
      not measured yet)."""

    pairs = models.PositiveIntegerField(default=0, help_text="Tallies with work.")
    coded = models.PositiveIntegerField(default=0)
    submitted = models.PositiveIntegerField(default=0)
    approved = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    in_review = models.PositiveIntegerField(default=0)
    waiting = models.PositiveIntegerField(default=0)
    to_adjudicate = models.PositiveIntegerField(default=0)
    assigned = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    open = models.PositiveIntegerField(default=0)
    open_unsent = models.PositiveIntegerField(default=0)
    active_seconds = models.FloatField(default=0.0)
    median_seconds = models.FloatField(null=True, blank=True)
    per_day = models.FloatField(null=True, blank=True)
    agreement_gt = models.FloatField(null=True, blank=True)
    agreement_coders = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True


# The per-discussion table's sort columns (the page's names) and the stored field each reads.
TEAM_SORT_FIELDS = {
    "label": "label",
    "assigned": "assigned",
    "coded": "coded",
    "submitted": "submitted",
    "approved": "approved",
    "rejected": "rejected",
    "skipped": "skipped",
    "active_minutes": "active_seconds",
    "median_minutes": "median_seconds",
    "per_day": "per_day",
    "agreement_gt": "agreement_gt",
    "agreement_coders": "agreement_coders",
}
LISTED = Q(pairs__gt=0)


def _team_sort_indexes() -> list[models.Index]:
    """One index per sort column and direction over the listed discussions, in the order the
    page asks (missing figures last, then by discussion): a page is read in index order."""
    indexes: list[models.Index] = []
    for name, field in TEAM_SORT_FIELDS.items():
        for suffix, order in (
            ("a", models.F(field).asc(nulls_last=True)),
            ("d", models.F(field).desc(nulls_last=True)),
        ):
            indexes.append(
                NullsLastIndex(
                    order,
                    models.F("discussion"),
                    condition=LISTED,
                    name=f"team_{name[:14]}_{suffix}",
                )
            )
    return indexes


class DiscussionFigures(TeamFigures):
    """One discussion's row of the team page (see ``TeamFigures``)."""

    discussion = models.OneToOneField(
        Discussion, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    label = models.CharField(max_length=80, blank=True, help_text="The summary's start.")
    to_code = models.PositiveIntegerField(
        default=0,
        help_text="Subject statements still to code (not AI accepted by review triage): the "
        "queue's 'done' is every one of them sent. Kept by audit.derived.team_figures.",
    )
    weakest = models.FloatField(
        null=True,
        blank=True,
        help_text="The lowest review triage score among its statements still to code (none: "
        "none scored): its place in the weakest-first queue of whoever has coded none of them. "
        "Kept by audit.derived.team_figures.",
    )

    class Meta:
        indexes = [
            *_team_sort_indexes(),
            # The weakest-first queue reads the discussions from the lowest score up.
            models.Index(
                fields=["weakest", "discussion"],
                condition=Q(weakest__isnull=False),
                name="figures_weakest_first",
            ),
        ]

    def __str__(self) -> str:
        return f"team figures of discussion {self.discussion_id}"


class AuditorFigures(TeamFigures):
    """One auditor's row of the team page and their own progress (see ``TeamFigures``)."""

    auditor = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )

    def __str__(self) -> str:
        return f"team figures of auditor {self.auditor_id}"


class CodingTime(models.Model):
    """Active coding time of one auditor on one statement on one day (UTC), in microseconds
    (integers: sums in any order are exact), derived from the auditor's history by
    ``audit.derived.coding_times``. A day's rows depend only on that day's moments and the last one
    before it, so a change replays the auditor's history from its day on, not all of it."""

    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    statement = models.ForeignKey(Statement, on_delete=models.CASCADE, related_name="+")
    discussion = models.ForeignKey(Discussion, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    micros = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["auditor", "day", "statement"], name="coding_time_auditor_day"
            )
        ]
        indexes = [models.Index(fields=["discussion", "day"], name="coding_time_discussion")]

    def __str__(self) -> str:
        return f"{self.micros} µs of auditor {self.auditor_id} on statement {self.statement_id}"


class CodingTimeChange(models.Model):
    """What the stored active time must follow, written in the transaction of the change (so a
    late commit is never skipped, as a high-water mark would): ``since`` a day from which the
    auditor's history changed (a revision, a deleted coding), or none when only the
    discussion's and auditor's figures must be read again (a coding sent or taken back, a
    changed count of sent codings). Plain ids: the row outlives what it names."""

    auditor_id = models.BigIntegerField()
    discussion_id = models.BigIntegerField(null=True, blank=True)
    since = models.DateField(null=True, blank=True)

    def __str__(self) -> str:
        return f"time change of auditor {self.auditor_id} since {self.since}"


class Announcement(models.Model):
    """A domain signal (``audit.signals``) on its way: written in the transaction of the change
    it announces, deleted once its receivers ran after the commit. A row left behind is an
    announcement whose delivery failed (the database connection died right after the commit);
    the periodic sweep sends it again."""

    signal = models.CharField(max_length=40)
    params = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.signal} of {self.created_at:%Y-%m-%d %H:%M:%S}"
