"""Charts over categories: bars (with whiskers), heatmaps and lines across categories."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from typing import Any, TypedDict, Unpack

from metrics.families.plots.canvas import (
    LEGEND_ROW,
    MARGIN_LEFT,
    MARGIN_RIGHT,
    MARGIN_TOP,
    PALETTE,
    Frame,
    Series,
    Svg,
    draw_axis_labels,
    draw_legend,
    draw_plot_box,
    draw_polylines,
    draw_y_grid,
    finite_pairs,
    fit_frame,
    is_finite,
    number_text,
    svg_chart,
    tick_text,
)


@dataclass(frozen=True)
class Bars:
    """One bar series: a value per category, optionally with a (low, high) interval each."""

    label: str
    values: tuple[float | None, ...]
    lows: tuple[float | None, ...] = ()
    highs: tuple[float | None, ...] = ()
    level: str = "95%"  # of the intervals, as the tooltips say it


class CategoryLayout(TypedDict, total=False):
    """The keyword options of the charts over named categories (bar_plot, category_line_plot):
    the x-axis label, the y range (None: from the data), the size and the title."""

    x_label: str
    y_range: tuple[float, float] | None
    width: int
    height: int
    title: str


@dataclass(frozen=True)
class _Layout:
    """A CategoryLayout with its defaults filled in."""

    x_label: str = ""
    y_range: tuple[float, float] | None = (0.0, 1.0)
    width: int = 520
    height: int = 300
    title: str = ""


def category_chart(
    categories: Sequence[str],
    y_label: str,
    ys: list[float],
    labels: list[str],
    draw: Callable[[Frame], list[str]],
    layout: CategoryLayout,
    what: str,
) -> Svg:
    """A chart over named categories: the frame (room for a legend when there are two or more
    series, `labels`), the axes, what `draw` draws in the frame, the legend and the title."""
    options = _Layout(**layout)
    legend_rows = len(labels) if len(labels) > 1 else 0
    height = options.height + legend_rows * LEGEND_ROW
    frame = fit_frame([0.0, 1.0], ys or [0.0], options.width, height, None, options.y_range)
    frame = replace(
        frame,
        x_min=0.0,
        x_max=float(max(len(categories), 1)),
        legend_space=legend_rows * LEGEND_ROW,
    )
    x_label = options.x_label
    body = [_category_axes(frame, categories, x_label, y_label), *draw(frame)]
    if legend_rows:
        body.append(draw_legend(frame, labels))
    return svg_chart(frame, options.title or f"{y_label} by {x_label or what}", body)


def bar_plot(
    categories: Sequence[str],
    series: Sequence[Bars | Mapping[str, Any]],
    y_label: str,
    **layout: Unpack[CategoryLayout],
) -> Svg:
    """Grouped bars, one group per category, with whiskers where a series gives lows/highs.
    A None value draws no bar and writes "n/a". `series`: Bars or mappings {"label", "values",
    "lows"?, "highs"?}; a legend when there are two or more series."""
    groups = [_as_bars(item) for item in series]
    ys = [v for g in groups for v in (*g.values, *g.lows, *g.highs) if is_finite(v)]
    slot = 0.8 / max(len(groups), 1)

    def draw(frame: Frame) -> list[str]:
        bars = []
        for index, group in enumerate(groups):
            color = PALETTE[index % len(PALETTE)]
            for position, value in enumerate(group.values):
                left = position + 0.1 + index * slot
                bars.append(_bar(frame, group, position, value, (left, left + slot), color))
        return bars

    labels = [g.label for g in groups]
    return category_chart(categories, y_label, ys, labels, draw, layout, "category")


def heatmap(
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    matrix: Sequence[Sequence[float]],
    *,
    x_label: str,
    y_label: str,
    title: str = "",
    cell: int = 34,
) -> Svg:
    """A grid of counts, shaded from white (0) to the accent colour (the largest count), with
    each count written in its cell; cells on the diagonal (row label = column label) are
    outlined. Rows run top to bottom, columns left to right."""
    rows, columns = [str(r) for r in row_labels], [str(c) for c in column_labels]
    left = MARGIN_LEFT + 6.5 * max((len(r) for r in rows), default=0)
    top = MARGIN_TOP + 6 * max((len(c) for c in columns), default=0) * 0.72 + 18
    overhang = max(MARGIN_RIGHT, 4.6 * max((len(c) for c in columns), default=0))
    width, height = int(left + cell * len(columns) + overhang), int(top + cell * len(rows) + 34)
    frame = Frame(0.0, 1.0, 0.0, 1.0, width, height)
    top_value = max((v for row in matrix for v in row if is_finite(v)), default=0) or 1
    body = []
    for i, row in enumerate(rows):
        y = top + i * cell
        body.append(
            f'<text x="{number_text(left - 6)}" y="{number_text(y + cell / 2)}" dy="0.32em" '
            f'text-anchor="end" fill="#1d2330">{escape(row)}</text>'
        )
        for j, column in enumerate(columns):
            value = matrix[i][j] if is_finite(matrix[i][j]) else 0
            body.append(_cell(left + j * cell, y, cell, value, top_value, row == column))
    for j, column in enumerate(columns):
        x = left + j * cell + cell / 2
        body.append(
            f'<text transform="translate({number_text(x)} {number_text(top - 6)}) rotate(-40)" '
            f'fill="#1d2330">{escape(column)}</text>'
        )
    body.append(
        f'<text x="{number_text(left + cell * len(columns) / 2)}" y="{number_text(height - 10)}" '
        f'text-anchor="middle" fill="#1d2330">{escape(x_label)}</text>'
        f'<text transform="translate(14 {number_text(top + cell * len(rows) / 2)}) rotate(-90)" '
        f'text-anchor="middle" fill="#1d2330">{escape(y_label)}</text>'
    )
    return svg_chart(frame, title or f"{y_label} against {x_label}", body)


def _as_bars(item: Bars | Mapping[str, Any]) -> Bars:
    if isinstance(item, Bars):
        return item
    return Bars(
        str(item.get("label", "")),
        tuple(item.get("values", ())),
        tuple(item.get("lows") or ()),
        tuple(item.get("highs") or ()),
    )


def _category_axes(frame: Frame, categories: Sequence[str], x_label: str, y_label: str) -> str:
    parts = [draw_plot_box(frame), draw_y_grid(frame)]
    room = (frame.right - frame.left) / max(len(categories), 1)
    for position, category in enumerate(categories):
        parts.append(
            f'<text x="{number_text(frame.px(position + 0.5))}" y="{number_text(frame.bottom + 14)}" '
            f'text-anchor="middle" fill="#1d2330">{_fitted(str(category), room)}</text>'
        )
    parts.append(draw_axis_labels(frame, x_label, y_label))
    return "".join(parts)


def _fitted(label: str, room: float, char_width: float = 6.2) -> str:
    """The label, shortened with "…" to fit `room` pixels; the full text as its tooltip."""
    fits = max(int(room / char_width) - 1, 3)
    if len(label) <= fits:
        return escape(label)
    return f"<title>{escape(label)}</title>{escape(label[: fits - 1])}…"


def _bar(
    frame: Frame,
    group: Bars,
    position: int,
    value: float | None,
    span: tuple[float, float],
    color: str,
) -> str:
    x0, x1 = frame.px(span[0]), frame.px(span[1])
    middle = (x0 + x1) / 2
    if not is_finite(value):
        return (
            f'<text x="{number_text(middle)}" y="{number_text(frame.bottom - 4)}" text-anchor="middle" '
            f'fill="#6b7280">n/a</text>'
        )
    base = frame.py(max(frame.y_min, 0.0))
    top = frame.py(min(max(value, frame.y_min), frame.y_max))
    low = group.lows[position] if position < len(group.lows) else None
    high = group.highs[position] if position < len(group.highs) else None
    tip = f"{group.label}: {tick_text(value)}" if group.label else tick_text(value)
    if is_finite(low) and is_finite(high):
        tip += f" ({group.level} CI {tick_text(low)} to {tick_text(high)})"
    parts = [
        f'<g class="bar"><title>{escape(tip)}</title>'
        f'<rect x="{number_text(x0 + 1)}" y="{number_text(min(top, base))}" width="{number_text(max(x1 - x0 - 2, 1))}" '
        f'height="{number_text(abs(base - top))}" fill="{color}" fill-opacity="0.8"/>'
    ]
    if is_finite(low) and is_finite(high):
        parts.append(draw_whisker(frame, middle, low, high, (x1 - x0) / 4))
    label_y = frame.py(high) if is_finite(high) else top
    parts.append(
        f'<text x="{number_text(middle)}" y="{number_text(max(label_y - 4, frame.top + 9))}" '
        f'text-anchor="middle" fill="#1d2330" font-size="10">{escape(number_text(value))}</text></g>'
    )
    return "".join(parts)


def draw_whisker(frame: Frame, x: float, low: float, high: float, cap: float) -> str:
    y_low = frame.py(min(max(low, frame.y_min), frame.y_max))
    y_high = frame.py(min(max(high, frame.y_min), frame.y_max))
    return (
        f'<path class="whisker" d="M{number_text(x)} {number_text(y_low)}V{number_text(y_high)}'
        f"M{number_text(x - cap)} {number_text(y_low)}H{number_text(x + cap)}"
        f'M{number_text(x - cap)} {number_text(y_high)}H{number_text(x + cap)}" stroke="#1d2330" '
        'stroke-width="1.3" fill="none"/>'
    )


def _cell(x: float, y: float, size: int, value: float, top_value: float, diagonal: bool) -> str:
    share = max(0.0, min(1.0, value / top_value))
    ink = "#fff" if share > 0.55 else "#1d2330"
    outline = ' stroke="#1d2330" stroke-width="1.5"' if diagonal else ' stroke="#e3e6eb"'
    text = tick_text(value) if value else "·"
    return (
        f'<g class="cell"><rect x="{number_text(x)}" y="{number_text(y)}" width="{size}" height="{size}" '
        f'fill="{PALETTE[0]}" fill-opacity="{number_text(0.04 + 0.9 * share)}"{outline}/>'
        f'<text x="{number_text(x + size / 2)}" y="{number_text(y + size / 2)}" dy="0.32em" '
        f'text-anchor="middle" fill="{ink}" font-size="10">{escape(text)}</text></g>'
    )


def category_line_plot(
    categories: Sequence[str],
    series: Sequence[Mapping[str, Any]],
    y_label: str,
    **layout: Unpack[CategoryLayout],
) -> Svg:
    """`line_plot` over named steps (e.g. extraction runs, oldest first) instead of numbers.
    `series`: mappings {"label", "values": one y per category}; a None breaks the line."""
    lines = [
        Series(
            str(item.get("label", "")), tuple((i + 0.5, y) for i, y in enumerate(item["values"]))
        )
        for item in series
    ]
    ys = [y for s in lines for _, y in finite_pairs(s.points)]

    def draw(frame: Frame) -> list[str]:
        return [
            draw_polylines(frame, item, PALETTE[index % len(PALETTE)], True)
            for index, item in enumerate(lines)
        ]

    labels = [s.label for s in lines]
    return category_chart(categories, y_label, ys, labels, draw, layout, "step")
