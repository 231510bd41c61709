from django.contrib import admin

from audit.models import (
    BlindReview,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    FeedbackRevision,
    Speaker,
    Statement,
)


@admin.register(Discussion)
class DiscussionAdmin(admin.ModelAdmin):
    list_display = ("id", "summary", "date", "external_id", "created_at")
    search_fields = ("summary", "external_id")


@admin.register(Statement)
class StatementAdmin(admin.ModelAdmin):
    list_display = ("id", "discussion", "order", "speaker")
    list_filter = ("speaker__type",)
    raw_id_fields = ("discussion", "speaker")


@admin.register(ExtractionRun)
class ExtractionRunAdmin(admin.ModelAdmin):
    list_display = ("id", "model_name", "prompt_version", "created_at")


@admin.register(Extraction)
class ExtractionAdmin(admin.ModelAdmin):
    list_display = ("id", "statement", "run", "created_at")
    raw_id_fields = ("statement",)
    list_filter = ("run",)


@admin.register(Feedback)
class FeedbackAdmin(admin.ModelAdmin):
    list_display = ("id", "statement", "auditor", "status", "version", "updated_at")
    list_filter = ("status",)
    raw_id_fields = ("statement", "source_extraction")


admin.site.register(Speaker)
admin.site.register(FeedbackRevision)
admin.site.register(BlindReview)
