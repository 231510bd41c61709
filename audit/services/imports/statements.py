"""A file's discussions, speakers and statements: the ones in place found, new ones
inserted a table at a time."""

from __future__ import annotations

from django.utils.dateparse import parse_date

from audit.models import Discussion, Speaker, Statement
from audit.services.import_shapes import CONTINUED
from audit.services.imports.known import Known
from audit.services.imports.reading import external_id_of
from audit.services.imports.summary import ImportSummary
from evalsite.perf.bulk import rows_insert


def get_discussion(fields: dict, summary: ImportSummary) -> tuple[Discussion, bool]:
    external_id = external_id_of(fields)
    existing = Discussion.objects.filter(external_id=external_id).first() if external_id else None
    if existing:
        # A later part of a case list's discussion adds to it: counted with its first part.
        summary.discussions_existing += 0 if fields.get(CONTINUED) else 1
        return existing, False
    summary.discussions_created += 1
    date = fields.get("date")
    created = Discussion.objects.create(
        summary=fields.get("summary") or "",
        external_id=external_id,
        date=parse_date(date) if isinstance(date, str) else None,
    )
    return created, True


def get_statements(
    discussion: Discussion,
    statements: list[dict],
    known: Known,
    summary: ImportSummary,
    *,
    existing: bool,
) -> list[Statement]:
    """The discussion's statement at each order the file gives: the one in place (an existing
    discussion's), else a new one, all new ones written in one insert."""
    orders = [data.get("order", index) for index, data in enumerate(statements)]
    found: dict[int, Statement] = {}
    if existing:
        rows = discussion.statements.filter(order__in=orders).select_related("speaker")
        found = {row.order: row for row in rows}
    new = [
        (order, data) for order, data in zip(orders, statements, strict=True) if order not in found
    ]
    speakers = _get_speakers(discussion, [data for _, data in new], existing=existing)
    created = [_new_statement(discussion, speakers, order, data) for order, data in new]
    rows_insert(created)
    if created:
        summary.statements_created += len(created)
        # The count of what is still to code follows (with the rest of the group's
        # discussions, in _import).
        known.figures_due.add(discussion.pk)
    found |= {row.order: row for row in created}
    return [found[order] for order in orders]


def _new_statement(
    discussion: Discussion, speakers: dict[str, Speaker], order: int, data: dict
) -> Statement:
    speaker = speakers[_speaker_name(data)]
    return Statement(discussion=discussion, speaker=speaker, order=order, text=data["text"])


def _speaker_name(data: dict) -> str:
    return str(data.get("speaker") or str(data["speaker_type"]).lower().title())


def _get_speakers(
    discussion: Discussion, statements: list[dict], *, existing: bool
) -> dict[str, Speaker]:
    """The speakers of new statements by name: the discussion's, else new ones, of the type
    the first statement naming them gives."""
    wanted: dict[str, str] = {}
    for data in statements:
        wanted.setdefault(_speaker_name(data), str(data["speaker_type"]).lower())
    found: dict[str, Speaker] = {}
    if existing and wanted:
        found = {s.name: s for s in discussion.speakers.filter(name__in=list(wanted))}
    new = [
        Speaker(discussion=discussion, name=name, type=kind)
        for name, kind in wanted.items()
        if name not in found
    ]
    return found | {s.name: s for s in Speaker.objects.bulk_create(new)}
