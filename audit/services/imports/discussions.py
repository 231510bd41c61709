"""The import's entry points (``discussions_import``, ``discussions_import_file``) and its pass
over the file: each discussion checked, then written, in one transaction, a group at a time."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from django.contrib.auth.models import User
from django.db import connection, transaction

from audit.derived.tallies import tallies_batched
from audit.derived.team_figures import queue_figures_refresh
from audit.models import Discussion, Extraction, Feedback, Speaker, Statement
from audit.services.audit_log import Action, audit_log_record
from audit.services.feedback import NotAllowed
from audit.services.import_shapes import ImportNotes
from audit.services.imports.checks import FileCheck
from audit.services.imports.extractions import import_discussion_extraction, import_extractions
from audit.services.imports.ground_truth import import_ground_truths
from audit.services.imports.known import Known
from audit.services.imports.limits import DEFAULT_IMPORT_RUN
from audit.services.imports.reading import (
    FileSource,
    ParsedSource,
    Source,
    canonical,
    external_id_of,
    split_discussion,
)
from audit.services.imports.statements import get_discussion, get_statements
from audit.services.imports.summary import ImportRun, ImportSummary, Progress
from audit.services.runs import run_info_issues
from audit.signals import ground_truth_changed_send
from evalsite.access import is_admin
from evalsite.perf.planner import planner_statistics_after_commit
from metrics.families.json_input import STREAM_CHUNK
from metrics.families.payload.schema import PayloadError

# Discussions whose derived counts (coding tallies, queue figures) are refreshed together: a
# refresh is a few queries whatever it counts, and until the import commits the planner has
# no statistics of the rows it wrote (it scans what grows, so a refresh costs more each time).
GROUP_DISCUSSIONS = 100


# What an import writes in bulk: the planner's statistics of these are refreshed after it.
IMPORTED_MODELS = (Discussion, Speaker, Statement, Extraction, Feedback)


def discussions_import(
    *,
    data: Any,
    by: User | None,
    run: ImportRun | None = None,
    default_run: tuple[str, str] = DEFAULT_IMPORT_RUN,
    progress: Progress | None = None,
    run_info: dict[str, Any] | None = None,
) -> ImportSummary:
    """Import every discussion of parsed data (any shape of audit/services/import_shapes.py),
    all or nothing; raises PayloadError naming each distinct problem once.

    ``by`` is the importing admin: imported ground truth is approved by them, marked "imported".
    ``run`` (or ``run_info``, an ``extraction_run`` object) is the run of the extractions the
    file gives without one; with neither, the latest replicate of ``default_run``.
    """
    info = run_info if run_info is not None else (run.info() if run else None)
    return _import(ParsedSource(data), by, default_run, progress, info)


def discussions_import_file(
    *,
    open_file: Callable[[], IO[bytes]],
    by: User | None,
    run: ImportRun | None = None,
    default_run: tuple[str, str] = DEFAULT_IMPORT_RUN,
    progress: Progress | None = None,
    chunk_size: int = STREAM_CHUNK,
    run_info: dict[str, Any] | None = None,
) -> ImportSummary:
    """discussions_import for a file too large to hold: ``open_file()`` opens it in binary
    mode (once; a case list twice, to check it and to import it), read one discussion at a
    time. Raises JsonInputError (with where) for a file that is not valid JSON."""
    info = run_info if run_info is not None else (run.info() if run else None)
    return _import(FileSource(open_file, chunk_size), by, default_run, progress, info)


def _import(
    source: Source,
    by: User | None,
    default_run: tuple[str, str],
    progress: Progress | None,
    run_info: dict[str, Any] | None = None,
) -> ImportSummary:
    if by is None or not is_admin(by):
        raise NotAllowed("Only admins import discussions and ground truth.")
    issues = run_info_issues(run_info, "run")
    if issues:
        raise PayloadError(issues)
    # The summary's notes are the check's (the shape, the keys ignored), then the writes'.
    summary = ImportSummary()
    external_ids: list[str | None] = []
    with transaction.atomic(), source.reading() as reading:
        _one_import_at_a_time()
        known = Known(default_run=default_run, run_info=run_info, by=by)
        checked = _Checked(FileCheck(reading), source, progress)
        try:
            _write(checked, known, summary, by, external_ids)
        except Exception as exc:  # what the check found comes first: the rest is checked
            if checked.error is not None:
                raise checked.error from None
            checked.write_failed = exc
        count, notes, warnings = checked.finish()
        if reading.is_list:  # a case list: its discussions are named by the digest of all of it
            with source.reading(verified=True) as again:
                items = canonical(again, ImportNotes(), case_digest=notes.case_digest)
                _write(_counted(items, count, progress), known, summary, by, external_ids)
            source.check_unchanged(reading, again)
        elif progress and checked.told != (count, count):
            progress(count, count)
        for what, n in summary.notes.not_imported.items():
            notes.not_imported[what] += n
        summary.notes, summary.warnings = notes, warnings
        _log_import(summary, by, external_ids)
        _planner_statistics_after(summary)
        _announce_import(summary)
    return summary


class _Checked:
    """The discussions of one pass over a file, each checked as it is read; the ones to write
    (those of the file's own shapes, as long as nothing was found wrong and no write failed)
    are given as (fields, statements). What the reading or ``progress`` raises waits in
    ``error`` (the writes in progress stop, then it is raised); so does a failed write in
    ``write_failed``, raised once the check of the rest found nothing wrong."""

    def __init__(self, check: FileCheck, source: Source, progress: Progress | None) -> None:
        self.check, self.source, self.progress = check, source, progress
        self.error: Exception | None = None
        self.write_failed: Exception | None = None
        self.written = 0
        self.told = (0, 0)  # what progress was last told
        self._read = self._guarded()

    def __iter__(self) -> Iterator[tuple[dict, list]]:
        return self._read

    def _guarded(self) -> Iterator[tuple[dict, list]]:
        try:
            yield from self._discussions()
        except Exception as exc:
            self.error = exc

    def _discussions(self) -> Iterator[tuple[dict, list]]:
        reading = self.check.reading
        for path, item in self.check.discussions():
            checked = self.check.discussion(path, item)
            # A case list is written in a pass of its own, once its digest is known.
            if checked and not (self.check.errors or self.write_failed or reading.is_list):
                yield checked
                self.written += 1
            if self.progress:
                # A case list is only checked in this pass; others are written as they are read.
                total = (
                    0 if reading.is_list else self.source.total_estimate(reading, self.check.count)
                )
                self.told = (self.written if total else 0, total)
                self.progress(*self.told)

    def finish(self) -> tuple[int, ImportNotes, list[str]]:
        """The rest of the file checked: raises what the reading raised, then what the check
        found, then the write's failure; else returns FileCheck.finish's answer."""
        for _ in self:
            pass
        if self.error is not None:
            raise self.error
        result = self.check.finish()
        if self.write_failed is not None:
            raise self.write_failed
        return result


def _counted(
    items: Iterator[tuple[str, Any]], count: int, progress: Progress | None
) -> Iterator[tuple[dict, list]]:
    """A checked file's discussions read again, with the progress of their writing."""
    for done, (path, item) in enumerate(items, start=1):
        _path, fields, statements = split_discussion(item, path)
        yield fields, statements
        if progress:
            progress(done, count)


def _write(
    items: Iterable[tuple[dict, list]],
    known: Known,
    summary: ImportSummary,
    by: User,
    external_ids: list[str | None],
) -> None:
    """Write the discussions, a group at a time (derived counts refreshed once a group)."""
    discussions = iter(items)
    done, group_start = 0, -1
    while done > group_start:  # a group of discussions at a time, read one by one
        group_start = done
        with tallies_batched():  # one recount per group, not one per coding
            for fields, statements in itertools.islice(discussions, GROUP_DISCUSSIONS):
                _import_discussion(fields, statements, known, summary, by)
                _query_log_forget()
                if len(external_ids) < LOGGED_EXTERNAL_IDS:
                    external_ids.append(external_id_of(fields))
                done += 1
            if known.figures_due:
                queue_figures_refresh(discussion_ids=known.figures_due)
                known.figures_due.clear()
        _query_log_forget()


def _planner_statistics_after(summary: ImportSummary) -> None:
    """Once committed, and before the metrics plan their recompute of what it touched, the
    planner sees the imported rows (evalsite/perf/planner.py)."""
    written = summary.statements_created + summary.extractions_created + summary.approved_created
    planner_statistics_after_commit(models=IMPORTED_MODELS, written=written)


def _query_log_forget() -> None:
    """With DEBUG, the connection keeps the SQL of its last 9,000 queries; a discussion's bulk
    inserts carry every payload, so an import's log would hold hundreds of discussions'.
    An import is not a request, whose start would clear it: clear it a discussion at a time,
    unless queries are being counted (CaptureQueriesContext forces the debug cursor)."""
    if not connection.force_debug_cursor:
        connection.queries_log.clear()


LOGGED_EXTERNAL_IDS = 1000  # the audit log names the first discussions of an import


# Any number fixed for this purpose; pg_advisory_xact_lock keys are application-defined.
IMPORT_LOCK_KEY = 170_001


def _one_import_at_a_time() -> None:
    """Imports wait for each other until the transaction ends, so two submissions of one file
    (or one external id) find each other's discussions instead of both creating them."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [IMPORT_LOCK_KEY])


def _log_import(summary: ImportSummary, by, external_ids: list[str | None]) -> None:
    audit_log_record(
        actor=by,
        action=Action.IMPORT,
        object_type="import",
        message=f"Imported: {summary.line()}.",
        details={
            "external_ids": external_ids,
            "imported_feedback": summary.imported_feedback_ids,
            "statements_created": summary.statements_created,
            "extractions_created": summary.extractions_created,
            "approved_created": summary.approved_created,
            "approved_kept": summary.approved_kept,
        },
    )


def _import_discussion(fields: dict, statements: list, known: Known, summary, by) -> None:
    """One discussion in a number of queries that does not grow with its statements: what is
    in place is read a table at a time, what is new written a table at a time."""
    discussion, created = get_discussion(fields, summary)
    rows = get_statements(discussion, statements, known, summary, existing=not created)
    # A discussion just created has nothing in place to look for.
    extracted = import_extractions(rows, statements, known, summary, existing=not created)
    if import_discussion_extraction(discussion, fields, known, summary):
        extracted |= {row.pk for row in rows if row.is_subject}
    approved = import_ground_truths(rows, statements, known, summary, by, existing=not created)
    for row in rows:
        if row.pk in extracted or row.pk in approved:
            summary.touched_statement_ids.append(row.pk)


def _announce_import(summary: ImportSummary) -> None:
    if not summary.touched_statement_ids:
        return
    ground_truth_changed_send(statement_ids=summary.touched_statement_ids, reason="import")
