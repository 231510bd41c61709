from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Models are loaded only now: audit's changes reach metrics through this one door.
        from audit import figures
        from metrics import invalidation, selectors

        invalidation.connect()
        # What audit pages show of metrics: filled in here, so audit never imports metrics.
        figures.readers_register(
            statement_f1=selectors.statement_f1_results,
            disagreement=selectors.statement_disagreement_read,
        )
        check_match_settings()


def check_match_settings() -> None:
    """Refuse to start (web, worker or command) with out-of-range match settings, naming the
    environment variable at fault."""
    from django.conf import settings

    from metrics.families.extraction import MatchSettings

    overrides = settings.EXTRACTION_MATCH_SETTINGS or {}
    for variable, (field, _kind) in settings.EXTRACTION_MATCH_ENV.items():
        if field not in overrides:
            continue
        try:
            MatchSettings.from_dict({field: overrides[field]})
        except (TypeError, ValueError) as exc:
            raise ImproperlyConfigured(f"{variable}={overrides[field]!r}: {exc}") from None
