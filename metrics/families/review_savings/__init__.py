"""Review savings: how much of evalsite's own output could skip human review at a given risk.

Everything is in ``savings``; the package exports its public names.
"""

from . import savings
from .savings import *  # noqa: F403 (the package exports the module's public names)

__all__ = savings.__all__
