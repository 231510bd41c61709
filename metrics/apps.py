from django.apps import AppConfig

from evalsite.match_settings import check_match_settings


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Models are loaded only now: audit's changes reach metrics through this one door.
        from audit import figures
        from metrics import selectors, tasks  # noqa: F401  (tasks: registered by name)
        from metrics.engine import invalidation

        invalidation.connect()
        # The stored statement F1 audit's pages show: filled in here, so audit never imports metrics.
        figures.readers_register(statement_f1=selectors.statement_f1_results)
        check_match_settings()
