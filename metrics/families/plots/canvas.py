"""What every chart shares: the ``Svg`` string, its frame (scales, axes, ticks, grid, legend),
the style of its marks and its lines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape
from typing import Any, TypeGuard

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
class Frame:
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


def is_finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def finite_pairs(points: Iterable[tuple[Any, Any]]) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in points if is_finite(x) and is_finite(y)]


# --- geometry --------------------------------------------------------------------------------


def padded_range(low: float, high: float) -> tuple[float, float]:
    if high <= low:
        return low - 1.0, high + 1.0
    pad = (high - low) * 0.05
    return low - pad, high + pad


def fit_frame(
    xs: list[float],
    ys: list[float],
    width: int,
    height: int,
    x_range: tuple[float, float] | None,
    y_range: tuple[float, float] | None,
) -> Frame:
    x_min, x_max = x_range or (padded_range(min(xs), max(xs)) if xs else (0.0, 1.0))
    y_min, y_max = y_range or (padded_range(min(ys), max(ys)) if ys else (0.0, 1.0))
    if x_max <= x_min:
        x_min, x_max = x_min - 1.0, x_max + 1.0
    if y_max <= y_min:
        y_min, y_max = y_min - 1.0, y_max + 1.0
    return Frame(x_min, x_max, y_min, y_max, width, height)


def _nice_step(raw: float) -> float:
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def number_text(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def tick_text(value: float) -> str:
    if value == 0:
        return "0"
    text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return text.replace("-", "−")


# --- markup ----------------------------------------------------------------------------------


def svg_chart(frame: Frame, title: str, body: list[str]) -> Svg:
    label = escape(title)
    return Svg(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {frame.width} '
        f'{frame.height}" width="{frame.width}" height="{frame.height}" role="img" '
        f'aria-label="{label}" font-family="{escape(FONT)}" font-size="11">'
        f"<title>{label}</title>{''.join(body)}</svg>"
    )


def draw_axes(frame: Frame, x_label: str, y_label: str) -> str:
    parts = [draw_plot_box(frame)]
    for tick in nice_ticks(frame.x_min, frame.x_max):
        x = number_text(frame.px(tick))
        parts.append(
            f'<line x1="{x}" y1="{number_text(frame.top)}" x2="{x}" y2="{number_text(frame.bottom)}" '
            'stroke="#eef0f3"/>'
            f'<text x="{x}" y="{number_text(frame.bottom + 14)}" text-anchor="middle" '
            f'fill="#6b7280">{escape(tick_text(tick))}</text>'
        )
    parts += [draw_y_grid(frame), draw_axis_labels(frame, x_label, y_label)]
    return "".join(parts)


def draw_plot_box(frame: Frame) -> str:
    return (
        f'<rect x="{number_text(frame.left)}" y="{number_text(frame.top)}" '
        f'width="{number_text(frame.right - frame.left)}" height="{number_text(frame.bottom - frame.top)}" '
        'fill="#fff" stroke="#c8ced8"/>'
    )


def draw_y_grid(frame: Frame) -> str:
    """Horizontal grid lines with their values on the left."""
    parts = []
    for tick in nice_ticks(frame.y_min, frame.y_max):
        y = number_text(frame.py(tick))
        parts.append(
            f'<line x1="{number_text(frame.left)}" y1="{y}" x2="{number_text(frame.right)}" y2="{y}" '
            'stroke="#eef0f3"/>'
            f'<text x="{number_text(frame.left - 6)}" y="{y}" dy="0.32em" text-anchor="end" '
            f'fill="#6b7280">{escape(tick_text(tick))}</text>'
        )
    return "".join(parts)


def draw_axis_labels(frame: Frame, x_label: str, y_label: str) -> str:
    middle_x = number_text((frame.left + frame.right) / 2)
    middle_y = number_text((frame.top + frame.bottom) / 2)
    return (
        f'<text x="{middle_x}" y="{number_text(frame.bottom + 32)}" text-anchor="middle" '
        f'fill="#1d2330">{escape(x_label)}</text>'
        f'<text transform="translate(14 {middle_y}) rotate(-90)" text-anchor="middle" '
        f'fill="#1d2330">{escape(y_label)}</text>'
    )


def mark_style(index: int) -> tuple[str, str]:
    """The colour and dash pattern of the index-th series."""
    return PALETTE[index % len(PALETTE)], DASHES[index % len(DASHES)]


def dash_attribute(dash: str) -> str:
    return f' stroke-dasharray="{dash}"' if dash else ""


def draw_polylines(
    frame: Frame, series: Series, color: str, markers: bool = False, dash: str = ""
) -> str:
    """One polyline per run of finite points (a None breaks the line)."""
    dash = dash_attribute(dash)
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in series.points:
        if is_finite(x) and is_finite(y):
            runs[-1].append((frame.px(x), frame.py(y)))
        elif runs[-1]:
            runs.append([])
    parts = [f'<g class="series" data-label="{escape(series.label)}">']
    for run in runs:
        if len(run) > 1:
            coords = " ".join(f"{number_text(x)},{number_text(y)}" for x, y in run)
            parts.append(
                f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2" '
                f'stroke-linejoin="round"{dash}/>'
            )
        if markers or len(run) == 1:
            parts += [
                f'<circle cx="{number_text(x)}" cy="{number_text(y)}" r="2.5" fill="{color}"/>'
                for x, y in run
            ]
    parts.append("</g>")
    return "".join(parts)


def draw_legend(frame: Frame, labels: list[str], *, dashed: bool = False) -> str:
    """Swatches below the plot; `dashed` repeats the line plot's dash patterns."""
    parts = []
    top = frame.bottom + MARGIN_BOTTOM + LEGEND_ROW / 2 - 4
    for index, label in enumerate(labels):
        y = top + index * LEGEND_ROW
        color, dash = mark_style(index)
        dash = dash_attribute(dash) if dashed else ""
        parts.append(
            f'<line x1="{number_text(frame.left)}" y1="{number_text(y)}" x2="{number_text(frame.left + 24)}" '
            f'y2="{number_text(y)}" stroke="{color}" stroke-width="3"{dash}/>'
            f'<text x="{number_text(frame.left + 30)}" y="{number_text(y)}" dy="0.32em" '
            f'fill="#1d2330">{escape(label)}</text>'
        )
    return "".join(parts)
