"""Inter-auditor agreement on plain data: kappa, CCC, symmetric means and the paired bootstrap.

Everything is in ``measures``; the package exports its public names.
"""

from . import measures
from .measures import *  # noqa: F403 (the package exports the module's public names)

__all__ = measures.__all__
