"""Tiny server-side SVG charts: line plots and scatter plots as inline SVG markup.

Dependency-free (standard library only, no Django) so any page, card or report can reuse it;
it sits in the metric library so that a family's card (``<family>/card.py``) can draw its plots.
Every text that reaches the markup (labels, titles, tooltips) is XML-escaped; numbers are
formatted by this module, so the result is safe to insert into a page as is: every chart is an
``Svg``, a string that says so to the templates (``__html__``).

    line_plot([{"label": "llm", "points": [(0.1, 0.2), (0.5, 0.3)]}],
              x_label="coverage", y_label="selective risk")
    scatter_plot([{"x": 0.7, "y": 0.8, "size": 0.2, "label": "F1"}],
                 x_label="human d", y_label="agent d", identity_line=True)

Points with a None or non-finite coordinate are skipped (a line plot breaks there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from typing import Any, TypedDict, TypeGuard, Unpack

PALETTE = ("#2f5bd3", "#c05621", "#1f8a4c", "#9b2c2c", "#6b46c1", "#2c7a7b", "#b7791f")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 56, 16, 14, 44
LEGEND_ROW = 16
# Series after the first get dashes too, so overlapping lines stay distinguishable.
DASHES = ("", "6 3", "2 3", "8 3 2 3")


class Svg(str):
    """Markup this module made, safe to insert as it is: Django's templates (like Jinja and
    MarkupSafe) insert an object with ``__html__`` without escaping it again."""

    __slots__ = ()

    def __html__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[tuple[float | None, float | None], ...]


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    size: float | None = None
    label: str = ""


@dataclass(frozen=True)
class _Frame:
    """Maps data coordinates to pixels inside the plot area."""

    x_min: float
    x_max: float
    y_min: float
    y_max: float
    width: int
    height: int
    legend_space: float = 0.0

    @property
    def left(self) -> float:
        return MARGIN_LEFT

    @property
    def right(self) -> float:
        return self.width - MARGIN_RIGHT

    @property
    def top(self) -> float:
        return MARGIN_TOP

    @property
    def bottom(self) -> float:
        return self.height - MARGIN_BOTTOM - self.legend_space

    def px(self, x: float) -> float:
        return self.left + (x - self.x_min) / (self.x_max - self.x_min) * (self.right - self.left)

    def py(self, y: float) -> float:
        return self.bottom - (y - self.y_min) / (self.y_max - self.y_min) * (self.bottom - self.top)


# --- public API ------------------------------------------------------------------------------


def line_plot(
    series: Sequence[Series | Mapping[str, Any]],
    x_label: str,
    y_label: str,
    *,
    width: int = 520,
    height: int = 320,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    title: str = "",
    markers: bool = False,
) -> Svg:
    """Lines through each series' points (in the given order); a legend when there are two or
    more series. `series`: Series or mappings {"label", "points": [(x, y), ...]}."""
    lines = [_as_series(item) for item in series]
    xs = [x for s in lines for x, _ in _finite_pairs(s.points)]
    ys = [y for s in lines for _, y in _finite_pairs(s.points)]
    legend_rows = len(lines) if len(lines) > 1 else 0
    frame = _frame(xs, ys, width, height + legend_rows * LEGEND_ROW, x_range, y_range)
    frame = replace(frame, legend_space=legend_rows * LEGEND_ROW)
    body = [_axes(frame, x_label, y_label)]
    for index, item in enumerate(lines):
        color, dash = _style(index)
        body.append(_polylines(frame, item, color, markers, dash))
    if legend_rows:
        body.append(_legend(frame, [s.label for s in lines], dashed=True))
    return _svg(frame, title or f"{y_label} against {x_label}", body)


def scatter_plot(
    points: Sequence[Point | Mapping[str, Any] | Sequence[Any]],
    x_label: str,
    y_label: str,
    *,
    identity_line: bool = True,
    width: int = 420,
    height: int = 380,
    title: str = "",
    min_radius: float = 3.0,
    max_radius: float = 11.0,
) -> Svg:
    """Dots at (x, y); a dot's area grows with its `size` (e.g. a weight) when sizes are given.
    `identity_line` draws y = x (the axes then share one range). Points: Point, mappings
    {"x", "y", "size"?, "label"?} or tuples (x, y[, size[, label]])."""
    dots = [p for p in (_as_point(item) for item in points) if p is not None]
    xs, ys = [p.x for p in dots], [p.y for p in dots]
    if identity_line and dots:
        shared = (min(xs + ys), max(xs + ys))
        frame = _frame(xs, ys, width, height, _padded(*shared), _padded(*shared))
    else:
        frame = _frame(xs, ys, width, height, None, None)
    body = [_axes(frame, x_label, y_label)]
    if identity_line:
        body.append(_identity(frame))
    radii = _radii([p.size for p in dots], min_radius, max_radius)
    for point, radius in zip(dots, radii, strict=True):
        body.append(_dot(frame, point, radius))
    return _svg(frame, title or f"{y_label} against {x_label}", body)


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """About `count` round tick values covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    step = _nice_step((high - low) / max(count - 1, 1))
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


