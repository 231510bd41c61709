"""Frozen copies of the approved ground truth, and the codings each holds."""

from __future__ import annotations

from django.conf import settings
from django.db import models


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
