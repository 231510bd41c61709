"""The long tables' rows and cells, written in one pass each: as template loops of `url` tags,
`floatformat` and `truncatechars` filters they cost the run comparison and the statements
behind an error count a large share of their render (docs/performance.md, "Speed
machinery"). The markup is the one the loops had; the pages pass plain rows and URL names.

    {% load table_rows %}
    {% side_cell r.baseline %}                      a side's mean, its replicates' range
    {% difference_cell r.delta r.low r.high r.applicable %}   the difference and its interval
    {% changed_statement_rows listed "audit:statement" run_id %}
    {% error_statement_rows rows "audit:statement" "audit:discussion" run_id heading %}
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from evalsite.perf.editor_options import escape

register = template.Library()

_MILLI = Decimal("0.001")
_STAND_IN = 987654321  # an id no row has, replaced by each row's own
NOT_AVAILABLE = '<span class="muted">n/a</span>'
NO_ITEM_CHANGED = (
    '<span class="muted">no item changed; the figure moved with partial matches</span>'
)
NOT_NAMED = (
    '<span class="muted">not named: the statement\'s coding changed since the figures were'
    " computed</span>"
)


def fixed(value: Any) -> str:
    """Three decimals, as ``floatformat:3`` writes them (half up on the shortest decimal form,
    no sign on a rounded zero, "" for none)."""
    if value is None:
        return ""
    rounded = Decimal(repr(value)).quantize(_MILLI, ROUND_HALF_UP)
    return f"{rounded:f}" if rounded else "0.000"


def link_format(name: str) -> str:
    """The path of the URL ``name`` with one integer argument, as a format string ("{}"):
    reversed once per table, not once per row."""
    return reverse(name, args=[_STAND_IN]).replace(str(_STAND_IN), "{}")


def truncated(text: str, length: int) -> str:
    """As ``truncatechars``: the text in its composed form, cut to ``length`` characters with
    an ellipsis when longer (the cut itself by Django's ``Truncator``)."""
    text = unicodedata.normalize("NFC", text)
    return text if len(text) <= length else Truncator(text).chars(length)


def _positive(value: Any) -> bool:
    """As the template's ``{% if value > 0 %}``: false for none."""
    return value is not None and value > 0


@register.simple_tag
def side_cell(side: Mapping[str, Any]) -> SafeString:
    """A side of a figure: its mean, and for replicates their range (and SD); n/a for none."""
    if side.get("point") is None:
        return mark_safe(NOT_AVAILABLE)
    text = fixed(side["point"])
    spread = side.get("spread") or {}
    n = spread.get("n")
    if isinstance(n, int | float) and n > 1:
        sd = "" if spread.get("sd") is None else f", SD {fixed(spread['sd'])}"
        text += (
            f' <span class="ci" title="range over {escape(n)} replicates">'
            f"{fixed(spread.get('min'))}–{fixed(spread.get('max'))}{sd}</span>"
        )
    return mark_safe(text)  # numbers only, the count escaped


@register.simple_tag
def difference_cell(delta: Any, low: Any, high: Any, applicable: bool) -> SafeString:
    """A figure's difference (candidate minus baseline) with its interval; n/a where the
    figure does not apply."""
    if not applicable:
        return mark_safe(NOT_AVAILABLE)
    sign = "+" if _positive(delta) else ""
    return mark_safe(f'{sign}{fixed(delta)} <span class="ci">[{fixed(low)}, {fixed(high)}]</span>')


@register.simple_tag
def changed_statement_rows(
    rows: Iterable[Mapping[str, Any]], statement_url: str, run_id: int
) -> SafeString:
    """The statements that changed most, a <tr> each: where it is (a link to the statement
    in run ``run_id``), what it says, each side's figure, the change and what changed."""
    link = link_format(statement_url)
    return mark_safe("".join(_changed_statement_row(row, link, run_id) for row in rows))


def _changed_statement_row(row: Mapping[str, Any], link: str, run_id: int) -> str:
    lines = "".join(f"<div>{escape(line)}</div>" for line in row["changes"]) or NO_ITEM_CHANGED
    sign = "+" if _positive(row["delta"]) else ""
    return (
        f'<tr><td class="stmt"><a href="{link.format(int(row["statement_id"]))}?run={run_id}">'
        f"Discussion #{escape(row['discussion_id'])}, statement #{escape(row['order'])}</a>"
        f'<div class="muted small">{escape(truncated(row["text"], 90))}</div></td>\n'
        f'        <td class="num" data-label="Baseline">{fixed(row["baseline"])}</td>'
        f'<td class="num" data-label="Candidate">{fixed(row["candidate"])}</td>\n'
        f'        <td class="num" data-label="Change">{sign}{fixed(row["delta"])}</td>\n'
        f'        <td class="what-changed">{lines}</td></tr>\n'
    )


@register.simple_tag
def error_statement_rows(
    rows: Iterable[Mapping[str, Any]],
    statement_url: str,
    discussion_url: str,
    run_id: int,
    heading: str,
) -> SafeString:
    """The statements behind an error count, a <tr> each: the statement and its discussion
    (links in run ``run_id``), what it says, the items behind the count (``heading`` names
    them for narrow screens) and the count."""
    links = link_format(statement_url), link_format(discussion_url)
    heading = escape(heading)
    return mark_safe("".join(_error_statement_row(row, links, run_id, heading) for row in rows))


def _error_statement_row(
    row: Mapping[str, Any], links: tuple[str, str], run_id: int, heading: str
) -> str:
    statement, discussion = int(row["statement_id"]), int(row["discussion_id"])
    items = "<br>".join(escape(item) for item in row["items"]) or NOT_NAMED
    return (
        f'<tr><td class="nowrap"><a href="{links[0].format(statement)}?run={run_id}">'
        f"Statement #{escape(row['order'])}</a></td>\n"
        f'        <td class="stmt-quote" data-testid="statement-text">'
        f"{escape(truncated(row['text'], 160))}</td>\n"
        f'        <td class="error-items" data-testid="error-items" data-heading="{heading}">'
        f"{items}</td>\n"
        f'        <td class="nowrap"><a href="{links[1].format(discussion)}?run={run_id}'
        f'&amp;at={statement}#stmt-{statement}">Discussion #{discussion}</a></td>\n'
        f'        <td class="num">{escape(row["count"])}</td></tr>\n'
    )
