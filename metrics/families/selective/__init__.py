"""Selective prediction: risk-coverage curves and areas (``curves``), the participant bootstrap
(``bootstrap``), confidence variants (``confidence``) and uploaded runs (``run``).

The package exports the curve definitions, as ``metrics.families.selective`` always has;
``metrics.families.selective.bootstrap`` keeps exporting the bootstrap.
"""

from . import curves
from .curves import *  # noqa: F403 (the package exports the module's public names)

__all__ = curves.__all__
