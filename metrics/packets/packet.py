"""The packet itself: assembled for a run (or a configuration's replicates) and a pattern, and
bounded to what fits.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib.auth.models import User

from evalsite.access import is_admin
from metrics.engine.comparison import Side
from metrics.engine.derived import error_analysis_read
from metrics.packets.formats import packet_json, packet_markdown
from metrics.packets.guidelines import packet_guidelines
from metrics.packets.patterns import (
    DEFAULT_STATEMENTS,
    MAX_STATEMENTS,
    PacketNotAllowed,
    PacketNotReady,
    errors_total,
    index_found,
    parent_found,
    pattern_figures,
    pattern_get,
    statements_wanted,
)
from metrics.packets.statements import packet_statements

FORMAT_VERSION = 1
MAX_MARKDOWN = 200_000
MAX_JSON = 400_000


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
        parent_found(runs)
        if chosen.kind == "parents"
        else index_found(runs, pattern_figures(chosen, dict(totals)))
    )
    count = sum(sum(per_run.values()) for _, _, per_run in found.values())
    total_errors = errors_total(dict(totals))
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
        "guidelines": packet_guidelines(chosen),
        "statements": packet_statements(chosen, ranked[:wanted], runs, user, base_url),
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
