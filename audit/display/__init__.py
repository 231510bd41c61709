"""Turning PDP payloads into readable cards, diffs and the statement F1 panel.

Pure functions over plain dicts: templates get ready-made strings and never resolve ids. By
topic: ``labels`` (names for ids), ``problems`` (a payload's problems in words), ``cards``,
``diffs``, ``changes`` and ``f1_panel``.
"""

from audit.display.cards import (
    CARD_BUILDERS,
    MARRIED,
    SARF_ARROWS,
    SARF_LETTERS,
    Card,
    PayloadView,
    bond_card,
    event_card,
    person_card,
    present,
    sarf_codes,
)
from audit.display.changes import (
    NOTHING,
    PEOPLE_LIST_FIELDS,
    PERSON_FIELDS,
    TAGS,
    FieldChange,
    field_changes,
)
from audit.display.diffs import (
    KindDiff,
    SubmitSummary,
    changed_fields,
    diff_kind,
    diff_summary,
    submit_summary,
)
from audit.display.f1_panel import F1Row, f1_rows, f1_tone, sarf_scores
from audit.display.labels import (
    KIND_TITLES,
    Labels,
    distinct_names,
    item_words,
    person_name,
    readable_labels,
)
from audit.display.problems import (
    FIELD_WORDS,
    SINGULAR,
    field_problem,
    json_problem_sentence,
    problem_sentence,
)

__all__ = [
    "CARD_BUILDERS",
    "FIELD_WORDS",
    "KIND_TITLES",
    "MARRIED",
    "NOTHING",
    "PEOPLE_LIST_FIELDS",
    "PERSON_FIELDS",
    "SARF_ARROWS",
    "SARF_LETTERS",
    "SINGULAR",
    "TAGS",
    "Card",
    "F1Row",
    "FieldChange",
    "KindDiff",
    "Labels",
    "PayloadView",
    "SubmitSummary",
    "bond_card",
    "changed_fields",
    "diff_kind",
    "diff_summary",
    "distinct_names",
    "event_card",
    "f1_rows",
    "f1_tone",
    "field_changes",
    "field_problem",
    "item_words",
    "json_problem_sentence",
    "person_card",
    "person_name",
    "present",
    "problem_sentence",
    "readable_labels",
    "sarf_codes",
    "sarf_scores",
    "submit_summary",
]
