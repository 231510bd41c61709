"""The approved ground truth exported in the export format (schema v1), as one document or
streamed in pieces; provisional ground truth of triaged statements on request.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from audit.models import (
    Comment,
    Discussion,
    Extraction,
    ExtractionRun,
    Feedback,
    GuidelineVersion,
    Statement,
    TriageStatement,
)
from audit.selectors.statement_f1 import run_statement_f1
from audit.services.imports import SCHEMA_VERSION, Progress
from audit.services.runs import run_reference
from evalsite.api import DomainError
from metrics.families.extraction.sarf import SARF_VARIABLES
from metrics.families.payload.items import ENTITY_KINDS, as_id, entity_items

# --- export ------------------------------------------------------------------------------------


class NothingToExport(DomainError):
    """No approved ground truth matches an export's request."""

    status_code = 404


EXPORT_CHUNK = 50  # discussions read per round of queries while exporting


class ExportOptionError(DomainError):
    """Export options that do not go together (F1 figures without a run)."""

    status_code = 400


@dataclass(frozen=True)
class Extras:
    """What an export adds to the default format: all off by default."""

    provisional: bool = False
    notes: bool = False
    f1_run: ExtractionRun | None = None


def _extras(run: ExtractionRun | None, provisional: bool, notes: bool, f1: bool) -> Extras:
    if f1 and run is None:
        raise ExportOptionError("include_f1: choose the run whose F1 figures are exported (run).")
    return Extras(provisional=provisional, notes=notes, f1_run=run if f1 else None)


def ground_truth_export(
    *,
    discussion_ids: list[int] | None = None,
    all_discussions: bool = False,
    run: ExtractionRun | None = None,
    progress: Progress | None = None,
    include_provisional: bool = False,
    include_notes: bool = False,
    include_f1: bool = False,
) -> dict:
    """The approved ground truth of the chosen discussions, in the export format (schema v1).

    Only discussions with at least one approved feedback are exported; every statement is
    included for context, with ``approved_feedback`` null where nothing is approved.
    ``include_provisional`` adds each statement's ``provisional_ground_truth`` (what review
    triage accepted without review, never mixed into ``approved_feedback``); ``include_notes``
    adds each approved coding's auditor note (``comment``) and its statement's comment thread
    (``comments``); ``include_f1`` adds, for ``run`` (required), each statement's stored F1
    figures and its matched, missed and spurious items (``f1``). All off by default: the
    default export is unchanged, and an import reads none of them. For large exports,
    ``ground_truth_export_text`` gives the same JSON piece by piece.
    """
    extras = _extras(run, include_provisional, include_notes, include_f1)
    ids = _export_ids(discussion_ids, all_discussions, include_provisional)
    entries = _exported_discussions(ids, run, progress, extras)
    return {**_export_header(), "discussions": list(entries)}


def ground_truth_export_text(
    *,
    discussion_ids: list[int] | None = None,
    all_discussions: bool = False,
    run: ExtractionRun | None = None,
    progress: Progress | None = None,
    include_provisional: bool = False,
    include_notes: bool = False,
    include_f1: bool = False,
) -> Iterator[str]:
    """The export as the text ``json.dumps(ground_truth_export(...), indent=2)`` gives, one
    discussion at a time: memory stays flat in the number of discussions. Raises
    NothingToExport (or ExportOptionError) before yielding anything."""
    extras = _extras(run, include_provisional, include_notes, include_f1)
    ids = _export_ids(discussion_ids, all_discussions, include_provisional)
    header = json.dumps(_export_header(), indent=2, ensure_ascii=False)
    return _export_pieces(header, _exported_discussions(ids, run, progress, extras))


def _export_pieces(header: str, discussions: Iterator[dict]) -> Iterator[str]:
    yield header[: -len("\n}")] + ',\n  "discussions": ['
    for index, discussion in enumerate(discussions):
        text = json.dumps(discussion, indent=2, ensure_ascii=False)
        # Nested two levels deep, as the whole document's dump would indent it.
        yield ("," if index else "") + "\n" + textwrap.indent(text, "    ")
    yield "\n  ]\n}\n"


def _export_header() -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "exported_at": timezone.now().isoformat(),
        "guidelines": _export_guidelines(),
    }


def _export_guidelines() -> list[dict]:
    """Every version of the coding guidelines, oldest first: each approved feedback names the
    one its auditor submitted under (``guideline_version``)."""
    return [
        {
            "version": g.number,
            "text": g.text,
            "note": g.note,
            "author": g.author.get_username(),
            "created_at": g.created_at.isoformat(),
        }
        for g in GuidelineVersion.objects.select_related("author").order_by("number")
    ]


