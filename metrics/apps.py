from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class MetricsConfig(AppConfig):
    name = "metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Models are loaded only now: audit's changes reach metrics through this one door.
        from metrics import invalidation

        invalidation.connect()
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
