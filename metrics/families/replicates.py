"""What replicates of one configuration say together: the mean of a figure over its runs and how
far they spread (min-max and standard deviation). Pure Python; not a family of its own."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Spread:
    """A figure over replicates. ``n`` counts the replicates that have it (a figure a run
    does not have, None, is left out rather than taken as 0); ``sd`` is the sample standard
    deviation (n - 1), None below two replicates."""

    n: int
    mean: float | None
    sd: float | None
    min: float | None
    max: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def spread(values: Iterable[float | None]) -> Spread:
    present = [float(value) for value in values if value is not None and math.isfinite(value)]
    if not present:
        return Spread(n=0, mean=None, sd=None, min=None, max=None)
    mean = math.fsum(present) / len(present)
    sd = None
    if len(present) > 1:
        sd = math.sqrt(math.fsum((value - mean) ** 2 for value in present) / (len(present) - 1))
    return Spread(n=len(present), mean=mean, sd=sd, min=min(present), max=max(present))


def spreads(
    replicates: Iterable[Mapping[str, float | None]], figures: Iterable[str]
) -> dict[str, Spread]:
    """Per figure, its spread over the replicates' figure dicts."""
    rows = list(replicates)
    return {figure: spread(row.get(figure) for row in rows) for figure in figures}