def _export_ids(
    discussion_ids: list[int] | None, all_discussions: bool, include_provisional: bool
) -> list[int]:
    if not all_discussions and not discussion_ids:
        raise ValueError("Choose discussion ids or all discussions.")
    chosen = Discussion.objects.with_approved()
    if include_provisional:  # discussions whose only ground truth so far is provisional too
        provisional = Discussion.objects.filter(statements__triage__provisional=True)
        chosen = Discussion.objects.filter(
            pk__in=[*chosen.values_list("pk", flat=True), *provisional.values_list("pk", flat=True)]
        )
    if not all_discussions:
        chosen = chosen.filter(pk__in=discussion_ids)
    ids = list(chosen.order_by("pk").values_list("pk", flat=True))
    if not ids:
        raise NothingToExport("No approved ground truth matches the request.")
    return ids


# Told each exported discussion's statements and approved codings (a snapshot stores them).
Recorder = Callable[[list[Statement], dict[int, Feedback]], None]


def ground_truth_frozen_text(*, record: Recorder) -> Iterator[str]:
    """The export of every discussion with approved ground truth as it is now, without AI
    extractions (``pdp_deltas`` and ``extraction_run`` null): what a snapshot keeps. Each
    discussion's statements and approved codings are handed to ``record`` as it is written,
    so what is recorded is exactly what the file says. Raises NothingToExport."""
    ids = _export_ids(None, True, False)
    header = json.dumps(_export_header(), indent=2, ensure_ascii=False)
    discussions = _exported_discussions(ids, None, None, Extras(), extractions=False, record=record)
    return _export_pieces(header, discussions)


def _exported_discussions(
    ids: list[int],
    run: ExtractionRun | None,
    progress: Progress | None,
    extras: Extras,
    *,
    extractions: bool = True,
    record: Recorder | None = None,
) -> Iterator[dict]:
    """The discussions' export entries in id order, read EXPORT_CHUNK discussions at a time
    (four queries per chunk, two more with the provisional ground truth, one with the notes,
    one with the F1 figures)."""
    for start in range(0, len(ids), EXPORT_CHUNK):
        chunk = ids[start : start + EXPORT_CHUNK]
        statements: dict[int, list[Statement]] = {pk: [] for pk in chunk}
        for statement in (
            Statement.objects.filter(discussion_id__in=chunk)
            .select_related("speaker")
            .order_by("discussion_id", "order")
        ):
            statements[statement.discussion_id].append(statement)
        chosen = _extractions_by_statement(chunk, run) if extractions else {}
        provisional = _provisional_by_statement(chunk) if extras.provisional else None
        approved = {
            f.statement_id: f
            for f in Feedback.objects.approved()
            .filter(statement__discussion_id__in=chunk)
            .select_related("auditor", "approved_by", "guideline_version")
        }
        threads = _threads(chunk) if extras.notes else None
        f1 = _f1_by_statement(extras.f1_run, approved) if extras.f1_run else None
        for done, discussion in enumerate(
            Discussion.objects.filter(pk__in=chunk).order_by("pk"), start=start + 1
        ):
            entry = _export_discussion(discussion, statements[discussion.pk], chosen, approved)
            if record is not None:
                record(statements[discussion.pk], approved)
            for statement in entry["statements"]:
                _with_provisional(statement, provisional)
                _with_notes(statement, approved.get(statement["id"]), threads)
                _with_f1(statement, f1)
            yield entry
            if progress:
                progress(done, len(ids))


def _export_discussion(
    discussion: Discussion, statements: list[Statement], extractions: dict, approved: dict
) -> dict:
    return {
        "id": discussion.pk,
        "external_id": discussion.external_id,
        "summary": discussion.summary,
        "date": discussion.date.isoformat() if discussion.date else None,
        "created_at": discussion.created_at.isoformat(),
        "statements": [
            _export_statement(s, extractions.get(s.pk), approved.get(s.pk)) for s in statements
        ],
    }


def _provisional_by_statement(discussion_ids: list[int]) -> dict[int, dict]:
    """What review triage accepted without review, per statement (the newest run's if two)."""
    rows = (
        TriageStatement.objects.filter(
            statement__discussion_id__in=discussion_ids, provisional=True
        )
        .select_related("run__configuration")
        .order_by("run__created_at", "run_id")
    )
    extractions = {
        (e.statement_id, e.run_id): e
        for e in Extraction.objects.filter(
            statement__discussion_id__in=discussion_ids, statement__triage__provisional=True
        )
    }
    out = {}
    for row in rows:
        extraction = extractions.get((row.statement_id, row.run_id))
        out[row.statement_id] = {
            "run": run_reference(row.run),
            "confidence": row.confidence,
            "pdp_deltas": extraction.pdp_deltas if extraction else None,
        }
    return out


def _with_provisional(statement: dict, provisional: dict[int, dict] | None) -> dict:
    if provisional is not None:
        statement["provisional_ground_truth"] = provisional.get(statement["id"])
    return statement


