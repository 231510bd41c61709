"""The deployment's match settings: the Django side of the extraction library's
``MatchSettings``, read from settings.EXTRACTION_MATCH_SETTINGS (environment variables).

Every stored result records the settings it was computed with, and every input hash includes
them, so a change recomputes what it affects. Kept apart from the extraction services so that
any wing (the own-data families score extraction F1 too) reads them without importing those.
"""

from __future__ import annotations

import copy
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from metrics.families.extraction import MatchSettings


def match_settings() -> MatchSettings:
    """The settings in force. Parsed once per value of the setting: a recompute asks for them
    several times per statement (its figures, its input hash, the row's record), and parsing
    cost more than a tenth of a statement's time."""
    global _parsed
    overrides = getattr(settings, "EXTRACTION_MATCH_SETTINGS", None)
    if _parsed is None or _parsed[0] != overrides:
        _parsed = (copy.deepcopy(overrides), MatchSettings.from_dict(overrides))
    return _parsed[1]


_parsed: tuple[Any, MatchSettings] | None = None  # (the setting's value, its MatchSettings)


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
