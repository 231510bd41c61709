from django.contrib import admin

from metrics.models import ComputeJob, Evaluation, EvaluationFile, MetricResult


@admin.register(MetricResult)
class MetricResultAdmin(admin.ModelAdmin):
    list_display = ("key", "family", "scope", "status", "computed_at")
    list_filter = ("family", "scope", "status")
    search_fields = ("key",)


@admin.register(ComputeJob)
class ComputeJobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "done", "total", "created_at")


class EvaluationFileInline(admin.TabularInline):
    model = EvaluationFile
    extra = 0


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "family", "status", "created_at")
    list_filter = ("family", "status")
    inlines = [EvaluationFileInline]
