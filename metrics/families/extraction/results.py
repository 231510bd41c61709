"""Result dataclasses; each round-trips through JSON via to_dict() / from_dict()."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, TypeVar

from metrics.families.payload.items import ENTITY_KINDS as ENTITY_TYPES

from .sarf import SARF_VARIABLES
from .settings import DEFAULT_SETTINGS, MatchSettings

COUNT_FIELDS: tuple[str, ...] = tuple(
    f"{entity}_{count}" for entity in ENTITY_TYPES for count in ("tp", "fp", "fn")
)

T = TypeVar("T", bound="_Serializable")


class _Serializable:
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (nested settings become dicts), equal to what
        ``dataclasses.asdict`` gives. Each list and dict field is a new container, but the rows
        it holds (match rows, SARF pairs) are the result's own, not copied: they are plain JSON
        data that nothing changes once the result is made, and copying every row was most of
        the time a recompute spent storing its figures."""
        return {name: _plain(getattr(self, name)) for name in _field_names(type(self))}

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Rebuild from stored JSON. Unknown keys are ignored (derived values,
        fields of newer versions); missing keys take their defaults."""
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        values = {key: value for key, value in data.items() if key in known}
        if "settings" in values:
            values["settings"] = MatchSettings.from_dict(values["settings"])
        return cls(**values)


_SCALARS = frozenset({str, int, float, bool, type(None)})


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(kind))
    return names


def _plain(value: Any) -> Any:
    if type(value) in _SCALARS:  # most values: checked first, by exact type
        return value
    if isinstance(value, list | dict):
        return value.copy()
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    return value


@dataclass(kw_only=True)
class _EntityCounts(_Serializable):
    """True positives, false positives and false negatives per entity type (COUNT_FIELDS):
    what every comparison and every pooled figure is computed from."""

    people_tp: int = 0
    people_fp: int = 0
    people_fn: int = 0
    events_tp: int = 0
    events_fp: int = 0
    events_fn: int = 0
    pair_bonds_tp: int = 0
    pair_bonds_fp: int = 0
    pair_bonds_fn: int = 0


@dataclass(kw_only=True)
class ComparisonMetrics(_EntityCounts):
    """AI vs GT comparison of two payloads. Defaults describe empty vs empty."""

    aggregate_micro_f1: float = 1.0
    people_f1: float = 1.0
    events_f1: float = 1.0
    pair_bonds_f1: float = 1.0
    # None: no matched events, so there is nothing to score ("n/a").
    symptom_macro_f1: float | None = None
    anxiety_macro_f1: float | None = None
    relationship_macro_f1: float | None = None
    functioning_macro_f1: float | None = None
    exact_match: bool = True
    trivial: bool = True  # both payloads have no people, events or pair bonds
    # Matched pairs as {"ai_id", "gt_id", "score"} rows, and unmatched ids.
    people_matches: list[dict[str, Any]] = field(default_factory=list)
    events_matches: list[dict[str, Any]] = field(default_factory=list)
    pair_bonds_matches: list[dict[str, Any]] = field(default_factory=list)
    people_fp_ids: list[Any] = field(default_factory=list)
    people_fn_ids: list[Any] = field(default_factory=list)
    events_fp_ids: list[Any] = field(default_factory=list)
    events_fn_ids: list[Any] = field(default_factory=list)
    pair_bonds_fp_ids: list[Any] = field(default_factory=list)
    pair_bonds_fn_ids: list[Any] = field(default_factory=list)
    # Per SARF variable, one [ai_value, gt_value] per matched event pair.
    sarf_pairs: dict[str, list[list[str]]] = field(
        default_factory=lambda: {variable: [] for variable in SARF_VARIABLES}
    )
    fn_event_kinds: list[str] = field(default_factory=list)  # kinds the AI missed
    fp_event_kinds: list[str] = field(default_factory=list)  # kinds the AI invented
    settings: MatchSettings = DEFAULT_SETTINGS

    @property
    def aggregate_tp(self) -> int:
        return self.people_tp + self.events_tp + self.pair_bonds_tp

    @property
    def aggregate_fp(self) -> int:
        return self.people_fp + self.events_fp + self.pair_bonds_fp

    @property
    def aggregate_fn(self) -> int:
        return self.people_fn + self.events_fn + self.pair_bonds_fn

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.update(
            aggregate_tp=self.aggregate_tp,
            aggregate_fp=self.aggregate_fp,
            aggregate_fn=self.aggregate_fn,
        )
        return data


@dataclass(kw_only=True)
class StatementF1Metrics(ComparisonMetrics):
    statement_id: int | None = None
    discussion_id: int | None = None


@dataclass(kw_only=True)
class CumulativeF1Metrics(ComparisonMetrics):
    """The accumulated PDP of one discussion, AI vs GT."""

    discussion_id: int | None = None
    statement_count: int = 0


@dataclass(kw_only=True)
class _PooledMetrics(_EntityCounts):
    """Figures over many comparisons; None where there is nothing to compute from."""

    aggregate_micro_f1: float | None = None  # pooled counts: the primary figure
    people_f1: float | None = None
    events_f1: float | None = None
    pair_bonds_f1: float | None = None
    symptom_macro_f1: float | None = None  # over all matched event pairs
    anxiety_macro_f1: float | None = None
    relationship_macro_f1: float | None = None
    functioning_macro_f1: float | None = None
    exact_match_rate: float | None = None
    exact_match_rate_nontrivial: float | None = None


@dataclass(kw_only=True)
class SystemF1Metrics(_PooledMetrics):
    mean_statement_f1: float | None = None  # unweighted mean of per-statement F1
    mean_statement_f1_nontrivial: float | None = None
    # Beside the pooled SARF macro-F1 above: the unweighted mean of per-statement values, over
    # statements with matched events (the reference implementation's reading).
    mean_statement_symptom_macro_f1: float | None = None
    mean_statement_anxiety_macro_f1: float | None = None
    mean_statement_relationship_macro_f1: float | None = None
    mean_statement_functioning_macro_f1: float | None = None
    total_statements: int = 0
    trivial_statements: int = 0
    total_discussions: int = 0


@dataclass(kw_only=True)
class SystemCumulativeF1Metrics(_PooledMetrics):
    mean_discussion_f1: float | None = None  # unweighted mean of per-discussion F1
    mean_discussion_f1_nontrivial: float | None = None
    # Mean of per-discussion SARF macro-F1, over discussions with matched events.
    mean_discussion_symptom_macro_f1: float | None = None
    mean_discussion_anxiety_macro_f1: float | None = None
    mean_discussion_relationship_macro_f1: float | None = None
    mean_discussion_functioning_macro_f1: float | None = None
    total_discussions: int = 0
    trivial_discussions: int = 0
