from django.apps import AppConfig

from evalsite.match_settings import check_match_settings


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Models are loaded only now: audit's changes reach metrics through this one door.
        from metrics import tasks  # noqa: F401  (registered by name)
        from metrics.engine import invalidation

        invalidation.connect()
        check_match_settings()
