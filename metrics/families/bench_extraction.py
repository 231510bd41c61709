"""Timing of the extraction-F1 library on a synthetic workload (not a test).

run_benchmark() generates the workload first (untimed), then times the
per-statement F1 plus system aggregation, and the cumulative F1 per discussion
plus its system aggregation. Both go through the batch APIs, which give the same
results as one call per item (the tests check that). The lead's management
command prints the result.
"""

from __future__ import annotations

import time
from typing import Any

from metrics.families.extraction import (
    MatchSettings,
    calculate_discussions_cumulative_f1,
    calculate_statements_f1,
    calculate_system_cumulative_f1,
    calculate_system_f1,
    clear_caches,
)
from metrics.families.synthetic import SyntheticDiscussion, generate_workload


def run_benchmark(
    n_discussions: int = 100,
    n_statements: int = 50,
    seed: int = 0,
    *,
    noise: float = 0.2,
    settings: MatchSettings | None = None,
) -> dict[str, Any]:
    """Timing figures (seconds) and the headline F1s, as a JSON-ready dict."""
    workload = generate_workload(n_discussions, n_statements, seed=seed, noise=noise)
    clear_caches()  # time cold caches, as a fresh process would see them
    (system_seconds, system_cpu), system = _timed(_system, workload, settings)
    (cumulative_seconds, cumulative_cpu), system_cumulative = _timed(
        _cumulative, workload, settings
    )
    statements = sum(len(d.subject_statements()) for d in workload)
    return {
        "discussions": n_discussions,
        "statements": statements,
        "strategy": (settings or MatchSettings()).strategy,
        # Wall-clock seconds; *_cpu_seconds count this process only (steadier on a busy host).
        "system_seconds": round(system_seconds, 4),
        "statements_per_second": round(statements / system_seconds) if system_seconds else None,
        "cumulative_seconds": round(cumulative_seconds, 4),
        "total_seconds": round(system_seconds + cumulative_seconds, 4),
        "system_cpu_seconds": round(system_cpu, 4),
        "cumulative_cpu_seconds": round(cumulative_cpu, 4),
        "total_cpu_seconds": round(system_cpu + cumulative_cpu, 4),
        "system_aggregate_micro_f1": system.aggregate_micro_f1,
        "system_mean_statement_f1": system.mean_statement_f1,
        "cumulative_aggregate_micro_f1": system_cumulative.aggregate_micro_f1,
    }


def _timed(function, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return (time.perf_counter() - wall, time.process_time() - cpu), result


def _system(workload: list[SyntheticDiscussion], settings: MatchSettings | None):
    """Per-statement F1 of every subject statement, then the system figures."""
    per_statement = calculate_statements_f1(
        (
            (s.ai_delta, s.gt_delta, s.order, index)
            for index, discussion in enumerate(workload)
            for s in discussion.subject_statements()
        ),
        settings=settings,
    )
    return calculate_system_f1(per_statement)


def _cumulative(workload: list[SyntheticDiscussion], settings: MatchSettings | None):
    """Cumulative F1 of every discussion, then the system cumulative figures."""
    per_discussion = calculate_discussions_cumulative_f1(
        (
            ([s.ai_delta for s in statements], [s.gt_delta for s in statements], index)
            for index, statements in enumerate(d.subject_statements() for d in workload)
        ),
        settings=settings,
    )
    return calculate_system_cumulative_f1(per_discussion)


if __name__ == "__main__":
    import json

    print(json.dumps(run_benchmark(), indent=2))
