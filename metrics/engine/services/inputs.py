"""What a statement or discussion result is computed from: the approved ground truth and the
run's extractions, read in bulk, and the hash that tells whether they changed.

A discussion-unit run has one extraction per discussion, scored against the approved ground
truth of all its subject statements."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from audit.models import (
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    Feedback,
    Speaker,
    Statement,
)
from metrics.engine.services.rows import Scope, _hash


@dataclass(frozen=True)
class ResultInputs:
    ai: Any
    gt: Any
    hash: str
    discussion_id: int | None = None


def _statement_inputs(statement_id: int, run_id: int) -> ResultInputs | None:
    return statements_inputs([(statement_id, run_id)]).get((statement_id, run_id))


def statements_inputs(pairs: Iterable[tuple[Any, Any]]) -> dict[tuple[int, int], ResultInputs]:
    """GT = the approved feedback; AI = the run's extraction; for (statement, run) pairs. A
    pair missing from the answer has no result to store."""
    found = children_inputs(statements=pairs)
    return {(target, run): inputs for (_, target, run), inputs in found.items()}


InputsKey = tuple[str, int, int]  # (scope, statement or discussion id, run id)


def children_inputs(
    *, statements: Iterable[tuple[Any, Any]] = (), discussions: Iterable[tuple[Any, Any]] = ()
) -> dict[InputsKey, ResultInputs]:
    """The inputs of (statement, run) and (discussion, run) pairs, by (scope, id, run), read
    in two queries: a batch holding a discussion and its statements reads (and decodes)
    each payload once. A pair missing from the answer has no result to store."""
    statements, discussions = list(statements), list(discussions)
    by_statement, by_discussion, subjects = _approved_ground_truth(
        {s for s, _ in statements}, {d for d, _ in discussions}
    )
    whole = _whole_discussion_extractions(discussions)
    subject_ids = {gt[0] for rows in by_discussion.values() for gt in rows}
    extractions = {
        (e[0], e[1]): (e[0], *e[2:])  # (statement, id, updated_at, pdp_deltas)
        for e in Extraction.objects.filter(
            run_id__in={r for _, r in statements} | {r for _, r in discussions},
            statement_id__in={s for s, _ in statements} | subject_ids,
        ).values_list("statement_id", "run_id", "id", "updated_at", "pdp_deltas")
    }
    found: dict[InputsKey, ResultInputs] = {}
    for statement_id, run_id in statements:
        gt, ai = by_statement.get(statement_id), extractions.get((statement_id, run_id))
        # Without approved GT there is nothing to score; without an extraction the run does
        # not cover the statement (it is left out rather than scored as an empty extraction).
        if gt is None or ai is None:
            continue
        inputs = [[*gt[1:4]], [*ai[1:3]]]
        found[Scope.STATEMENT, statement_id, run_id] = ResultInputs(
            ai[3], gt[4], _hash(inputs), gt[5]
        )
    for discussion_id, run_id in discussions:
        rows = by_discussion.get(discussion_id, [])
        if whole is not None and run_id in whole.runs:
            extraction = whole.extractions.get((discussion_id, run_id))
            discussion = _whole_discussion_inputs(rows, subjects.get(discussion_id, 0), extraction)
        else:
            discussion = _discussion_pair_inputs(rows, run_id, extractions)
        if discussion is not None:
            found[Scope.DISCUSSION, discussion_id, run_id] = discussion
    return found


def _approved_ground_truth(
    statement_ids: set[int], discussion_ids: set[int]
) -> tuple[dict[int, tuple], dict[int, list[tuple]], dict[int, int]]:
    """The approved GT of the statements, and of the discussions' subject statements in
    order, as (statement, id, version, updated_at, edited_extraction, discussion) rows; and
    how many subject statements each discussion has."""
    # The subject statements first, so the GT is read by statement id alone: an OR of the
    # two conditions made PostgreSQL join every approved feedback (a full scan per batch).
    subject_rows = (
        Statement.objects.filter(
            discussion_id__in=discussion_ids, speaker__type=Speaker.Type.SUBJECT
        ).values_list("id", "discussion_id")
        if discussion_ids
        else ()
    )
    subjects: set[int] = set()
    counts: dict[int, int] = {}
    for statement_id, discussion_id in subject_rows:
        subjects.add(statement_id)
        counts[discussion_id] = counts.get(discussion_id, 0) + 1
    by_statement: dict[int, tuple] = {}
    by_discussion: dict[int, list[tuple]] = {}
    for gt in (
        Feedback.objects.approved()
        .filter(statement_id__in=statement_ids | subjects)
        .order_by("statement__discussion_id", "statement__order")
        .values_list(
            "statement_id",
            "id",
            "version",
            "updated_at",
            "edited_extraction",
            "statement__discussion_id",
        )
    ):
        by_statement[gt[0]] = gt
        if gt[0] in subjects:
            by_discussion.setdefault(gt[5], []).append(gt)
    return by_statement, by_discussion, counts


# --- discussion-unit runs: one extraction per discussion ------------------------------------------


@dataclass(frozen=True)
class _WholeExtractions:
    runs: set[int]  # the discussion-unit runs among those asked about
    extractions: dict[tuple[int, int], tuple]  # (discussion, run) -> (id, updated_at, pdp)


def _whole_discussion_extractions(pairs: list[tuple[Any, Any]]) -> _WholeExtractions | None:
    """The extractions of the discussion-unit runs among ``pairs`` (None: there are none)."""
    runs = set(
        ExtractionRun.objects.discussion_unit()
        .filter(pk__in={r for _, r in pairs})
        .values_list("pk", flat=True)
    )
    if not runs:
        return None
    rows = DiscussionExtraction.objects.filter(
        run_id__in=runs, discussion_id__in={d for d, r in pairs if r in runs}
    ).values_list("discussion_id", "run_id", "id", "updated_at", "pdp")
    return _WholeExtractions(runs, {(row[0], row[1]): row[2:] for row in rows})


def _whole_discussion_inputs(
    rows: list[tuple], subject_count: int, extraction: tuple | None
) -> ResultInputs | None:
    """A discussion-unit run's inputs for one discussion: its one PDP against the cumulative
    approved GT, only when every subject statement has approved GT (a partly approved
    discussion is left out: its PDP would be scored against half its ground truth)."""
    if extraction is None or not subject_count or len(rows) != subject_count:
        return None
    inputs = [[*gt[:4]] for gt in rows] + [[*extraction[:2]]]
    return ResultInputs([extraction[2]], [gt[4] for gt in rows], _hash(inputs))


def whole_discussion_pairs(*, run_id: int | None = None) -> set[tuple[int, int]]:
    """(discussion, run) of the discussion-unit extractions of discussions with approved GT."""
    rows = DiscussionExtraction.objects.filter(
        discussion_id__in=Feedback.objects.approved().values("statement__discussion_id")
    )
    if run_id is not None:
        rows = rows.filter(run_id=run_id)
    return set(rows.values_list("discussion_id", "run_id"))


def _discussion_inputs(discussion_id: int, run_id: int) -> ResultInputs | None:
    return discussions_inputs([(discussion_id, run_id)]).get((discussion_id, run_id))


def discussions_inputs(pairs: Iterable[tuple[Any, Any]]) -> dict[tuple[int, int], ResultInputs]:
    """Per (discussion, run) pair: the subject statements with approved GT, in order, and the
    run's AI deltas of the same statements (``children_inputs``).

    A statement the run did not extract contributes an empty AI delta; a run that extracted
    none of them does not cover the discussion (no result: the pair is missing).
    """
    found = children_inputs(discussions=pairs)
    return {(target, run): inputs for (_, target, run), inputs in found.items()}


def _discussion_pair_inputs(
    rows: list[tuple], run_id: int, extractions: dict[tuple[int, int], tuple]
) -> ResultInputs | None:
    """One discussion's inputs in one run from its subject statements' GT rows (in order)
    and the extractions read; None when the run extracted none of them."""
    extracted = [extractions.get((gt[0], run_id)) for gt in rows]
    if not any(extracted):
        return None
    ai = [e[3] if e else None for e in extracted]
    inputs = [
        [*gt[:4], *(e[1:3] if e else (None, None))] for gt, e in zip(rows, extracted, strict=True)
    ]
    return ResultInputs(ai, [gt[4] for gt in rows], _hash(inputs))
