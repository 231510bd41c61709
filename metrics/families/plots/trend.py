"""The trend of a figure across runs, as a step line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from metrics.families.plots.canvas import (
    PALETTE,
    Frame,
    Svg,
    is_finite,
    number_text,
    padded_range,
    tick_text,
)
from metrics.families.plots.categories import CategoryLayout, category_chart, draw_whisker


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
        if is_finite(v)
    ]
    low, high = (min(ys), max(ys)) if ys else (0.0, 1.0)
    layout: CategoryLayout = {
        "width": width,
        "height": height,
        "y_range": padded_range(min(low, 0.0), max(high, 1.0)),
        "title": title or f"{y_label} by prompt version",
    }

    def draw(frame: Frame) -> list[str]:
        parts: list[str] = []
        segment: list[tuple[float, float]] = []
        for position, point in enumerate(points):
            x = frame.px(position + 0.5)
            if point.break_reason and position:
                parts.append(_polyline(frame, segment))
                segment = []
                rule = number_text(frame.px(position))
                parts.append(
                    f'<g class="break"><title>{escape(point.break_reason)}</title>'
                    f'<line x1="{rule}" y1="{number_text(frame.top)}" x2="{rule}" '
                    f'y2="{number_text(frame.bottom)}" stroke="#9b2c2c" stroke-dasharray="4 3"/>'
                    f'<text x="{rule}" y="{number_text(frame.top + 10)}" text-anchor="middle" '
                    f'fill="#9b2c2c" font-size="10">not comparable</text></g>'
                )
            parts.append(_trend_step(frame, x, point, level))
            if is_finite(point.value):
                segment.append((x, frame.py(point.value)))
        parts.append(_polyline(frame, segment))
        return parts

    return category_chart([p.label for p in points], y_label, ys, [], draw, layout, "step")


def _polyline(frame: Frame, segment: list[tuple[float, float]]) -> str:
    if len(segment) < 2:
        return ""
    points = " ".join(f"{number_text(x)},{number_text(y)}" for x, y in segment)
    return f'<polyline points="{points}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.5"/>'


def _trend_step(frame: Frame, x: float, point: TrendPoint, level: str) -> str:
    tip = point.label
    if is_finite(point.value):
        tip += f": {tick_text(point.value)}"
    if is_finite(point.low) and is_finite(point.high):
        tip += f" ({level} interval {tick_text(point.low)} to {tick_text(point.high)})"
    if is_finite(point.spread_min) and is_finite(point.spread_max):
        tip += f"; replicates {tick_text(point.spread_min)} to {tick_text(point.spread_max)}"
    if point.note:
        tip += f". {point.note}"
    parts = [f'<g class="step" tabindex="0"><title>{escape(tip)}</title>']
    if is_finite(point.spread_min) and is_finite(point.spread_max):
        top, bottom = frame.py(point.spread_max), frame.py(point.spread_min)
        parts.append(
            f'<rect class="spread" x="{number_text(x - 9)}" y="{number_text(top)}" width="18" '
            f'height="{number_text(max(bottom - top, 1))}" fill="{PALETTE[0]}" fill-opacity="0.15"/>'
        )
    if is_finite(point.low) and is_finite(point.high):
        parts.append(draw_whisker(frame, x, point.low, point.high, 5))
    if is_finite(point.value):
        parts.append(
            f'<circle cx="{number_text(x)}" cy="{number_text(frame.py(point.value))}" r="4" fill="{PALETTE[0]}"/>'
        )
    else:
        parts.append(
            f'<text x="{number_text(x)}" y="{number_text(frame.bottom - 4)}" text-anchor="middle" '
            'fill="#6b7280">n/a</text>'
        )
    parts.append("</g>")
    return "".join(parts)
