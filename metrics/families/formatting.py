"""How the cards of the families show numbers: fixed digits, signed deltas, intervals and
percentages, "n/a" where there is no number. Shared by every ``<family>/card.py``; the stored
artifacts keep the full-precision numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NA = "n/a"


def fmt(value: Any, digits: int = 3, *, signed: bool = False) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return NA
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", "−")


def fmt_ci(ci: Sequence[float] | None, digits: int = 3, *, signed: bool = False) -> str:
    if not ci or len(ci) != 2:
        return ""
    return f"[{fmt(ci[0], digits, signed=signed)}, {fmt(ci[1], digits, signed=signed)}]"


def fmt_pct(value: Any) -> str:
    return NA if value is None else f"{value * 100:.1f}%"


def cell(value: Any, ci: Sequence[float] | None = None, *, signed: bool = False) -> dict[str, Any]:
    return {"value": fmt(value, signed=signed), "ci": fmt_ci(ci, signed=signed)}
