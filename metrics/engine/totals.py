"""A run's extraction totals summed from its stored contributions.

The sums are integers (see ``metrics.families.extraction.aggregate``), so any order of adding
gives the same totals: PostgreSQL adds them where they are stored, without sending every
JSON document of a run to be decoded and folded in Python. Elsewhere (SQLite,
whose JSON functions read integers beyond 64 bits as floats) the stored rows are folded here.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from metrics.families.extraction import (
    SARF_VARIABLES,
    SCALAR_TOTALS,
    empty_totals,
    total_contributions,
)
from metrics.models import MetricResult

Scope = MetricResult.Scope
PART: dict[str, str] = {Scope.STATEMENT: "statements", Scope.DISCUSSION: "discussions"}

# The run's statement and discussion rows that have a contribution, by scope; each query reads
# every row once. Fixed keys are read as a record (jsonb_to_record): one pass over a row's
# JSON instead of an `->>` per key.
_TABLE = MetricResult._meta.db_table
_WHERE = """r.family = %(family)s AND r.run_id IS NOT DISTINCT FROM %(run_id)s
    AND r.scope = ANY(%(scopes)s) AND r.contribution IS NOT NULL"""
# The SARF F1 tables' keys are the SARF variables (statement_contribution writes no other).
SARF_TABLES = ("sarf_f1_total", "sarf_f1_count")


def _record(source: str, alias: str, keys: tuple[str, ...]) -> str:
    columns = ", ".join(f"{key} numeric" for key in keys)
    return f"CROSS JOIN LATERAL jsonb_to_record({source}) AS {alias}({columns})"


def _summed(columns: str, joins: str, group: str, *, having: str = "") -> str:
    """A query adding up `columns` over the run's rows and the parts of them `joins` opens."""
    having_clause = f" HAVING {having} <> 0" if having else ""
    query = f"SELECT r.scope, {columns} FROM {_TABLE} r {joins} WHERE {_WHERE}"
    return f"{query} GROUP BY {group}{having_clause}"


_SCALARS = _summed(
    ", ".join(
        [
            *(f"SUM(x.{key})" for key in SCALAR_TOTALS),
            *(f"SUM({table}.{var})" for table in SARF_TABLES for var in SARF_VARIABLES),
        ]
    ),
    joins=" ".join(
        [
            _record("r.contribution", "x", SCALAR_TOTALS),
            *(_record(f"r.contribution -> '{t}'", t, SARF_VARIABLES) for t in SARF_TABLES),
        ]
    ),
    group="r.scope",
)
_DISCUSSIONS = _summed(
    "e.key, SUM(e.value::numeric)",
    joins="CROSS JOIN LATERAL jsonb_each_text(r.contribution -> 'discussions') e",
    group="1, 2",
    having="SUM(e.value::numeric)",
)
_SARF = _summed(  # variable -> AI value -> ground-truth value -> count
    "v.key, a.key, g.key, SUM(g.value::numeric)",
    joins=(
        "CROSS JOIN LATERAL jsonb_each(r.contribution -> 'sarf') v"
        " CROSS JOIN LATERAL jsonb_each(v.value) a"
        " CROSS JOIN LATERAL jsonb_each_text(a.value) g"
    ),
    group="1, 2, 3, 4",
    having="SUM(g.value::numeric)",
)


def run_totals_sum(*, family: str, run_id: int | None) -> dict[str, dict[str, Any]]:
    """The run's totals, {"statements": ..., "discussions": ...}: exactly what folding its
    stored contributions with ``total_contributions`` gives."""
    if connection.vendor != "postgresql":
        return _folded(family, run_id)
    params = {"family": family, "run_id": run_id, "scopes": [str(scope) for scope in PART]}
    totals = {part: empty_totals() for part in PART.values()}
    with connection.cursor() as cursor:
        cursor.execute(_SCALARS, params)
        for scope, *sums in cursor.fetchall():
            part = totals[PART[scope]]
            scalars, tables = sums[: len(SCALAR_TOTALS)], sums[len(SCALAR_TOTALS) :]
            part.update(zip(SCALAR_TOTALS, map(_integer, scalars), strict=True))
            for (table, variable), total in zip(_sarf_columns(), tables, strict=True):
                if total:  # None where no row has it; zeros are pruned, as the fold prunes them
                    part[table][variable] = _integer(total)
        cursor.execute(_DISCUSSIONS, params)
        for scope, key, total in cursor.fetchall():
            totals[PART[scope]]["discussions"][key] = _integer(total)
        cursor.execute(_SARF, params)
        for scope, variable, ai_value, gt_value, total in cursor.fetchall():
            table = totals[PART[scope]]["sarf"].setdefault(variable, {})
            table.setdefault(ai_value, {})[gt_value] = _integer(total)
    return totals


def _sarf_columns() -> list[tuple[str, str]]:
    return [(table, variable) for table in SARF_TABLES for variable in SARF_VARIABLES]


def _integer(total: Any) -> int:
    """A sum as PostgreSQL gives it (numeric: a Decimal; NULL where no row has the key)."""
    if total is None:
        return 0
    if total != total.to_integral_value():
        raise ValueError(f"a contribution's sum is not an integer: {total}")
    return int(total)


def _folded(family: str, run_id: int | None) -> dict[str, dict[str, Any]]:
    rows = MetricResult.objects.filter(
        family=family, run_id=run_id, scope__in=tuple(PART), contribution__isnull=False
    ).values_list("scope", "contribution")
    found: dict[str, list[Any]] = {part: [] for part in PART.values()}
    for scope, contribution in rows.iterator():
        found[PART[scope]].append(contribution)
    return {part: total_contributions(found[part]) for part in PART.values()}
