"""What a reviewer reads of a coding's past: its revisions with what changed, and the item ids
earlier statements' coding may be referred to by."""

from __future__ import annotations

import json

from django.db import connection

from audit.display import diff_summary, field_changes
from audit.models import (
    Extraction,
    Feedback,
    FeedbackRevision,
    Statement,
)
from metrics.families.payload.items import ENTITY_KINDS, as_id, payload_ids


def feedback_revisions(*, feedback: Feedback) -> list[FeedbackRevision]:
    """A feedback's revisions, newest first, each with what it changed.

    Each revision gets `changes` (field by field), `summary` (one line), `first` (the first
    version folded into it), `is_current` (its payload is the one in force) and `after_json`.
    A revision's change is relative to the revision before it; a conflict's, to the payload
    it lost against (it was never applied).
    """
    revisions = list(
        feedback.revisions.select_related("author", "restored_from").order_by("version", "id")
    )
    previous: dict | None = None
    for revision in revisions:
        before = revision.before if revision.action == "conflict" else previous
        revision.changes = field_changes(before, revision.after)
        revision.summary = diff_summary(before, revision.after)
        revision.first = revision.first_version or revision.version
        revision.after_json = json.dumps(revision.after, indent=2)
        revision.is_current = False
        if revision.action != "conflict":
            previous = revision.after
    current = [r for r in revisions if r.after == feedback.edited_extraction]
    if current:
        current[-1].is_current = True
    return list(reversed(revisions))


# The ids of the dict items of each entity list of every payload (every run's extraction and
# every coder's coding) of the statements above one, as JSON text: PostgreSQL takes them out of
# the payloads, so the payloads are neither sent nor decoded (far down a long discussion,
# hundreds of payloads for a few hundred ids).
_EARLIER_IDS_SQL = """
SELECT DISTINCT lists.kind, (item -> 'id')::text
FROM (
    SELECT payload.pdp_deltas AS doc FROM {extraction} payload
    JOIN {statement} statement ON statement.id = payload.statement_id
    WHERE statement.discussion_id = %(discussion)s AND statement."order" < %(order)s
    UNION ALL
    SELECT payload.edited_extraction FROM {feedback} payload
    JOIN {statement} statement ON statement.id = payload.statement_id
    WHERE statement.discussion_id = %(discussion)s AND statement."order" < %(order)s
) payloads
CROSS JOIN (VALUES ('people'), ('events'), ('pair_bonds')) AS lists(kind)
CROSS JOIN LATERAL jsonb_array_elements(
    CASE WHEN jsonb_typeof(payloads.doc -> lists.kind) = 'array'
    THEN payloads.doc -> lists.kind ELSE '[]'::jsonb END
) AS item
WHERE jsonb_typeof(item) = 'object' AND item ? 'id'
"""


def earlier_item_ids(*, statement: Statement) -> dict[str, set]:
    """The ids of the people, events and pair bonds in every payload of the discussion's
    earlier statements (which a delta may refer to): `metrics.families.payload.rules.payload_ids` of them all."""
    if connection.vendor != "postgresql":
        earlier = {"statement__discussion_id": statement.discussion_id}
        earlier["statement__order__lt"] = statement.order
        ai = Extraction.objects.filter(**earlier).values_list("pdp_deltas", flat=True)
        coded = Feedback.objects.filter(**earlier).values_list("edited_extraction", flat=True)
        return payload_ids([*ai, *coded])
    tables = {
        "extraction": Extraction._meta.db_table,
        "feedback": Feedback._meta.db_table,
        "statement": Statement._meta.db_table,
    }
    ids: dict[str, set] = {kind: set() for kind in ENTITY_KINDS}
    with connection.cursor() as cursor:
        cursor.execute(
            _EARLIER_IDS_SQL.format(**tables),
            {"discussion": statement.discussion_id, "order": statement.order},
        )
        for kind, text in cursor.fetchall():
            ident = as_id(json.loads(text))  # as payload_ids reads an id: ints and strings
            if ident is not None:
                ids[kind].add(ident)
    return ids
