"""The auditors' codings (feedback) that become ground truth, their revisions, blind reviews
and adjudications.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from audit.models.history import HistoryModel, history_kept
from audit.models.runs import Extraction, empty_pdp
from evalsite.access import is_admin
from evalsite.fields import RowJSONField

if TYPE_CHECKING:
    from audit.display import FieldChange


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

    statement = models.ForeignKey(
        "audit.Statement", on_delete=models.CASCADE, related_name="feedback"
    )
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
        "audit.Statement", on_delete=models.CASCADE, related_name="blind_review"
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
        "audit.Statement", on_delete=models.CASCADE, related_name="adjudication"
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
