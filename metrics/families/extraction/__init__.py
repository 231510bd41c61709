"""Extraction F1: AI-extracted PDP deltas scored against approved ground truth.

Pure Python (numpy, scipy, scikit-learn definitions, rapidfuzz, dateutil); no Django.
"""

from .aggregate import (
    FIXED_ONE,
    SCALAR_TOTALS,
    add_contributions,
    calculate_system_cumulative_f1,
    calculate_system_f1,
    empty_totals,
    fixed,
    statement_contribution,
    sum_contributions,
    system_cumulative_f1_from_totals,
    system_f1_from_totals,
    total_contributions,
)
from .batch import (
    DiscussionInput,
    StatementInput,
    calculate_discussions_cumulative_f1,
    calculate_statements_f1,
)
from .cumulative import calculate_cumulative_f1, cumulative
from .dates import clear_date_cache, parse_date
from .matching import (
    MatchedPair,
    MatchResult,
    clear_score_cache,
    match_events,
    match_pair_bonds,
    match_people,
)
from .normalize import normalize_for_exact_match
from .results import (
    ComparisonMetrics,
    CumulativeF1Metrics,
    StatementF1Metrics,
    SystemCumulativeF1Metrics,
    SystemF1Metrics,
)
from .sarf import (
    SARF_VARIABLES,
    clear_sarf_cache,
    macro_f1_from_confusion,
    macro_f1_from_pairs,
)
from .scores import f1_from_counts, precision_recall_f1
from .settings import DEFAULT_SETTINGS, MatchSettings
from .statement import calculate_statement_f1, compare_payloads
from .text import clear_text_cache


def clear_caches() -> None:
    """Forget cached date parses, normalised strings, SARF codes and rounded scores
    (benchmarks time a cold start)."""
    clear_date_cache()
    clear_text_cache()
    clear_sarf_cache()
    clear_score_cache()


__all__ = [
    "DEFAULT_SETTINGS",
    "FIXED_ONE",
    "SARF_VARIABLES",
    "SCALAR_TOTALS",
    "ComparisonMetrics",
    "CumulativeF1Metrics",
    "DiscussionInput",
    "MatchResult",
    "MatchSettings",
    "MatchedPair",
    "StatementF1Metrics",
    "StatementInput",
    "SystemCumulativeF1Metrics",
    "SystemF1Metrics",
    "add_contributions",
    "calculate_cumulative_f1",
    "calculate_discussions_cumulative_f1",
    "calculate_statement_f1",
    "calculate_statements_f1",
    "calculate_system_cumulative_f1",
    "calculate_system_f1",
    "clear_caches",
    "compare_payloads",
    "cumulative",
    "empty_totals",
    "f1_from_counts",
    "fixed",
    "macro_f1_from_confusion",
    "macro_f1_from_pairs",
    "match_events",
    "match_pair_bonds",
    "match_people",
    "normalize_for_exact_match",
    "parse_date",
    "precision_recall_f1",
    "statement_contribution",
    "sum_contributions",
    "system_cumulative_f1_from_totals",
    "system_f1_from_totals",
    "total_contributions",
]