# --- input normalisation ---------------------------------------------------------------------


def _as_series(item: Series | Mapping[str, Any]) -> Series:
    if isinstance(item, Series):
        return item
    points = item.get("points")
    if points is None:
        points = list(zip(item.get("x", []), item.get("y", []), strict=False))
    return Series(str(item.get("label", "")), tuple((p[0], p[1]) for p in points))


def _as_point(item: Point | Mapping[str, Any] | Sequence[Any]) -> Point | None:
    x: Any
    y: Any
    size: Any
    if isinstance(item, Point):
        x, y, size, label = item.x, item.y, item.size, item.label
    elif isinstance(item, Mapping):
        x, y = item.get("x"), item.get("y")
        size, label = item.get("size"), item.get("label", "")
    else:
        x, y = item[0], item[1]
        size = item[2] if len(item) > 2 else None
        label = item[3] if len(item) > 3 else ""
    if not (_finite(x) and _finite(y)):
        return None
    return Point(float(x), float(y), float(size) if _finite(size) else None, str(label or ""))


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _finite_pairs(points: Iterable[tuple[Any, Any]]) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in points if _finite(x) and _finite(y)]


# --- geometry --------------------------------------------------------------------------------


def _padded(low: float, high: float) -> tuple[float, float]:
    if high <= low:
        return low - 1.0, high + 1.0
    pad = (high - low) * 0.05
    return low - pad, high + pad


def _frame(
    xs: list[float],
    ys: list[float],
    width: int,
    height: int,
    x_range: tuple[float, float] | None,
    y_range: tuple[float, float] | None,
) -> _Frame:
    x_min, x_max = x_range or (_padded(min(xs), max(xs)) if xs else (0.0, 1.0))
    y_min, y_max = y_range or (_padded(min(ys), max(ys)) if ys else (0.0, 1.0))
    if x_max <= x_min:
        x_min, x_max = x_min - 1.0, x_max + 1.0
    if y_max <= y_min:
        y_min, y_max = y_min - 1.0, y_max + 1.0
    return _Frame(x_min, x_max, y_min, y_max, width, height)


def _nice_step(raw: float) -> float:
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def _radii(sizes: list[float | None], low: float, high: float) -> list[float]:
    known = [s for s in sizes if s is not None and s > 0]
    if not known:
        return [low + (high - low) / 3] * len(sizes)
    top = max(known)
    # Area proportional to size: radius ∝ sqrt(size).
    return [low if s is None or s <= 0 else max(low, high * math.sqrt(s / top)) for s in sizes]


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _tick_text(value: float) -> str:
    if value == 0:
        return "0"
    text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return text.replace("-", "−")


# --- markup ----------------------------------------------------------------------------------


def _svg(frame: _Frame, title: str, body: list[str]) -> Svg:
    label = escape(title)
    return Svg(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {frame.width} '
        f'{frame.height}" width="{frame.width}" height="{frame.height}" role="img" '
        f'aria-label="{label}" font-family="{escape(FONT)}" font-size="11">'
        f"<title>{label}</title>{''.join(body)}</svg>"
    )


def _axes(frame: _Frame, x_label: str, y_label: str) -> str:
    parts = [_plot_box(frame)]
    for tick in nice_ticks(frame.x_min, frame.x_max):
        x = _num(frame.px(tick))
        parts.append(
            f'<line x1="{x}" y1="{_num(frame.top)}" x2="{x}" y2="{_num(frame.bottom)}" '
            'stroke="#eef0f3"/>'
            f'<text x="{x}" y="{_num(frame.bottom + 14)}" text-anchor="middle" '
            f'fill="#6b7280">{escape(_tick_text(tick))}</text>'
        )
    parts += [_y_grid(frame), _axis_labels(frame, x_label, y_label)]
    return "".join(parts)


