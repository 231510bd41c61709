"""A payload's item cards, written in one pass each: a page shows hundreds of cards, and a
template partial per card costs a page a large share of its render (docs/performance.md,
"Speed machinery"). The markup is the one the `item_card` partial had.

    {% load item_cards %}
    {% item_card c %}          one card (audit.display.Card)
    {% item_cards cards %}     a list of them
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from django import template
from django.utils.safestring import SafeString, mark_safe

from evalsite.perf.editor_options import escape

register = template.Library()


class Card(Protocol):
    """What a card shows (audit.display.Card; plumbing imports no app)."""

    kind: str
    title: str
    lines: list[tuple[str, str]]
    codes: list[str]
    confidence: Any
    state: str
    changed_fields: list[str]

    @property
    def tag(self) -> str: ...


DIFF_TAGS = {"added": "added", "removed": "removed", "here": "this statement"}


def _diff_tag(card: Card) -> str:
    if card.state == "changed":
        fields = escape(", ".join(card.changed_fields))
        return f'<span class="diff-tag" title="changed: {fields}">changed: {fields}</span>'
    label = DIFF_TAGS.get(card.state)
    return f'<span class="diff-tag">{label}</span>' if label else ""


def card_html(card: Card) -> str:
    state = f" is-{escape(card.state)}" if card.state else ""
    confidence = (
        f'<span class="conf"><span class="conf-label">confidence</span> '
        f"{escape(card.confidence)}</span>"
        if card.confidence
        else ""
    )
    lines = "".join(
        f"<dt>{escape(label)}</dt><dd>{escape(value)}</dd>" for label, value in card.lines
    )
    codes = "".join(f'<span class="code">{escape(code)}</span>' for code in card.codes)
    return (
        f'<div class="item item-{escape(card.kind)}{state}">'
        f'<div class="item-title"><span class="kind-tag">{escape(card.tag)}</span> '
        f"<strong>{escape(card.title)}</strong> {_diff_tag(card)} {confidence}</div>"
        f"<dl>{lines}</dl>"
        + (f'<div class="codes">{codes}</div>' if card.codes else "")
        + "</div>\n"
    )


@register.simple_tag
def item_card(card: Card) -> SafeString:
    return mark_safe(card_html(card))  # every value in it is escaped


@register.simple_tag
def item_cards(cards: Iterable[Card]) -> SafeString:
    return mark_safe("".join(card_html(card) for card in cards))  # every value is escaped
