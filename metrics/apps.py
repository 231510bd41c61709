from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"