def _threads(discussion_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Every statement's comment thread, oldest first (an export is an admin's: admins read
    every comment)."""
    threads: dict[int, list[dict[str, Any]]] = {}
    for comment in (
        Comment.objects.filter(statement__discussion_id__in=discussion_ids)
        .select_related("author")
        .in_thread_order()
    ):
        threads.setdefault(comment.statement_id, []).append(
            {
                "author": comment.author.get_username(),
                "kind": comment.kind,
                "feedback": comment.feedback_id,
                "body": comment.body,
                "created_at": comment.created_at.isoformat(),
            }
        )
    return threads


def _with_notes(
    statement: dict, feedback: Feedback | None, threads: dict[int, list[dict]] | None
) -> None:
    """The approved coding's auditor note (``comment``, what an import keeps as the note) and
    the statement's thread (``comments``; each names the coding it is about, or none)."""
    if threads is None or feedback is None:
        return
    statement["approved_feedback"]["comment"] = feedback.comment
    statement["approved_feedback"]["comments"] = threads.get(statement["id"], [])


F1_FIGURES = (
    "aggregate_micro_f1",
    *(f"{kind}_{figure}" for kind in ENTITY_KINDS for figure in ("f1", "tp", "fp", "fn")),
    *(f"{variable}_macro_f1" for variable in SARF_VARIABLES),
    "exact_match",
)


def _f1_by_statement(
    run: ExtractionRun, approved: dict[int, Feedback]
) -> dict[int, dict[str, Any] | None]:
    """Per statement with an approved coding that the run extracted: the run's F1 of it
    against that coding (``audit.selectors.statement_f1``: what metrics stores for it), with
    the items matched, missed and spurious."""
    scored = run_statement_f1(
        run_id=run.pk,
        statement_ids=approved,
        approved={pk: f.edited_extraction for pk, f in approved.items()},
    )
    reference = run_reference(run)
    computed_at = timezone.now().isoformat()
    out: dict[int, dict[str, Any] | None] = {}
    for statement_id, result in scored.items():
        values, ai = result.values, result.ai
        gt = approved[statement_id].edited_extraction or {}
        out[statement_id] = {
            "run": reference,
            "status": "fresh",  # computed now, with the settings in force
            "computed_at": computed_at,
            "figures": {name: values.get(name) for name in F1_FIGURES},
            "matched": {kind: values.get(f"{kind}_matches") or [] for kind in ENTITY_KINDS},
            "missed": {
                kind: _items(gt, kind, values.get(f"{kind}_fn_ids")) for kind in ENTITY_KINDS
            },
            "spurious": {
                kind: _items(ai, kind, values.get(f"{kind}_fp_ids")) for kind in ENTITY_KINDS
            },
        }
    return out


def _items(payload: dict, kind: str, ids: list | None) -> list[dict]:
    wanted = set(map(as_id, ids or []))
    return [item for item in entity_items(payload, kind) if as_id(item.get("id")) in wanted]


def _with_f1(statement: dict, f1: dict[int, dict[str, Any] | None] | None) -> None:
    if f1 is not None:
        statement["f1"] = f1.get(statement["id"])


def _extractions_by_statement(discussion_ids: list[int], run: ExtractionRun | None) -> dict:
    """Per statement, the chosen run's extraction, else the latest run's."""
    qs = Extraction.objects.filter(statement__discussion_id__in=discussion_ids)
    if run is not None:
        qs = qs.filter(run=run)
    chosen: dict[int, Extraction] = {}
    for extraction in qs.select_related("run__configuration").order_by("run__created_at", "run_id"):
        chosen[extraction.statement_id] = extraction
    return chosen


def _export_statement(statement: Statement, extraction, feedback: Feedback | None) -> dict:
    return {
        "id": statement.pk,
        "order": statement.order,
        "text": statement.text,
        "speaker_type": statement.speaker.get_type_display(),
        "speaker": statement.speaker.name,
        "pdp_deltas": extraction.pdp_deltas if extraction else None,
        "extraction_run": run_reference(extraction.run) if extraction else None,
        "approved_feedback": _export_feedback(feedback) if feedback else None,
    }


def _export_feedback(feedback: Feedback) -> dict:
    auditor = feedback.auditor.get_username()
    return {
        "auditor": auditor,
        "auditor_id": auditor,
        "edited_extraction": feedback.edited_extraction,
        "approved": True,
        "approved_by": feedback.approved_by.get_username() if feedback.approved_by else None,
        "approved_at": feedback.approved_at.isoformat() if feedback.approved_at else None,
        "approval": feedback.approval or "reviewed",
        "approval_reason": feedback.approval_reason,
        "guideline_version": (
            feedback.guideline_version.number if feedback.guideline_version else None
        ),
    }
