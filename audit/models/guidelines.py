"""The coding guidelines, one immutable row per saved version."""

from __future__ import annotations

from django.conf import settings
from django.db import models


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
