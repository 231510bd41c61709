"""The long tables' cells written in Python read as the templates wrote them
(metrics.views.cells)."""

from __future__ import annotations

import pytest
from django.template.defaultfilters import floatformat

from metrics.views.cells import fixed, link_format


@pytest.mark.parametrize(
    "value", [0.0625, 0.1235, -0.0004, -0.3733, 1, 0, 0.5, 2.0005, -1e-9, 123.4567, None]
)
def test_a_figure_is_written_as_floatformat_writes_it(value):
    assert fixed(value) == floatformat(value, 3)


def test_a_link_format_gives_the_reversed_path_of_each_id():
    from django.urls import reverse

    assert link_format("audit:statement").format(42) == reverse("audit:statement", args=[42])


@pytest.mark.parametrize(
    "text",
    ["", "short", "x" * 90, "y" * 91, "é" * 95, "e\u0301" * 60, "e\u0301" * 100, "क़" * 50],
)
def test_a_text_is_cut_as_truncatechars_cuts_it(text):
    from django.template.defaultfilters import truncatechars

    from metrics.views.cells import truncated

    assert truncated(text, 90) == truncatechars(text, 90)


def test_a_text_is_escaped_as_autoescape_escapes_it():
    from django.utils.html import conditional_escape

    from metrics.views.cells import escaped

    for value in ["<b>&'\"", 12, None, "plain"]:
        assert escaped(value) == conditional_escape(value)
