"""A packet's statements: each with its text and the statements before it, the AI's and the
ground truth's items of the pattern side by side, the auditor's note and the thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.urls import reverse

from audit.display import CARD_BUILDERS, Labels
from audit.models import Extraction, ExtractionRun, Feedback, Statement
from audit.selectors.threads import comments_visible_to
from metrics.engine.services import EXTRACTION
from metrics.families.extraction.patterns import (
    Pattern,
    PatternItems,
    pattern_items,
)
from metrics.models import MetricResult

CONTEXT_BEFORE = 3
TEXT_CHARS = 2000
CONTEXT_CHARS = 500
ITEMS = 20
NOTE_CHARS = 1000
COMMENTS = 10
COMMENT_CHARS = 1000


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def packet_statements(
    pattern: Pattern,
    ranked: list[tuple[int, tuple[int, int, dict[int, int]]]],
    runs: list[ExtractionRun],
    user: User,
    base_url: str,
) -> list[dict[str, Any]]:
    if not ranked:
        return []
    replicate = {run.pk: run.replicate for run in runs}
    # Each statement shown in the run where it has the most (the first replicate on a tie).
    shown = {
        statement_id: min(per_run, key=lambda r: (-per_run[r], replicate[r]))
        for statement_id, (_, _, per_run) in ranked
    }
    ids = list(shown)
    statements = {
        s.pk: s
        for s in Statement.objects.filter(pk__in=ids).select_related("speaker", "discussion")
    }
    values = {
        (run_id, statement_id): v or {}
        for run_id, statement_id, v in MetricResult.objects.filter(
            family=EXTRACTION,
            scope=MetricResult.Scope.STATEMENT,
            run__in=runs,
            statement_id__in=ids,
        ).values_list("run_id", "statement_id", "values")
    }
    discussions = {s.discussion_id for s in statements.values()}
    ai_by, gt_by, feedback = _payloads(discussions, runs)
    out = []
    for statement_id, (_, _, per_run) in ranked:
        statement, run_id = statements[statement_id], shown[statement_id]
        ai = ai_by.get((run_id, statement_id))
        approved = feedback.get(statement_id)
        gt = approved.edited_extraction if approved else None
        items = pattern_items(pattern, values.get((run_id, statement_id), {}), ai, gt)
        ai_labels = _labels(ai_by, statement, run_id)
        gt_labels = _labels(gt_by, statement, None)
        link = reverse("audit:statement", args=[statement_id]) + f"?run={run_id}"
        out.append(
            {
                "statement_id": statement_id,
                "discussion_id": statement.discussion_id,
                "discussion": statement.discussion.external_id or f"#{statement.discussion_id}",
                "order": statement.order,
                "url": base_url + link,
                "count": sum(per_run.values()),
                "runs_with_pattern": len(per_run),
                "shown_run": run_id,
                "speaker": statement.speaker.name,
                "text": cut(statement.text, TEXT_CHARS),
                "before": _before(statement),
                "ai_items": _items(pattern, items.ai, ai_labels),
                "gt_items": _items(pattern, items.gt, gt_labels),
                "pairs": _pairs(pattern, items, gt_labels, ai_labels),
                "coding": _coding(approved),
                "comments": _comments(user, statement),
            }
        )
    return out


def _payloads(
    discussions: Iterable[int], runs: list[ExtractionRun]
) -> tuple[dict, dict, dict[int, Feedback]]:
    """The AI's payloads of the runs and the approved codings in these discussions (for the
    names of people coded in earlier statements), keyed (run, statement) / (None, statement)."""
    ai = {
        (run_id, statement_id): payload
        for run_id, statement_id, payload in Extraction.objects.filter(
            run__in=runs, statement__discussion_id__in=discussions
        ).values_list("run_id", "statement_id", "pdp_deltas")
    }
    approved = {
        f.statement_id: f
        for f in Feedback.objects.approved()
        .filter(statement__discussion_id__in=discussions)
        .select_related("auditor", "guideline_version")
    }
    gt = {(None, statement_id): f.edited_extraction for statement_id, f in approved.items()}
    return ai, gt, approved


def _labels(payloads: dict, statement: Statement, run_id: int | None) -> Labels:
    """Names from the side's payloads of the discussion up to this statement, in order."""
    earlier = (
        Statement.objects.filter(discussion_id=statement.discussion_id, order__lte=statement.order)
        .order_by("order")
        .values_list("pk", flat=True)
    )
    labels = Labels()
    for statement_id in earlier:
        labels.feed(payloads.get((run_id, statement_id)))
    return labels


def _before(statement: Statement) -> list[dict[str, str]]:
    rows = (
        Statement.objects.filter(discussion_id=statement.discussion_id, order__lt=statement.order)
        .select_related("speaker")
        .order_by("-order")[:CONTEXT_BEFORE]
    )
    return [
        {"order": s.order, "speaker": s.speaker.name, "text": cut(s.text, CONTEXT_CHARS)}
        for s in reversed(list(rows))
    ]


def _entity(pattern: Pattern) -> str:
    if pattern.kind == "parents":
        return "people"
    return "events" if pattern.kind == "sarf" else pattern.entity


def _items(pattern: Pattern, items: list[dict], labels: Labels) -> list[dict[str, Any]]:
    kind = _entity(pattern)
    return [
        {"id": item.get("id"), "summary": _describe(kind, item, labels), "item": item}
        for item in items[:ITEMS]
    ]


def _describe(kind: str, item: dict, labels: Labels) -> str:
    card = CARD_BUILDERS[kind](item, labels)
    details = "; ".join(f"{name.lower()}: {value}" for name, value in card.lines)
    codes = f"; SARF {', '.join(card.codes)}" if card.codes else ""
    return f"{card.tag} {card.title} ({details}{codes})"


def _pairs(
    pattern: Pattern, items: PatternItems, gt_labels: Labels, ai_labels: Labels
) -> list[dict[str, Any]]:
    if pattern.kind == "sarf":
        return [
            {**pair, "summary": f"{pattern.variable}: AI {pair['ai']}, ground truth {pair['gt']}"}
            for pair in items.pairs[:ITEMS]
        ]
    if pattern.kind == "parents":

        def names(parents: list | None) -> str:
            if not parents:
                return "none"
            return " & ".join(
                "someone the AI listed whom nobody matched" if p is None else gt_labels.person(p)
                for p in parents
            )

        return [
            {
                **pair,
                "summary": f"{gt_labels.person(pair['gt_id'])}: parents AI {names(pair['ai'])}, "
                f"ground truth {names(pair['gt'])}",
            }
            for pair in items.pairs[:ITEMS]
        ]
    return []


def _coding(feedback: Feedback | None) -> dict[str, Any] | None:
    if feedback is None:
        return None
    return {
        "feedback_id": feedback.pk,
        "auditor": feedback.auditor.get_username(),
        "note": cut(feedback.comment or "", NOTE_CHARS),
        "guideline_version": (
            feedback.guideline_version.number if feedback.guideline_version else None
        ),
    }


def _comments(user: User, statement: Statement) -> list[dict[str, Any]]:
    visible = comments_visible_to(user=user, statement=statement)[:COMMENTS]
    return [
        {
            "author": c.author.get_username(),
            "kind": c.kind,
            "about": "the coding" if c.feedback_id else "the statement",
            "body": cut(c.body, COMMENT_CHARS),
            "created_at": c.created_at.isoformat(),
        }
        for c in visible
    ]
