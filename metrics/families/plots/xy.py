"""Line and scatter plots over two numeric axes."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from html import escape
from typing import Any

from metrics.families.plots.canvas import (
    LEGEND_ROW,
    PALETTE,
    Frame,
    Point,
    Series,
    Svg,
    draw_axes,
    draw_legend,
    draw_polylines,
    finite_pairs,
    fit_frame,
    is_finite,
    mark_style,
    number_text,
    padded_range,
    svg_chart,
    tick_text,
)


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
    xs = [x for s in lines for x, _ in finite_pairs(s.points)]
    ys = [y for s in lines for _, y in finite_pairs(s.points)]
    legend_rows = len(lines) if len(lines) > 1 else 0
    frame = fit_frame(xs, ys, width, height + legend_rows * LEGEND_ROW, x_range, y_range)
    frame = replace(frame, legend_space=legend_rows * LEGEND_ROW)
    body = [draw_axes(frame, x_label, y_label)]
    for index, item in enumerate(lines):
        color, dash = mark_style(index)
        body.append(draw_polylines(frame, item, color, markers, dash))
    if legend_rows:
        body.append(draw_legend(frame, [s.label for s in lines], dashed=True))
    return svg_chart(frame, title or f"{y_label} against {x_label}", body)


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
        frame = fit_frame(xs, ys, width, height, padded_range(*shared), padded_range(*shared))
    else:
        frame = fit_frame(xs, ys, width, height, None, None)
    body = [draw_axes(frame, x_label, y_label)]
    if identity_line:
        body.append(_identity(frame))
    radii = _radii([p.size for p in dots], min_radius, max_radius)
    for point, radius in zip(dots, radii, strict=True):
        body.append(_dot(frame, point, radius))
    return svg_chart(frame, title or f"{y_label} against {x_label}", body)


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
    if not (is_finite(x) and is_finite(y)):
        return None
    return Point(float(x), float(y), float(size) if is_finite(size) else None, str(label or ""))


def _radii(sizes: list[float | None], low: float, high: float) -> list[float]:
    known = [s for s in sizes if s is not None and s > 0]
    if not known:
        return [low + (high - low) / 3] * len(sizes)
    top = max(known)
    # Area proportional to size: radius ∝ sqrt(size).
    return [low if s is None or s <= 0 else max(low, high * math.sqrt(s / top)) for s in sizes]


def _identity(frame: Frame) -> str:
    low = max(frame.x_min, frame.y_min)
    high = min(frame.x_max, frame.y_max)
    if high <= low:
        return ""
    return (
        f'<line class="identity" x1="{number_text(frame.px(low))}" y1="{number_text(frame.py(low))}" '
        f'x2="{number_text(frame.px(high))}" y2="{number_text(frame.py(high))}" stroke="#9aa3b2" '
        'stroke-dasharray="4 3"><title>y = x</title></line>'
    )


def _dot(frame: Frame, point: Point, radius: float) -> str:
    tooltip = f"{point.label} " if point.label else ""
    tooltip += f"({tick_text(point.x)}, {tick_text(point.y)})"
    if point.size is not None:
        tooltip += f" weight {point.size:.3g}"
    return (
        f'<circle cx="{number_text(frame.px(point.x))}" cy="{number_text(frame.py(point.y))}" '
        f'r="{number_text(radius)}" fill="{PALETTE[0]}" fill-opacity="0.55" stroke="{PALETTE[0]}">'
        f"<title>{escape(tooltip)}</title></circle>"
    )
