"""Small numeric helpers shared by the agreement modules."""

from __future__ import annotations

import math


def finite_or_none(value: object) -> float | None:
    """The value as a float when it is a finite number (not a bool), else None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
