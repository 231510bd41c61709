from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Deletions of statements/extractions/feedback/runs invalidate stored results.
        from metrics import signals  # noqa: F401
        from metrics.own_data import signals as own_data_signals  # noqa: F401