def _plot_box(frame: _Frame) -> str:
    return (
        f'<rect x="{_num(frame.left)}" y="{_num(frame.top)}" '
        f'width="{_num(frame.right - frame.left)}" height="{_num(frame.bottom - frame.top)}" '
        'fill="#fff" stroke="#c8ced8"/>'
    )


def _y_grid(frame: _Frame) -> str:
    """Horizontal grid lines with their values on the left."""
    parts = []
    for tick in nice_ticks(frame.y_min, frame.y_max):
        y = _num(frame.py(tick))
        parts.append(
            f'<line x1="{_num(frame.left)}" y1="{y}" x2="{_num(frame.right)}" y2="{y}" '
            'stroke="#eef0f3"/>'
            f'<text x="{_num(frame.left - 6)}" y="{y}" dy="0.32em" text-anchor="end" '
            f'fill="#6b7280">{escape(_tick_text(tick))}</text>'
        )
    return "".join(parts)


def _axis_labels(frame: _Frame, x_label: str, y_label: str) -> str:
    middle_x = _num((frame.left + frame.right) / 2)
    middle_y = _num((frame.top + frame.bottom) / 2)
    return (
        f'<text x="{middle_x}" y="{_num(frame.bottom + 32)}" text-anchor="middle" '
        f'fill="#1d2330">{escape(x_label)}</text>'
        f'<text transform="translate(14 {middle_y}) rotate(-90)" text-anchor="middle" '
        f'fill="#1d2330">{escape(y_label)}</text>'
    )


def _style(index: int) -> tuple[str, str]:
    """The colour and dash pattern of the index-th series."""
    return PALETTE[index % len(PALETTE)], DASHES[index % len(DASHES)]


def _dash_attribute(dash: str) -> str:
    return f' stroke-dasharray="{dash}"' if dash else ""


def _polylines(
    frame: _Frame, series: Series, color: str, markers: bool = False, dash: str = ""
) -> str:
    """One polyline per run of finite points (a None breaks the line)."""
    dash = _dash_attribute(dash)
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in series.points:
        if _finite(x) and _finite(y):
            runs[-1].append((frame.px(x), frame.py(y)))
        elif runs[-1]:
            runs.append([])
    parts = [f'<g class="series" data-label="{escape(series.label)}">']
    for run in runs:
        if len(run) > 1:
            coords = " ".join(f"{_num(x)},{_num(y)}" for x, y in run)
            parts.append(
                f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2" '
                f'stroke-linejoin="round"{dash}/>'
            )
        if markers or len(run) == 1:
            parts += [
                f'<circle cx="{_num(x)}" cy="{_num(y)}" r="2.5" fill="{color}"/>' for x, y in run
            ]
    parts.append("</g>")
    return "".join(parts)


def _legend(frame: _Frame, labels: list[str], *, dashed: bool = False) -> str:
    """Swatches below the plot; `dashed` repeats the line plot's dash patterns."""
    parts = []
    top = frame.bottom + MARGIN_BOTTOM + LEGEND_ROW / 2 - 4
    for index, label in enumerate(labels):
        y = top + index * LEGEND_ROW
        color, dash = _style(index)
        dash = _dash_attribute(dash) if dashed else ""
        parts.append(
            f'<line x1="{_num(frame.left)}" y1="{_num(y)}" x2="{_num(frame.left + 24)}" '
            f'y2="{_num(y)}" stroke="{color}" stroke-width="3"{dash}/>'
            f'<text x="{_num(frame.left + 30)}" y="{_num(y)}" dy="0.32em" '
            f'fill="#1d2330">{escape(label)}</text>'
        )
    return "".join(parts)


def _identity(frame: _Frame) -> str:
    low = max(frame.x_min, frame.y_min)
    high = min(frame.x_max, frame.y_max)
    if high <= low:
        return ""
    return (
        f'<line class="identity" x1="{_num(frame.px(low))}" y1="{_num(frame.py(low))}" '
        f'x2="{_num(frame.px(high))}" y2="{_num(frame.py(high))}" stroke="#9aa3b2" '
        'stroke-dasharray="4 3"><title>y = x</title></line>'
    )


