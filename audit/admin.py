"""The Django admin site: the imported inputs are editable; ground truth (codings and their
adjudications), blind marks, revisions and the audit log are shown read-only, since their
every change is a named, logged act of the site's services. The inputs' writes go through the
services too (``audit.services.inputs``), so what is derived from them follows."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from audit import models
from audit.services.inputs import discussion_save, inputs_delete, speaker_save, statement_save


class InputAdmin(admin.ModelAdmin):
    """Deletions through ``inputs_delete`` (one row or the list's selection); saves through
    the model's service where something is derived from it."""

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        inputs_delete(rows=type(obj).objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        inputs_delete(rows=queryset)


@admin.register(models.Discussion)
class DiscussionAdmin(InputAdmin):
    list_display = ("id", "summary", "date", "external_id", "created_at")
    search_fields = ("summary", "external_id")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        discussion_save(discussion=obj)


@admin.register(models.Statement)
class StatementAdmin(InputAdmin):
    list_display = ("id", "discussion", "order", "speaker")
    list_filter = ("speaker__type",)
    raw_id_fields = ("discussion", "speaker")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        statement_save(statement=obj)


@admin.register(models.Speaker)
class SpeakerAdmin(InputAdmin):
    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        speaker_save(speaker=obj)


@admin.register(models.ExtractionRun)
class ExtractionRunAdmin(InputAdmin):
    list_display = ("id", "model_name", "prompt_version", "created_at")


@admin.register(models.Extraction)
class ExtractionAdmin(InputAdmin):
    list_display = ("id", "statement", "run", "created_at")
    raw_id_fields = ("statement",)
    list_filter = ("run",)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewed here, changed only through the site (its services write the revision and the
    log entry): no add, change or delete, whoever is signed in."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(models.Feedback)
class FeedbackAdmin(ReadOnlyAdmin):
    list_display = ("id", "statement", "auditor", "status", "version", "updated_at")
    list_filter = ("status",)


@admin.register(models.FeedbackRevision)
class FeedbackRevisionAdmin(ReadOnlyAdmin):
    list_display = ("id", "feedback", "author", "version", "action", "created_at")


@admin.register(models.Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = ("id", "statement", "adjudicator", "feedback", "updated_at")


@admin.register(models.BlindReview)
class BlindReviewAdmin(ReadOnlyAdmin):
    list_display = ("statement", "marked_by", "created_at")


@admin.register(models.AuditLogEntry)
class AuditLogEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "actor_name", "action", "object_type", "object_id")
    list_filter = ("action",)
