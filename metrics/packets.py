"""Failure packets: for a run (or a configuration's replicates) and one error pattern, what to
paste into an assistant asked to improve the extraction prompt, as JSON and as Markdown.

A packet holds the pattern in one line with its counts (how often, in how many statements and
discussions, its share of all errors), the N statements where it happens most (each with its
text and the few statements before it, the AI's and the ground truth's items of the pattern
side by side, the auditor's note, the comment thread and the guidelines version it was coded
under) and the guideline sections in force that speak of it.

Reads stored results: the counts and the ranking come from the error index of each run's
stored error analysis (``metrics.engine.errors``), the items from the listed statements'
stored results and payloads; wrong parent links, which the index does not count, are found
by reading the runs' statement results that match people (``PARENT_CHUNK`` at a time).

Bounded: at most ``MAX_STATEMENTS`` statements; per statement its text cut at
``TEXT_CHARS``, ``CONTEXT_BEFORE`` statements before it cut at ``CONTEXT_CHARS``, at most
``ITEMS`` items a side, the note cut at ``NOTE_CHARS``, at most ``COMMENTS`` comments cut at
``COMMENT_CHARS``; guideline sections up to ``GUIDELINE_CHARS``. Whatever is left over
``MAX_MARKDOWN`` characters of Markdown (or ``MAX_JSON`` of JSON) drops statements from the end,
and the packet says so. Admins only (a packet shows everyone's codings); comments are those
the reader may see (``audit.selectors.threads.comments_visible_to``).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import zip_longest
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q, Sum
from django.urls import reverse

from audit.display import CARD_BUILDERS, Labels
from audit.models import Extraction, ExtractionRun, Feedback, Statement
from audit.selectors.threads import comments_visible_to
from audit.services.guidelines import guideline_current
from evalsite.access import is_admin
from evalsite.api import DomainError
from metrics.engine.comparison import Side
from metrics.engine.derived import error_analysis_read
from metrics.engine.errors import ERROR_COUNT_KINDS, error_figure
from metrics.engine.services import EXTRACTION
from metrics.families.extraction.patterns import (
    PARENT_LINKS,
    Pattern,
    PatternItems,
    parent_link_errors,
    pattern_cells,
    pattern_items,
    pattern_parse,
    sarf_patterns,
)
from metrics.models import MetricResult, StatementError

FORMAT_VERSION = 1
DEFAULT_STATEMENTS = 20
MAX_STATEMENTS = 50
CONTEXT_BEFORE = 3
TEXT_CHARS = 2000
CONTEXT_CHARS = 500
ITEMS = 20
NOTE_CHARS = 1000
COMMENTS = 10
COMMENT_CHARS = 1000
GUIDELINE_CHARS = 4000
MAX_MARKDOWN = 200_000
MAX_JSON = 400_000
PARENT_CHUNK = 2000
# Words a guideline section must name to be one of a pattern's.
TOPICS = {
    "people": ("person", "people"),
    "events": ("event",),
    "pair_bonds": ("pair bond", "bond", "married", "partner"),
    "parents": ("parent", "child", "pair bond"),
}


class PacketInputError(DomainError):
    status_code = 400


class PacketNotAllowed(DomainError):
    status_code = 403


class PacketNotReady(DomainError):
    """A run's error analysis was never computed: it is being computed now."""

    status_code = 409


def pattern_get(key: object) -> Pattern:
    try:
        return pattern_parse(str(key or ""))
    except ValueError as exc:
        raise PacketInputError(f"pattern: {exc}") from exc


def statements_wanted(value: object) -> int:
    if value in (None, ""):
        return DEFAULT_STATEMENTS
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_STATEMENTS:
        raise PacketInputError(f"n: expected a whole number from 1 to {MAX_STATEMENTS}")
    return int(text)


# --- counting ------------------------------------------------------------------------------------


def _figures(pattern: Pattern, totals: dict[str, list[int]]) -> list[str]:
    """The error index's figures the pattern sums (SARF: its confusion cells that occur)."""
    if pattern.kind == "entity":
        return [f"{pattern.entity}_{'fn' if pattern.missed else 'fp'}"]
    if pattern.kind == "event_kind":
        return [error_figure(event_kind=pattern.event_kind, missed=pattern.missed)]
    cells = []
    for figure in totals:
        parts = figure.split(":")
        ours = len(parts) == 4 and parts[0] == "sarf" and parts[1] == pattern.variable
        if ours and pattern.cell(parts[2], parts[3]):
            cells.append(figure)
    return sorted(cells)