def _dot(frame: _Frame, point: Point, radius: float) -> str:
    tooltip = f"{point.label} " if point.label else ""
    tooltip += f"({_tick_text(point.x)}, {_tick_text(point.y)})"
    if point.size is not None:
        tooltip += f" weight {point.size:.3g}"
    return (
        f'<circle cx="{_num(frame.px(point.x))}" cy="{_num(frame.py(point.y))}" '
        f'r="{_num(radius)}" fill="{PALETTE[0]}" fill-opacity="0.55" stroke="{PALETTE[0]}">'
        f"<title>{escape(tooltip)}</title></circle>"
    )


# --- categorical charts: bars with CI whiskers, heat maps ------------------------------------


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


def _category_chart(
    categories: Sequence[str],
    y_label: str,
    ys: list[float],
    labels: list[str],
    draw: Callable[[_Frame], list[str]],
    layout: CategoryLayout,
    what: str,
) -> Svg:
    """A chart over named categories: the frame (room for a legend when there are two or more
    series, `labels`), the axes, what `draw` draws in the frame, the legend and the title."""
    options = _Layout(**layout)
    legend_rows = len(labels) if len(labels) > 1 else 0
    height = options.height + legend_rows * LEGEND_ROW
    frame = _frame([0.0, 1.0], ys or [0.0], options.width, height, None, options.y_range)
    frame = replace(
        frame,
        x_min=0.0,
        x_max=float(max(len(categories), 1)),
        legend_space=legend_rows * LEGEND_ROW,
    )
    x_label = options.x_label
    body = [_category_axes(frame, categories, x_label, y_label), *draw(frame)]
    if legend_rows:
        body.append(_legend(frame, labels))
    return _svg(frame, options.title or f"{y_label} by {x_label or what}", body)


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
    ys = [v for g in groups for v in (*g.values, *g.lows, *g.highs) if _finite(v)]
    slot = 0.8 / max(len(groups), 1)

    def draw(frame: _Frame) -> list[str]:
        bars = []
        for index, group in enumerate(groups):
            color = PALETTE[index % len(PALETTE)]
            for position, value in enumerate(group.values):
                left = position + 0.1 + index * slot
                bars.append(_bar(frame, group, position, value, (left, left + slot), color))
        return bars

    labels = [g.label for g in groups]
    return _category_chart(categories, y_label, ys, labels, draw, layout, "category")


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
    frame = _Frame(0.0, 1.0, 0.0, 1.0, width, height)
    top_value = max((v for row in matrix for v in row if _finite(v)), default=0) or 1
    body = []
    for i, row in enumerate(rows):
        y = top + i * cell
        body.append(
            f'<text x="{_num(left - 6)}" y="{_num(y + cell / 2)}" dy="0.32em" '
            f'text-anchor="end" fill="#1d2330">{escape(row)}</text>'
        )
        for j, column in enumerate(columns):
            value = matrix[i][j] if _finite(matrix[i][j]) else 0
            body.append(_cell(left + j * cell, y, cell, value, top_value, row == column))
    for j, column in enumerate(columns):
        x = left + j * cell + cell / 2
        body.append(
            f'<text transform="translate({_num(x)} {_num(top - 6)}) rotate(-40)" '
            f'fill="#1d2330">{escape(column)}</text>'
        )
    body.append(
        f'<text x="{_num(left + cell * len(columns) / 2)}" y="{_num(height - 10)}" '
        f'text-anchor="middle" fill="#1d2330">{escape(x_label)}</text>'
        f'<text transform="translate(14 {_num(top + cell * len(rows) / 2)}) rotate(-90)" '
        f'text-anchor="middle" fill="#1d2330">{escape(y_label)}</text>'
    )
    return _svg(frame, title or f"{y_label} against {x_label}", body)


def _as_bars(item: Bars | Mapping[str, Any]) -> Bars:
    if isinstance(item, Bars):
        return item
    return Bars(
        str(item.get("label", "")),
        tuple(item.get("values", ())),
        tuple(item.get("lows") or ()),
        tuple(item.get("highs") or ()),
    )


