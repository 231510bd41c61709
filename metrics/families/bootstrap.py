"""The participant-cluster bootstrap of selective prediction, under its historical import path.

Its home is ``metrics.families.selective.bootstrap``.
"""

from metrics.families.selective import bootstrap as _home
from metrics.families.selective.bootstrap import *  # noqa: F403 (the module's public names, under their old path)

__all__ = _home.__all__