def _total_errors(totals: dict[str, list[int]]) -> int:
    """Every error the error analysis counts: missed and spurious items, wrong SARF codes."""
    return sum(totals.get(kind, (0, 0))[1] for kind in (*ERROR_COUNT_KINDS, "sarf"))


# One statement's part: (discussion id, order) and its count per run.
Found = dict[int, tuple[int, int, dict[int, int]]]


def _index_found(runs: Sequence[ExtractionRun], figures: list[str]) -> Found:
    found: Found = {}
    rows = (
        StatementError.objects.filter(run__in=runs, figure__in=figures)
        .values("statement_id", "discussion_id", "order", "run_id")
        .annotate(n=Sum("count"))
        .order_by()
    )
    for row in rows:
        _, _, per_run = found.setdefault(
            row["statement_id"], (row["discussion_id"], row["order"], {})
        )
        per_run[row["run_id"]] = per_run.get(row["run_id"], 0) + row["n"]
    return found


def _parent_found(runs: Sequence[ExtractionRun]) -> Found:
    """Wrong parent links per statement, read from every statement result that paired people
    (with the AI's extraction and the approved coding of those statements)."""
    found: Found = {}
    results = (
        MetricResult.objects.filter(
            family=EXTRACTION, scope=MetricResult.Scope.STATEMENT, run__in=runs
        )
        .exclude(Q(values__people_matches=[]) | Q(values__people_matches__isnull=True))
        .order_by("pk")
    )
    last = 0
    while chunk := list(
        results.filter(pk__gt=last).values_list(
            "pk",
            "run_id",
            "statement_id",
            "statement__discussion_id",
            "statement__order",
            "values__people_matches",
        )[:PARENT_CHUNK]
    ):
        last = chunk[-1][0]
        ids = [row[2] for row in chunk]
        ai = {
            (run_id, statement_id): payload
            for run_id, statement_id, payload in Extraction.objects.filter(
                run__in=runs, statement_id__in=ids
            ).values_list("run_id", "statement_id", "pdp_deltas")
        }
        gt = dict(
            Feedback.objects.approved()
            .filter(statement_id__in=ids)
            .values_list("statement_id", "edited_extraction")
        )
        for _, run_id, statement_id, discussion_id, order, matches in chunk:
            n = len(
                parent_link_errors(ai.get((run_id, statement_id)), gt.get(statement_id), matches)
            )
            if n:
                _, _, per_run = found.setdefault(statement_id, (discussion_id, order, {}))
                per_run[run_id] = n
    return found


# --- the patterns a run's error analysis offers --------------------------------------------------