def _category_axes(frame: _Frame, categories: Sequence[str], x_label: str, y_label: str) -> str:
    parts = [_plot_box(frame), _y_grid(frame)]
    room = (frame.right - frame.left) / max(len(categories), 1)
    for position, category in enumerate(categories):
        parts.append(
            f'<text x="{_num(frame.px(position + 0.5))}" y="{_num(frame.bottom + 14)}" '
            f'text-anchor="middle" fill="#1d2330">{_fitted(str(category), room)}</text>'
        )
    parts.append(_axis_labels(frame, x_label, y_label))
    return "".join(parts)


def _fitted(label: str, room: float, char_width: float = 6.2) -> str:
    """The label, shortened with "…" to fit `room` pixels; the full text as its tooltip."""
    fits = max(int(room / char_width) - 1, 3)
    if len(label) <= fits:
        return escape(label)
    return f"<title>{escape(label)}</title>{escape(label[: fits - 1])}…"


def _bar(
    frame: _Frame,
    group: Bars,
    position: int,
    value: float | None,
    span: tuple[float, float],
    color: str,
) -> str:
    x0, x1 = frame.px(span[0]), frame.px(span[1])
    middle = (x0 + x1) / 2
    if not _finite(value):
        return (
            f'<text x="{_num(middle)}" y="{_num(frame.bottom - 4)}" text-anchor="middle" '
            f'fill="#6b7280">n/a</text>'
        )
    base = frame.py(max(frame.y_min, 0.0))
    top = frame.py(min(max(value, frame.y_min), frame.y_max))
    low = group.lows[position] if position < len(group.lows) else None
    high = group.highs[position] if position < len(group.highs) else None
    tip = f"{group.label}: {_tick_text(value)}" if group.label else _tick_text(value)
    if _finite(low) and _finite(high):
        tip += f" ({group.level} CI {_tick_text(low)} to {_tick_text(high)})"
    parts = [
        f'<g class="bar"><title>{escape(tip)}</title>'
        f'<rect x="{_num(x0 + 1)}" y="{_num(min(top, base))}" width="{_num(max(x1 - x0 - 2, 1))}" '
        f'height="{_num(abs(base - top))}" fill="{color}" fill-opacity="0.8"/>'
    ]
    if _finite(low) and _finite(high):
        parts.append(_whisker(frame, middle, low, high, (x1 - x0) / 4))
    label_y = frame.py(high) if _finite(high) else top
    parts.append(
        f'<text x="{_num(middle)}" y="{_num(max(label_y - 4, frame.top + 9))}" '
        f'text-anchor="middle" fill="#1d2330" font-size="10">{escape(_num(value))}</text></g>'
    )
    return "".join(parts)


def _whisker(frame: _Frame, x: float, low: float, high: float, cap: float) -> str:
    y_low = frame.py(min(max(low, frame.y_min), frame.y_max))
    y_high = frame.py(min(max(high, frame.y_min), frame.y_max))
    return (
        f'<path class="whisker" d="M{_num(x)} {_num(y_low)}V{_num(y_high)}'
        f"M{_num(x - cap)} {_num(y_low)}H{_num(x + cap)}"
        f'M{_num(x - cap)} {_num(y_high)}H{_num(x + cap)}" stroke="#1d2330" '
        'stroke-width="1.3" fill="none"/>'
    )


