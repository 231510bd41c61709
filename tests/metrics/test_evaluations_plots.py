"""metrics.families.plots: small, safe inline SVG charts."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from metrics.families import plots

SVG = "{http://www.w3.org/2000/svg}"


def _parse(markup: str) -> ET.Element:
    return ET.fromstring(markup)  # well-formed XML or this raises


def test_line_plot_draws_each_series_with_a_legend():
    markup = plots.line_plot(
        [
            {"label": "llm", "points": [(0.1, 0.3), (0.5, 0.2), (1.0, 0.25)]},
            plots.Series("token", ((0.2, 0.1), (None, 0.4), (0.6, 0.2), (0.9, 0.3))),
        ],
        "coverage",
        "risk",
        x_range=(0, 1),
    )
    root = _parse(markup)
    groups = root.findall(f"{SVG}g")
    assert [g.get("data-label") for g in groups] == ["llm", "token"]
    # The None point breaks the second series: one two-point line, one lone point drawn as dot.
    assert len(groups[1].findall(f"{SVG}polyline")) == 1
    assert len(groups[1].findall(f"{SVG}circle")) == 1
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "coverage" in texts and "risk" in texts and "llm" in texts and "token" in texts


def test_labels_are_escaped():
    evil = '<script>alert("x")</script>'
    markup = plots.line_plot([{"label": evil, "points": [(0, 0), (1, 1)]}], evil, "y")
    markup += plots.scatter_plot([{"x": 1, "y": 2, "label": evil}], evil, evil, title=evil)
    assert "<script>" not in markup
    assert "&lt;script&gt;" in markup


def test_scatter_plot_has_identity_line_and_sizes_by_weight():
    markup = plots.scatter_plot(
        [{"x": 0.1, "y": 0.2, "size": 1.0}, {"x": 0.8, "y": 0.5, "size": 4.0}, (0.5, None)],
        "human d",
        "agent d",
        identity_line=True,
    )
    root = _parse(markup)
    circles = root.findall(f"{SVG}circle")
    assert len(circles) == 2  # the point without y is skipped
    small, large = (float(c.get("r")) for c in circles)
    assert large == pytest.approx(2 * small)  # area ∝ weight: 4× the weight, 2× the radius
    identity = root.find(f"{SVG}line[@class='identity']")
    assert identity is not None
    # y = x: the line goes up-right from lower-left, through equal data coordinates.
    assert float(identity.get("x1")) < float(identity.get("x2"))
    assert float(identity.get("y1")) > float(identity.get("y2"))
    without = plots.scatter_plot([(0, 1)], "a", "b", identity_line=False)
    assert "identity" not in without


def test_empty_and_degenerate_inputs_still_draw_axes():
    for markup in (
        plots.line_plot([], "x", "y"),
        plots.scatter_plot([], "x", "y"),
        plots.scatter_plot([(1, 1), (1, 1)], "x", "y"),
        plots.line_plot([{"label": "flat", "points": [(0, 2), (1, 2)]}], "x", "y"),
    ):
        root = _parse(markup)
        assert root.get("viewBox")
        assert not re.search(r"nan|inf", markup)


def test_nice_ticks_are_round():
    assert plots.nice_ticks(0, 1, count=5) == [0, 0.25, 0.5, 0.75, 1.0]
    assert plots.nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert plots.nice_ticks(-0.03, 0.97)[0] == 0
    assert plots.nice_ticks(3, 3) == [3]


def test_verdict_and_reasoning_cards_have_their_plots():
    """Verdicts: judgement accuracy per field as bars; reasoning: accuracy of both modes with
    CI whiskers and the Step-F1 distribution."""
    from metrics.evaluations import services
    from metrics.families.reasoning.card import card as reasoning_card
    from metrics.families.verdicts.card import card as verdicts_card
    from tests.metrics.test_evaluations_fixtures import example_files, example_options

    verdicts = services.artifact_compute(
        family="verdicts", files=example_files("verdicts"), options=example_options("verdicts")
    )
    svg = str(verdicts_card(verdicts)["fields_svg"])
    assert svg.startswith("<svg") and "INCIDENT_SEVERITY" in svg and "ASSURANCE_CLAIM" in svg
    confusion = verdicts_card(verdicts)["confusion"]
    assert "true verdict" in str(confusion["svg"]) and "predicted verdict" in str(confusion["svg"])
    counts = [cell["count"] for row in confusion["rows"] for cell in row["cells"]]
    assert sum(counts) == verdicts["n_with_gt"]
    misses = [c for row in confusion["rows"] for c in row["cells"] if not c["hit"] and c["count"]]
    assert all(len(cell["samples"]) == cell["count"] for cell in misses)
    reasoning = services.artifact_compute(
        family="reasoning", files=example_files("reasoning"), options=example_options("reasoning")
    )
    card = reasoning_card(reasoning)
    accuracy = str(card["accuracy_svg"])
    assert "With chain of thought" in accuracy and "Early answer" in accuracy
    assert accuracy.count("<line") >= 2  # the CI whiskers
    step = str(card["step_f1_svg"])
    assert "Step-F1" in step and "0.0–0.2" in step and "0.6–0.8" in step
