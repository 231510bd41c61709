"""Background computations the site queues and shows the progress of."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

ACTIVE = ("queued", "running")  # a job's statuses while it may still change

# Written out: the ORM's form of it (an OR of a sliced subquery and a filter) takes longer to
# build than the database takes to answer.
_RECENT_AND_ACTIVE = """
    SELECT * FROM {table}
     WHERE id IN (SELECT id FROM {table} ORDER BY created_at DESC, id DESC LIMIT %s)
        OR status IN (%s, %s)
     ORDER BY created_at DESC, id DESC"""


class ComputeJobQuerySet(models.QuerySet):
    def active(self) -> ComputeJobQuerySet:
        """Queued or running."""
        return self.filter(status__in=ACTIVE)

    def recent_and_active(self, recent: int) -> list[ComputeJob]:
        """The ``recent`` newest jobs and the active ones (however old), newest first, in one
        query: the recent ones are its first rows."""
        sql = _RECENT_AND_ACTIVE.format(table=self.model._meta.db_table)
        return list(self.raw(sql, [recent, *ACTIVE]))


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
                condition=models.Q(status__in=list(ACTIVE)) & ~models.Q(scope=""),
                name="one_active_job_per_scope",
                violation_error_message="A job for this is already queued or running.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} job {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

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
