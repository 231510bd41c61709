"""The deployment's match settings: the Django side of the extraction library's
``MatchSettings``, read from settings.EXTRACTION_MATCH_SETTINGS (environment variables).

Every stored result records the settings it was computed with, and every input hash includes
them, so a change recomputes what it affects. Kept apart from the extraction services so that
any wing (the own-data families score extraction F1 too) reads them without importing those.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from metrics.families.extraction import MatchSettings


def match_settings() -> MatchSettings:
    return MatchSettings.from_dict(getattr(settings, "EXTRACTION_MATCH_SETTINGS", None))


def check_match_settings() -> None:
    """Refuse to start (web, worker or command) with out-of-range match settings, naming the
    environment variable at fault."""
    overrides = settings.EXTRACTION_MATCH_SETTINGS or {}
    for variable, (field, _kind) in settings.EXTRACTION_MATCH_ENV.items():
        if field not in overrides:
            continue
        try:
            MatchSettings.from_dict({field: overrides[field]})
        except (TypeError, ValueError) as exc:
            raise ImproperlyConfigured(f"{variable}={overrides[field]!r}: {exc}") from None
