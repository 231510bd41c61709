"""The dashboards' SVG plots: bars with CI whiskers, heat maps, lines over named runs. Each has
axes and labels, and escapes every label."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from metrics.families.plots import bar_plot, category_line_plot, heatmap

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # also proves the markup is well-formed


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in parse(svg).iter(f"{SVG}text")]


def test_bars_have_whiskers_labels_and_na() -> None:
    svg = bar_plot(
        ["Overall", "Events"],
        [
            {"label": "v1", "values": [0.5, None], "lows": [0.4, None], "highs": [0.6, None]},
            {"label": "v2", "values": [0.7, 0.8], "lows": [0.65, 0.7], "highs": [0.75, 0.9]},
        ],
        "F1 (95% CI)",
        x_label="entity type",
    )
    root = parse(svg)
    assert root.get("role") == "img"
    labels = texts(svg)
    for label in ("Overall", "Events", "F1 (95% CI)", "entity type", "v1", "v2", "n/a", "0.5"):
        assert label in labels, label
    assert len(root.findall(f".//{SVG}path[@class='whisker']")) == 3  # not for the None bar
    tips = ["".join(t.itertext()) for t in root.iter(f"{SVG}title")]
    assert "v2: 0.8 (95% CI 0.7 to 0.9)" in tips


def test_bar_heights_follow_the_values() -> None:
    svg = bar_plot(["a", "b"], [{"label": "", "values": [0.25, 1.0]}], "F1")
    heights = [float(r.get("height")) for r in parse(svg).iter(f"{SVG}rect")][1:]  # skip frame
    assert heights[1] == 4 * heights[0]


def test_heatmap_counts_diagonal_and_axes() -> None:
    svg = heatmap(
        ["none", "up"], ["none", "up"], [[5, 1], [0, 3]], x_label="AI", y_label="ground truth"
    )
    cells = parse(svg).findall(f".//{SVG}g[@class='cell']")
    assert len(cells) == 4
    written = ["".join(c.itertext()) for c in cells]
    assert written == ["5", "1", "·", "3"]
    outlined = [c for c in cells if c.find(f"{SVG}rect").get("stroke") == "#1d2330"]
    assert len(outlined) == 2  # none/none and up/up
    assert {"AI", "ground truth", "none", "up"} <= set(texts(svg))


def test_labels_are_escaped() -> None:
    evil = '<script>alert("x")</script>'
    for svg in (
        bar_plot([evil], [{"label": evil, "values": [0.5]}, {"label": "b", "values": [1]}], evil),
        heatmap([evil], [evil], [[1]], x_label=evil, y_label=evil),
        category_line_plot([evil], [{"label": evil, "values": [0.5]}], evil, x_label=evil),
    ):
        assert "<script>" not in svg
        parse(svg)


def test_category_lines_over_runs() -> None:
    svg = category_line_plot(
        ["v1", "v2", "v3"],
        [
            {"label": "Overall", "values": [0.5, None, 0.7]},
            {"label": "People", "values": [1, 1, 1]},
        ],
        "F1",
        x_label="run",
    )
    assert {"v1", "v2", "v3", "F1", "run", "Overall", "People"} <= set(texts(svg))
    # the None breaks Overall into two single points; People is one line through three
    overall = parse(svg).find(f".//{SVG}g[@data-label='Overall']")
    assert overall.findall(f"{SVG}polyline") == []
    assert len(overall.findall(f"{SVG}circle")) == 2


def test_long_category_labels_are_shortened_with_a_tooltip() -> None:
    long = "gpt-4o-mini-2024-07-18 · prompt-v12-with-examples-and-rules"
    svg = category_line_plot([long, "v2", "v3", "v4"], [{"values": [0.1, 0.2, 0.3, 0.4]}], "F1")
    shown = next(t for t in parse(svg).iter(f"{SVG}text") if t.find(f"{SVG}title") is not None)
    assert shown.find(f"{SVG}title").text == long
    assert re.fullmatch(r"gpt-4o-mini.*…", shown.find(f"{SVG}title").tail)
