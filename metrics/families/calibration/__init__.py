"""Post-hoc confidence calibration: calibrators, their JSON artifact and reliability figures.

Everything is in ``calibrators``; the package exports its public names.
"""

from . import calibrators
from .calibrators import *  # noqa: F403 (the package exports the module's public names)

__all__ = calibrators.__all__
