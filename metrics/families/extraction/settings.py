"""Matching thresholds, kept in one frozen value so every stored result can record them."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Strategy = Literal["optimal", "greedy"]
STRATEGIES: tuple[Strategy, ...] = ("optimal", "greedy")


@dataclass(frozen=True)
class MatchSettings:
    """Every constant the matching uses; configurable per deployment.

    name_similarity_threshold is exclusive (similarity must exceed it);
    description_similarity_threshold is inclusive (similarity must reach it).
    """

    name_similarity_threshold: float = 0.8
    description_similarity_threshold: float = 0.5
    date_tolerance_days: int = 7
    approximate_date_tolerance_days: int = 730
    description_weight: float = 0.8
    date_weight: float = 0.2
    strategy: Strategy = "optimal"

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, not {self.strategy!r}")
        for name in ("name_similarity_threshold", "description_similarity_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        for name in ("description_weight", "date_weight"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        # Date similarity divides by the tolerance, so zero would be meaningless.
        if self.date_tolerance_days <= 0 or self.approximate_date_tolerance_days <= 0:
            raise ValueError("date tolerances must be positive numbers of days")

    def to_dict(self) -> dict[str, Any]:
        # Every field is a number or a string: a flat copy is what asdict gives, without its copies.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> MatchSettings:
        """Rebuild from stored JSON; unknown keys (from newer versions) are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in (data or {}).items() if key in known})


DEFAULT_SETTINGS = MatchSettings()


def resolve_settings(settings: MatchSettings | None) -> MatchSettings:
    return DEFAULT_SETTINGS if settings is None else settings
