"""Reasoning faithfulness: faithfulness gap, Step-F1 and silent bias rate (``faithfulness``)
and uploaded runs (``run``).

The package exports the metrics, as ``metrics.families.reasoning`` always has.
"""

from . import faithfulness
from .faithfulness import *  # noqa: F403 (the package exports the module's public names)

__all__ = faithfulness.__all__
