"""Domain signals on their way (an outbox written in the transaction of the change)."""

from __future__ import annotations

from django.db import models


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