def packet_patterns(
    totals: dict[str, Any] | None, event_kinds: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The patterns of a run's error analysis with their counts (from the run's stored totals
    and event kinds), most frequent first, then wrong parent links (counted in the packet)."""
    totals = totals or {}
    rows: list[dict[str, Any]] = [
        {"key": kind, "count": int(totals.get(kind) or 0)} for kind in ERROR_COUNT_KINDS
    ]
    for row in event_kinds:
        for key, field in (("events_fn", "missed"), ("events_fp", "spurious")):
            rows.append({"key": f"{key}:{row['kind']}", "count": int(row.get(field) or 0)})
    confusions = totals.get("sarf") or {}
    for pattern in sarf_patterns():
        rows.append(
            {
                "key": pattern.key,
                "count": pattern_cells(pattern, confusions.get(pattern.variable) or {}),
            }
        )
    shown = [{**row, "label": pattern_parse(row["key"]).label} for row in rows if row["count"] > 0]
    shown.sort(key=lambda row: -row["count"])
    parents = pattern_parse(PARENT_LINKS)
    return [*shown, {"key": parents.key, "label": parents.label, "count": None}]


# --- the packet ----------------------------------------------------------------------------------


def failure_packet(
    *, user: User, side: Side, pattern: str, n: object = DEFAULT_STATEMENTS, base_url: str = ""
) -> dict[str, Any]:
    """The packet of ``pattern`` (``metrics.families.extraction.patterns``) over the side's runs,
    its ``n`` most telling statements listed (most instances first). Links start with
    ``base_url``. Raises PacketInputError (400), PacketNotAllowed (403) or PacketNotReady (409:
    an error analysis is being computed for the first time)."""
    if not is_admin(user):
        raise PacketNotAllowed("Failure packets are for admins: they show everyone's codings.")
    chosen = pattern_get(pattern)
    wanted = statements_wanted(n)
    runs = list(side.runs)
    analyses = {run.pk: error_analysis_read(run) for run in runs}
    if any(analysis.values is None for analysis in analyses.values()):
        raise PacketNotReady(
            "The error analysis of this run is being computed for the first time: try again "
            "in a moment."
        )
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for analysis in analyses.values():
        for figure, (statements, count) in ((analysis.values or {}).get("figures") or {}).items():
            totals[figure][0] += statements
            totals[figure][1] += count
    found = (
        _parent_found(runs)
        if chosen.kind == "parents"
        else _index_found(runs, _figures(chosen, dict(totals)))
    )
    count = sum(sum(per_run.values()) for _, _, per_run in found.values())
    total_errors = _total_errors(dict(totals))
    ranked = sorted(
        found.items(), key=lambda item: (-sum(item[1][2].values()), item[1][0], item[1][1], item[0])
    )
    packet: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "pattern": {"key": chosen.key, "label": chosen.label},
        "side": {"spec": side.spec, "label": side.label},
        "runs": [{"id": r.pk, "label": r.label, "replicate": r.replicate} for r in runs],
        "ground_truth": "on live ground truth",
        "updating": any(a.updating for a in analyses.values()),
        "counts": {
            "count": count,
            "statements": len(found),
            "discussions": len({discussion for discussion, _, _ in found.values()}),
            "total_errors": total_errors,
            "share_of_errors": count / total_errors if total_errors else None,
            "per_run": {
                str(run.pk): sum(per_run.get(run.pk, 0) for _, _, per_run in found.values())
                for run in runs
            },
        },
        "summary": "",
        "limits": {
            "statements": wanted,
            "max_statements": MAX_STATEMENTS,
            "max_markdown_chars": MAX_MARKDOWN,
        },
        "guidelines": _guidelines(chosen),
        "statements": _statements(chosen, ranked[:wanted], runs, user, base_url),
        "truncated": "",
    }
    packet["summary"] = _summary(packet)
    return _bounded(packet)


def _summary(packet: dict[str, Any]) -> str:
    counts, label = packet["counts"], packet["pattern"]["label"]
    share = counts["share_of_errors"]
    share_text = f"{share:.1%}" if share is not None else "n/a"
    return (
        f"{label.capitalize()}: {counts['count']} in {counts['statements']} statement"
        f"{'s' if counts['statements'] != 1 else ''} of {counts['discussions']} discussion"
        f"{'s' if counts['discussions'] != 1 else ''}, {share_text} of all "
        f"{counts['total_errors']} errors ({packet['side']['label']})."
    )


def _bounded(packet: dict[str, Any]) -> dict[str, Any]:
    listed = len(packet["statements"])
    while packet["statements"] and (
        len(packet_markdown(packet)) > MAX_MARKDOWN or len(packet_json(packet)) > MAX_JSON
    ):
        packet["statements"].pop()
    if len(packet["statements"]) < listed:
        packet["truncated"] = (
            f"{listed - len(packet['statements'])} statement(s) left out to keep the packet "
            f"under {MAX_MARKDOWN:,} characters"
        )
    return packet


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _statements(
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
                "text": _cut(statement.text, TEXT_CHARS),
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
        {"order": s.order, "speaker": s.speaker.name, "text": _cut(s.text, CONTEXT_CHARS)}
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
        "note": _cut(feedback.comment or "", NOTE_CHARS),
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
            "body": _cut(c.body, COMMENT_CHARS),
            "created_at": c.created_at.isoformat(),
        }
        for c in visible
    ]


# --- the guidelines ------------------------------------------------------------------------------

HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.M)


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, section text) of every heading of a Markdown text, in order."""
    marks = list(HEADING.finditer(text))
    return [
        (m.group(2).strip(), text[m.start() : marks[i + 1].start() if i + 1 < len(marks) else None])
        for i, m in enumerate(marks)
    ]