def _cell(x: float, y: float, size: int, value: float, top_value: float, diagonal: bool) -> str:
    share = max(0.0, min(1.0, value / top_value))
    ink = "#fff" if share > 0.55 else "#1d2330"
    outline = ' stroke="#1d2330" stroke-width="1.5"' if diagonal else ' stroke="#e3e6eb"'
    text = _tick_text(value) if value else "·"
    return (
        f'<g class="cell"><rect x="{_num(x)}" y="{_num(y)}" width="{size}" height="{size}" '
        f'fill="{PALETTE[0]}" fill-opacity="{_num(0.04 + 0.9 * share)}"{outline}/>'
        f'<text x="{_num(x + size / 2)}" y="{_num(y + size / 2)}" dy="0.32em" '
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
    ys = [y for s in lines for _, y in _finite_pairs(s.points)]

    def draw(frame: _Frame) -> list[str]:
        return [
            _polylines(frame, item, PALETTE[index % len(PALETTE)], True)
            for index, item in enumerate(lines)
        ]

    labels = [s.label for s in lines]
    return _category_chart(categories, y_label, ys, labels, draw, layout, "step")


@dataclass(frozen=True)
class TrendPoint:
    """One step of a trend: a mean, its interval, the replicates' range, a tooltip, and
    whether it starts a new comparable segment (``break_reason`` says why)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    spread_min: float | None = None
    spread_max: float | None = None
    note: str = ""
    break_reason: str = ""


def trend_plot(
    points: Sequence[TrendPoint],
    y_label: str,
    *,
    width: int = 720,
    height: int = 320,
    title: str = "",
    level: str = "95%",
) -> Svg:
    """Means over named steps in time order, each with its interval (whisker) and the range
    of its replicates (a light box); a line joins the steps of one comparable segment and a
    dashed rule marks a break, labelled with its reason. Each step's tooltip is its note."""
    ys = [
        v
        for p in points
        for v in (p.value, p.low, p.high, p.spread_min, p.spread_max)
        if _finite(v)
    ]
    low, high = (min(ys), max(ys)) if ys else (0.0, 1.0)
    layout: CategoryLayout = {
        "width": width,
        "height": height,
        "y_range": _padded(min(low, 0.0), max(high, 1.0)),
        "title": title or f"{y_label} by prompt version",
    }

    def draw(frame: _Frame) -> list[str]:
        parts: list[str] = []
        segment: list[tuple[float, float]] = []
        for position, point in enumerate(points):
            x = frame.px(position + 0.5)
            if point.break_reason and position:
                parts.append(_polyline(frame, segment))
                segment = []
                rule = _num(frame.px(position))
                parts.append(
                    f'<g class="break"><title>{escape(point.break_reason)}</title>'
                    f'<line x1="{rule}" y1="{_num(frame.top)}" x2="{rule}" '
                    f'y2="{_num(frame.bottom)}" stroke="#9b2c2c" stroke-dasharray="4 3"/>'
                    f'<text x="{rule}" y="{_num(frame.top + 10)}" text-anchor="middle" '
                    f'fill="#9b2c2c" font-size="10">not comparable</text></g>'
                )
            parts.append(_trend_step(frame, x, point, level))
            if _finite(point.value):
                segment.append((x, frame.py(point.value)))
        parts.append(_polyline(frame, segment))
        return parts

    return _category_chart([p.label for p in points], y_label, ys, [], draw, layout, "step")


def _polyline(frame: _Frame, segment: list[tuple[float, float]]) -> str:
    if len(segment) < 2:
        return ""
    points = " ".join(f"{_num(x)},{_num(y)}" for x, y in segment)
    return f'<polyline points="{points}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.5"/>'


def _trend_step(frame: _Frame, x: float, point: TrendPoint, level: str) -> str:
    tip = point.label
    if _finite(point.value):
        tip += f": {_tick_text(point.value)}"
    if _finite(point.low) and _finite(point.high):
        tip += f" ({level} interval {_tick_text(point.low)} to {_tick_text(point.high)})"
    if _finite(point.spread_min) and _finite(point.spread_max):
        tip += f"; replicates {_tick_text(point.spread_min)} to {_tick_text(point.spread_max)}"
    if point.note:
        tip += f". {point.note}"
    parts = [f'<g class="step" tabindex="0"><title>{escape(tip)}</title>']
    if _finite(point.spread_min) and _finite(point.spread_max):
        top, bottom = frame.py(point.spread_max), frame.py(point.spread_min)
        parts.append(
            f'<rect class="spread" x="{_num(x - 9)}" y="{_num(top)}" width="18" '
            f'height="{_num(max(bottom - top, 1))}" fill="{PALETTE[0]}" fill-opacity="0.15"/>'
        )
    if _finite(point.low) and _finite(point.high):
        parts.append(_whisker(frame, x, point.low, point.high, 5))
    if _finite(point.value):
        parts.append(
            f'<circle cx="{_num(x)}" cy="{_num(frame.py(point.value))}" r="4" fill="{PALETTE[0]}"/>'
        )
    else:
        parts.append(
            f'<text x="{_num(x)}" y="{_num(frame.bottom - 4)}" text-anchor="middle" '
            'fill="#6b7280">n/a</text>'
        )
    parts.append("</g>")
    return "".join(parts)
