"""The statement F1 panel: a stored result's figures per kind, with the items behind them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.display.cards import CARD_BUILDERS, SARF_LETTERS
from audit.display.labels import KIND_TITLES, Labels, distinct_names
from metrics.families.payload.items import ENTITY_KINDS, entity_items


@dataclass
class F1Row:
    kind: str
    title: str
    f1: float | None
    tp: int
    fp: int
    fn: int
    matches: list[tuple[str, str, float | None]]
    spurious: list[str]
    missed: list[str]


def _payload_labels(payload: dict | None, fallback: Labels) -> dict[str, dict[Any, str]]:
    labels = fallback.copy().feed(payload)
    titles: dict[str, dict[Any, str]] = {}
    for kind in ENTITY_KINDS:
        named = [
            (item.get("id"), CARD_BUILDERS[kind](item, labels).title)
            for item in entity_items(payload, kind)
        ]
        titles[kind] = dict(distinct_names(named))
    return titles


def f1_rows(values: dict, ai: dict | None, gt: dict | None, labels: Labels) -> list[F1Row]:
    """Per-type rows naming which AI item matched which ground-truth item.

    `gt` is None when the viewer may not see the approved feedback: its items are not named.
    """
    ai_titles = _payload_labels(ai, labels)
    gt_titles = _payload_labels(gt, labels) if gt is not None else {k: {} for k in ENTITY_KINDS}
    return [_f1_row(kind, values, ai_titles[kind], gt_titles[kind]) for kind in ENTITY_KINDS]


def _f1_row(kind: str, values: dict, ai_t: dict, gt_t: dict) -> F1Row:
    def ai(ident: Any) -> str:
        return ai_t.get(ident, "an item not shown")

    def gt(ident: Any) -> str:
        return gt_t.get(ident, "an item not shown")

    return F1Row(
        kind=kind,
        title=KIND_TITLES[kind],
        f1=values.get(f"{kind}_f1"),
        tp=values.get(f"{kind}_tp", 0),
        fp=values.get(f"{kind}_fp", 0),
        fn=values.get(f"{kind}_fn", 0),
        matches=[
            (ai(m.get("ai_id")), gt(m.get("gt_id")), m.get("score"))
            for m in values.get(f"{kind}_matches") or []
        ],
        spurious=[ai(i) for i in values.get(f"{kind}_fp_ids") or []],
        missed=[gt(i) for i in values.get(f"{kind}_fn_ids") or []],
    )


def sarf_scores(values: dict) -> list[tuple[str, float | None]]:
    return [(name.title(), values.get(f"{name}_macro_f1")) for name, _ in SARF_LETTERS]


def f1_tone(value: float | None) -> str:
    """Badge colour: good from 0.8, warn from 0.5."""
    if value is None:
        return ""
    return "good" if value >= 0.8 else "warn" if value >= 0.5 else "bad"
