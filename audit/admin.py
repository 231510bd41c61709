from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from audit import models
from audit.derived.coding_times import revisions_deleting


@admin.register(models.Discussion)
class DiscussionAdmin(admin.ModelAdmin):
    list_display = ("id", "summary", "date", "external_id", "created_at")
    search_fields = ("summary", "external_id")


@admin.register(models.Statement)
class StatementAdmin(admin.ModelAdmin):
    list_display = ("id", "discussion", "order", "speaker")
    list_filter = ("speaker__type",)
    raw_id_fields = ("discussion", "speaker")


@admin.register(models.ExtractionRun)
class ExtractionRunAdmin(admin.ModelAdmin):
    list_display = ("id", "model_name", "prompt_version", "created_at")


@admin.register(models.Extraction)
class ExtractionAdmin(admin.ModelAdmin):
    list_display = ("id", "statement", "run", "created_at")
    raw_id_fields = ("statement",)
    list_filter = ("run",)


@admin.register(models.Feedback)
class FeedbackAdmin(admin.ModelAdmin):
    list_display = ("id", "statement", "auditor", "status", "version", "updated_at")
    list_filter = ("status",)
    raw_id_fields = ("statement", "source_extraction")


admin.site.register(models.Speaker)


@admin.register(models.FeedbackRevision)
class FeedbackRevisionAdmin(admin.ModelAdmin):
    """A revision deleted here takes its moments out of its coder's active time (no delete
    signal on revisions: a coding's deletion then removes its revisions without loading them)."""

    def delete_model(self, request: HttpRequest, obj: models.FeedbackRevision) -> None:
        revisions_deleting(revisions=[obj])
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        revisions_deleting(revisions=queryset)
        super().delete_queryset(request, queryset)


admin.site.register(models.BlindReview)
