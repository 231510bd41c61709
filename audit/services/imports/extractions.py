"""The AI extractions an import writes (a statement's ``pdp_deltas``, a discussion-unit run's
PDP of a discussion), and a run's extractions given over the API (``extractions_import``)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from audit.models import (
    Discussion,
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    RunConfiguration,
    Statement,
)
from audit.services.imports.known import Known
from audit.services.imports.reading import join, prefixed
from audit.services.imports.summary import ImportSummary
from audit.services.runs import WrongUnit, discussion_run_info, run_unit_check
from audit.signals import extractions_changed_send
from evalsite.perf.bulk import values_insert
from metrics.families.payload.rules import CONFLICT, UNKNOWN
from metrics.families.payload.schema import PayloadError, PayloadIssue, normalize_pdp, pdp_issues


def import_extractions(
    rows: list[Statement], statements: list[dict], known: Known, summary, *, existing: bool
) -> set[int]:
    """The subject statements' extractions the file gives, where their run has none yet
    (``existing``: the statements may have some); returns the statements given one."""
    given = [
        (row, known.run_for(data), data["pdp_deltas"])
        for row, data in zip(rows, statements, strict=True)
        if data.get("pdp_deltas") is not None and row.is_subject
    ]
    experts = sum(
        data.get("pdp_deltas") is not None and not row.is_subject
        for row, data in zip(rows, statements, strict=True)
    )
    if experts:
        summary.notes.not_imported["extraction (pdp_deltas) of an expert statement"] += experts
    if not given:
        return set()
    for run in {run for _, run, _ in given}:
        if run.unit != RunConfiguration.Unit.STATEMENT:
            message = f"run {run.pk} ({run.label}) extracts whole discussions: give its PDP as "
            message += "the discussion's discussion_extraction"
            raise PayloadError([PayloadIssue("pdp_deltas", message, CONFLICT)])
    have = set()
    if existing:
        have = set(
            Extraction.objects.filter(statement__in=[row for row, _, _ in given]).values_list(
                "statement_id", "run_id"
            )
        )
    new: list[dict[str, Any]] = [
        {"statement_id": row.pk, "run_id": run.pk, "pdp_deltas": normalized(payload)}
        for row, run, payload in given
        if (row.pk, run.pk) not in have
    ]
    values_insert(Extraction, new)
    summary.extractions_created += len(new)
    if len(given) > len(new):
        kept = "extraction already in place for its run (kept)"
        summary.notes.not_imported[kept] += len(given) - len(new)
    labels = sorted({run.label for _, run, _ in given})
    summary.run = summary.run or ", ".join(labels)
    return {extraction["statement_id"] for extraction in new}


def normalized(payload: dict) -> dict:
    """A payload of the file as stored: the file's parsed data is written once and dropped, so
    its items are stored as they are, not copied."""
    return normalize_pdp(payload)


def import_discussion_extraction(
    discussion: Discussion, fields: dict, known: Known, summary: ImportSummary
) -> bool:
    """A discussion-unit run's PDP of the whole discussion, when the file gives one and the
    run has none yet; returns whether it was imported."""
    entry = fields.get("discussion_extraction")
    if not isinstance(entry, dict):
        return False
    run = known.run_for({"extraction_run": discussion_run_info(entry, known.run_info)})
    try:
        run_unit_check(run, RunConfiguration.Unit.DISCUSSION)
    except WrongUnit as exc:
        raise PayloadError([PayloadIssue("discussion_extraction", str(exc), CONFLICT)]) from None
    _, created = DiscussionExtraction.objects.get_or_create(
        discussion=discussion, run=run, defaults={"pdp": normalized(entry["pdp"])}
    )
    summary.extractions_created += int(created)
    return created


@transaction.atomic
def extractions_import(*, run: ExtractionRun, items: list[dict]) -> list[Extraction]:
    """Create or replace a run's extractions: items are {statement: id, pdp_deltas: {...}}."""
    run_unit_check(run, RunConfiguration.Unit.STATEMENT)
    statements = Statement.objects.select_related("speaker").in_bulk(
        [i.get("statement") for i in items if isinstance(i, dict)]
    )
    _check_extraction_items(items, statements)
    saved = []
    for item in items:
        extraction, _ = Extraction.objects.update_or_create(
            statement=statements[item["statement"]],
            run=run,
            defaults={"pdp_deltas": normalized(item["pdp_deltas"])},
        )
        saved.append(extraction)
    extractions_changed_send(statement_ids=[e.statement_id for e in saved], reason="extractions")
    return saved


def _check_extraction_items(items: list[Any], statements: dict) -> None:
    """Every problem of every item at once; the gravest kind decides the status."""
    issues: list[PayloadIssue] = []
    for index, item in enumerate(items):
        issues += _extraction_item_issues(item, f"[{index}]", statements)
    if issues:
        raise PayloadError(issues)


def _extraction_item_issues(item: Any, path: str, statements: dict) -> list[PayloadIssue]:
    if not isinstance(item, dict):
        return [PayloadIssue(path, "expected an object with 'statement' and 'pdp_deltas'")]
    issues = []
    statement = statements.get(item.get("statement"))
    where = join(path, "statement")
    if statement is None:
        issues.append(PayloadIssue(where, f"no statement {item.get('statement')!r}", UNKNOWN))
    elif not statement.is_subject:
        issues.append(PayloadIssue(where, "only subject statements carry extractions", CONFLICT))
    if "pdp_deltas" not in item:
        return [*issues, PayloadIssue(join(path, "pdp_deltas"), "missing required field")]
    return issues + prefixed(pdp_issues(item["pdp_deltas"]), join(path, "pdp_deltas"))
