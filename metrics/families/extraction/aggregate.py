"""System-wide figures from additive totals.

A statement's contribution is a dict of sums (counts, F1 sum, SARF confusion
counts, per-variable SARF macro-F1 sum and count, discussion ids), so a stored
system total can be updated by adding or subtracting one statement, and the
system figures are a pure function of it.

Every sum is an integer, so totals are exact and free of order: the F1 sums are
fixed-point, in units of 1/FIXED_ONE. Float sums would depend on the order the
statements were added in (a recompute's batches end in any order) and drift
with each add-and-remove of an edited statement; integer sums give the same
totals however they were reached.

SARF macro-F1 is reported two ways: pooled (one macro-F1 over every matched
event pair of every statement: the primary figure) and the mean of the
per-statement values (the reference implementation's reading), over statements
that have matched events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any

from .results import (
    COUNT_FIELDS,
    ENTITY_TYPES,
    ComparisonMetrics,
    CumulativeF1Metrics,
    StatementF1Metrics,
    SystemCumulativeF1Metrics,
    SystemF1Metrics,
)
from .sarf import SARF_VARIABLES, confusion_from_pairs, macro_f1_from_confusion
from .scores import f1_from_counts

# An F1 of 1 in the fixed-point sums. A float of 2**-10 or more has no bit below 2**-62, so
# times FIXED_ONE it is an integer: every F1 of 2**-10 or more (any with fewer than 2,047
# wrong items per right one) is held exactly, a smaller one to within 2**-63. A statement's
# contribution stays within 64-bit integers, which SQLite's JSON functions read as integers.
FIXED_ONE = 2**62

SCALAR_TOTALS: tuple[str, ...] = (
    "count",  # statements (or discussions, for cumulative results)
    "trivial",
    "exact",
    "exact_nontrivial",
    "f1_total",  # sum of the items' F1, fixed-point
    "f1_total_nontrivial",
    *COUNT_FIELDS,
)


def empty_totals() -> dict[str, Any]:
    totals: dict[str, Any] = {name: 0 for name in SCALAR_TOTALS}
    totals.update(sarf={}, sarf_f1_total={}, sarf_f1_count={}, discussions={})
    return totals


def fixed(value: float) -> int:
    """An F1 as a fixed-point integer (units of 1/FIXED_ONE): exact times a power of two."""
    return round(value * FIXED_ONE)


def _mean(total: int, count: int) -> float:
    """A fixed-point sum over a count, as a float: one correctly rounded division of integers."""
    return total / (count * FIXED_ONE)


def statement_contribution(metrics: ComparisonMetrics) -> dict[str, Any]:
    """What one statement (or one discussion's cumulative result) adds to the totals."""
    nontrivial = not metrics.trivial
    contribution: dict[str, Any] = {
        "count": 1,
        "trivial": int(metrics.trivial),
        "exact": int(metrics.exact_match),
        "exact_nontrivial": int(metrics.exact_match and nontrivial),
        "f1_total": fixed(metrics.aggregate_micro_f1),
        "f1_total_nontrivial": fixed(metrics.aggregate_micro_f1) if nontrivial else 0,
        **{name: getattr(metrics, name) for name in COUNT_FIELDS},
    }
    sarf = {var: confusion_from_pairs(metrics.sarf_pairs.get(var, [])) for var in SARF_VARIABLES}
    contribution["sarf"] = {var: table for var, table in sarf.items() if table}
    scored = {var: getattr(metrics, f"{var}_macro_f1") for var in SARF_VARIABLES}
    scored = {var: value for var, value in scored.items() if value is not None}
    contribution["sarf_f1_total"] = {var: fixed(value) for var, value in scored.items() if value}
    contribution["sarf_f1_count"] = {var: 1 for var in scored}
    discussion_id = getattr(metrics, "discussion_id", None)
    contribution["discussions"] = {} if discussion_id is None else {str(discussion_id): 1}
    return contribution


def add_contributions(
    totals: Mapping[str, Any], contribution: Mapping[str, Any], sign: int = 1
) -> dict[str, Any]:
    """totals + sign * contribution, as a new dict; sign=-1 removes a statement.

    Nested tables drop entries that reach zero, so removing a statement leaves
    exactly the totals that never contained it.
    """
    result = empty_totals()
    _accumulate(result, totals, 1, nested=False)
    _accumulate(result, contribution, sign, nested=False)
    return result


def total_contributions(contributions: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The totals of many stored contributions: equal to folding ``add_contributions`` over
    them (the same sums in the same order, zeros pruned the same way), but added in place
    rather than copying the growing totals at every step, which is quadratic in the number
    of discussions a run's totals list."""
    result = empty_totals()
    for contribution in contributions:
        _accumulate(result, contribution, 1, nested=False)
    return result


def _accumulate(
    target: dict[str, Any], source: Mapping[str, Any], sign: int, *, nested: bool
) -> None:
    """Adds sign * source into target in place (deep copies nested tables)."""
    for key, value in source.items():
        # Stored contributions are decoded JSON: an exact-type test first spares the abstract
        # class check on the ~18 values of each of a run's 250,000 rows.
        if type(value) is dict or isinstance(value, Mapping):
            table = target.setdefault(key, {})
            _accumulate(table, value, sign, nested=True)
            if nested and not table:
                del target[key]
        else:
            target[key] = target.get(key, 0) + sign * value
            if nested and not target[key]:
                del target[key]  # prune zeros


def sum_contributions(metrics: Iterable[ComparisonMetrics]) -> dict[str, Any]:
    """The totals of many statements: equal to adding their statement_contribution()s
    one by one, without building each contribution first."""
    totals = empty_totals()
    for item in metrics:
        _add_directly(totals, item)
    return totals


_counts_of = attrgetter(*COUNT_FIELDS)  # one call for the nine counts


def _add_directly(totals: dict[str, Any], metrics: ComparisonMetrics) -> None:
    """totals += statement_contribution(metrics), in place, summing in the same order."""
    nontrivial = not metrics.trivial
    totals["count"] += 1
    totals["trivial"] += int(metrics.trivial)
    totals["exact"] += int(metrics.exact_match)
    totals["exact_nontrivial"] += int(metrics.exact_match and nontrivial)
    f1 = fixed(metrics.aggregate_micro_f1)
    totals["f1_total"] += f1
    totals["f1_total_nontrivial"] += f1 if nontrivial else 0
    for name, count in zip(COUNT_FIELDS, _counts_of(metrics), strict=True):
        totals[name] += count
    sarf = totals["sarf"]
    for variable in SARF_VARIABLES:
        pairs = metrics.sarf_pairs.get(variable)
        if pairs:
            table = sarf.setdefault(variable, {})
            for ai_value, gt_value in pairs:
                row = table.setdefault(ai_value, {})
                row[gt_value] = row.get(gt_value, 0) + 1
    _add_sarf_f1(totals, metrics)
    discussion_id = getattr(metrics, "discussion_id", None)
    if discussion_id is not None:
        discussions = totals["discussions"]
        discussions[str(discussion_id)] = discussions.get(str(discussion_id), 0) + 1


def _add_sarf_f1(totals: dict[str, Any], metrics: ComparisonMetrics) -> None:
    """The per-statement SARF macro-F1 values into their sum and count (None is not counted)."""
    sums, counts = totals["sarf_f1_total"], totals["sarf_f1_count"]
    for variable in SARF_VARIABLES:
        value = getattr(metrics, f"{variable}_macro_f1")
        if value is not None:
            if value:  # zeros are not kept, as add_contributions prunes them
                sums[variable] = sums.get(variable, 0) + fixed(value)
            counts[variable] = counts.get(variable, 0) + 1


def _summary_fields(totals: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The pooled figures, the unweighted means of the items' F1 (prefix: whose mean,
    "mean_statement" or "mean_discussion") and their SARF means."""
    mean, mean_nontrivial = _means(totals)
    return {
        **_pooled_fields(totals),
        f"{prefix}_f1": mean,
        f"{prefix}_f1_nontrivial": mean_nontrivial,
        **_mean_sarf_fields(totals, prefix),
    }


def _mean_sarf_fields(totals: Mapping[str, Any], prefix: str) -> dict[str, float | None]:
    """Mean of the per-item SARF macro-F1 values, per variable; None where no item has one."""
    sums, counts = totals.get("sarf_f1_total") or {}, totals.get("sarf_f1_count") or {}
    fields: dict[str, float | None] = {}
    for variable in SARF_VARIABLES:
        count = counts.get(variable, 0)
        fields[f"{prefix}_{variable}_macro_f1"] = (
            _mean(sums.get(variable, 0), count) if count else None
        )
    return fields


def _pooled_fields(totals: Mapping[str, Any]) -> dict[str, Any]:
    """The figures shared by system and system-cumulative results."""
    counts = {name: int(totals.get(name, 0)) for name in COUNT_FIELDS}
    fields: dict[str, Any] = dict(counts)
    sarf = totals.get("sarf", {})
    for variable in SARF_VARIABLES:
        fields[f"{variable}_macro_f1"] = macro_f1_from_confusion(sarf.get(variable, {}))
    count, trivial = totals.get("count", 0), totals.get("trivial", 0)
    if count <= 0:
        return fields  # no data: every rate stays None
    for entity in ENTITY_TYPES:
        fields[f"{entity}_f1"] = f1_from_counts(
            *(counts[f"{entity}_{c}"] for c in ("tp", "fp", "fn"))
        )
    fields["aggregate_micro_f1"] = f1_from_counts(
        *(sum(counts[f"{e}_{c}"] for e in ENTITY_TYPES) for c in ("tp", "fp", "fn"))
    )
    fields["exact_match_rate"] = totals.get("exact", 0) / count
    nontrivial = count - trivial
    if nontrivial > 0:
        fields["exact_match_rate_nontrivial"] = totals.get("exact_nontrivial", 0) / nontrivial
    return fields


def _means(totals: Mapping[str, Any]) -> tuple[float | None, float | None]:
    count, nontrivial = totals.get("count", 0), totals.get("count", 0) - totals.get("trivial", 0)
    mean = _mean(totals.get("f1_total", 0), count) if count > 0 else None
    mean_nontrivial = (
        _mean(totals.get("f1_total_nontrivial", 0), nontrivial) if nontrivial > 0 else None
    )
    return mean, mean_nontrivial


def system_f1_from_totals(totals: Mapping[str, Any]) -> SystemF1Metrics:
    return SystemF1Metrics(
        **_summary_fields(totals, "mean_statement"),
        total_statements=int(totals.get("count", 0)),
        trivial_statements=int(totals.get("trivial", 0)),
        total_discussions=len(totals.get("discussions", {})),
    )


def calculate_system_f1(statement_metrics: Iterable[StatementF1Metrics]) -> SystemF1Metrics:
    """Pooled micro-F1 over all statements, with the per-statement mean beside it."""
    return system_f1_from_totals(sum_contributions(statement_metrics))


def calculate_system_cumulative_f1(
    cumulative_metrics: Iterable[CumulativeF1Metrics],
) -> SystemCumulativeF1Metrics:
    """Pooled counts across discussions, and the mean of per-discussion F1."""
    return system_cumulative_f1_from_totals(sum_contributions(cumulative_metrics))


def system_cumulative_f1_from_totals(totals: Mapping[str, Any]) -> SystemCumulativeF1Metrics:
    """Totals summed from statement_contribution() of CumulativeF1Metrics."""
    return SystemCumulativeF1Metrics(
        **_summary_fields(totals, "mean_discussion"),
        total_discussions=int(totals.get("count", 0)),
        trivial_discussions=int(totals.get("trivial", 0)),
    )