def _topics(pattern: Pattern) -> tuple[str, ...]:
    if pattern.kind == "sarf":
        return (pattern.variable, "sarf")
    if pattern.kind == "event_kind":
        return (pattern.event_kind, *TOPICS["events"])
    return TOPICS[pattern.entity or pattern.kind]


def _guidelines(pattern: Pattern) -> dict[str, Any] | None:
    """The sections of the guidelines in force that speak of the pattern: those whose heading
    names a topic word, else those whose text does (at most GUIDELINE_CHARS in all)."""
    current = guideline_current()
    if current is None:
        return None
    sections = _sections(current.text)
    words = _topics(pattern)
    chosen = [s for s in sections if any(w in s[0].lower() for w in words)] or [
        s for s in sections if any(w in s[1].lower() for w in words)
    ]
    out, used = [], 0
    for heading, text in chosen:
        if used >= GUIDELINE_CHARS:
            break
        piece = _cut(text.strip(), GUIDELINE_CHARS - used)
        used += len(piece)
        out.append({"heading": heading, "text": piece})
    return {"version": current.number, "sections": out}


# --- the two forms -------------------------------------------------------------------------------


def packet_json(packet: dict[str, Any]) -> str:
    return json.dumps(packet, indent=2, ensure_ascii=False, default=str)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


def packet_markdown(packet: dict[str, Any]) -> str:
    """The packet to read and paste."""
    label = packet["pattern"]["label"]
    lines = [
        f"# Failure packet: {label}",
        "",
        f"**{packet['summary']}**",
        "",
        f"Pattern `{packet['pattern']['key']}`, {packet['ground_truth']}. Errors counted: "
        "missed and spurious people, events and pair bonds, and wrong SARF codes of matched "
        "events.",
    ]
    if packet["updating"]:
        lines += ["", "_The run's results changed: these counts are the last ones stored._"]
    statements = packet["statements"]
    counts = packet["counts"]
    lines += [
        "",
        f"Below: the {len(statements)} statement{'s' if len(statements) != 1 else ''} where it "
        f"happens most (of {counts['statements']}), each with the statements before it, the "
        "AI's and the ground truth's items side by side, the auditor's note and the comments.",
    ]
    if packet["truncated"]:
        lines += ["", f"_{packet['truncated']}._"]
    guidelines = packet["guidelines"]
    if guidelines and guidelines["sections"]:
        lines += ["", f"## Guidelines in force (v{guidelines['version']})", ""]
        for section in guidelines["sections"]:
            lines += [_quote(section["text"]), ""]
    for index, s in enumerate(statements, start=1):
        lines += [
            "",
            f"## {index}. Statement {s['order']} of discussion {s['discussion']} "
            f"({s['count']} × {label})",
            "",
            f"Link: {s['url']}",
        ]
        if s["runs_with_pattern"] > 1:
            lines.append(f"In {s['runs_with_pattern']} replicates; shown: run {s['shown_run']}.")
        if s["before"]:
            lines += ["", "Before:"]
            for b in s["before"]:
                lines += ["", _quote(f"**{b['speaker']}**: {b['text']}")]
        lines += ["", "This statement:", "", _quote(f"**{s['speaker']}**: {s['text']}"), ""]
        lines += ["| AI | Ground truth |", "|---|---|"]
        rows = zip_longest(s["ai_items"], s["gt_items"])
        for ai, gt in rows:
            left = _cell(ai["summary"]) if ai else "—"
            right = _cell(gt["summary"]) if gt else "—"
            lines.append(f"| {left} | {right} |")
        if not s["ai_items"] and not s["gt_items"]:
            lines.append("| — | — |")
        if s["pairs"]:
            lines.append("")
            lines += [f"- {pair['summary']}" for pair in s["pairs"]]
        coding = s["coding"]
        if coding:
            version = coding["guideline_version"]
            under = f", coded under guidelines v{version}" if version else ""
            note = coding["note"] or "(no note)"
            lines += ["", f"Auditor's note ({coding['auditor']}{under}): {note}"]
        if s["comments"]:
            lines += ["", "Comments:"]
            lines += [
                f"- {c['author']} ({c['kind']}, about {c['about']}): {_cell(c['body'])}"
                for c in s["comments"]
            ]
    return "\n".join(lines) + "\n"
