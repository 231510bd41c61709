"""Verdict and evidence quality: the seven metrics (``quality``), the scoring policies
(``policy``, data in ``policies/``) and uploaded runs (``run``).

The package exports the metrics, as ``metrics.families.verdicts`` always has.
"""

from . import quality
from .quality import *  # noqa: F403 (the package exports the module's public names)

__all__ = quality.__all__
