"""A packet as JSON and as Markdown."""

from __future__ import annotations

import json
from itertools import zip_longest
from typing import Any


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
