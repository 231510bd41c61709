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

Points with a None or non-finite coordinate are skipped (a line plot breaks there). The frame
every chart shares is in ``canvas``; the charts in ``xy``, ``categories`` and ``trend``.
"""

from metrics.families.plots.canvas import PALETTE, Point, Series, Svg, nice_ticks
from metrics.families.plots.categories import (
    Bars,
    CategoryLayout,
    bar_plot,
    category_line_plot,
    heatmap,
)
from metrics.families.plots.trend import TrendPoint, trend_plot
from metrics.families.plots.xy import line_plot, scatter_plot

__all__ = [
    "PALETTE",
    "Bars",
    "CategoryLayout",
    "Point",
    "Series",
    "Svg",
    "TrendPoint",
    "bar_plot",
    "category_line_plot",
    "heatmap",
    "line_plot",
    "nice_ticks",
    "scatter_plot",
    "trend_plot",
]
