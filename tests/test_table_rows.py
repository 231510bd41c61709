"""The long tables' rows written by tags (evalsite/perf/table_rows.py) read as the template
loops they replace wrote them: each cell's figure as ``floatformat:3``, each text as
``truncatechars`` and autoescape, each link as the ``url`` tag."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.template.defaultfilters import floatformat, truncatechars
from django.urls import reverse
from django.utils.html import conditional_escape

from evalsite.perf.table_rows import fixed, link_format, truncated

HOSTILE = '<b>O\'Brien</b> & "co"'


def render(source: str, **context) -> str:
    return Template(source).render(Context(context))


@pytest.mark.parametrize(
    "value", [0.0625, 0.1235, -0.0004, -0.3733, 1, 0, 0.5, 2.0005, -1e-9, 123.4567, None]
)
def test_a_figure_is_written_as_floatformat_writes_it(value):
    assert fixed(value) == floatformat(value, 3)


def test_a_link_format_gives_the_reversed_path_of_each_id():
    assert link_format("audit:statement").format(42) == reverse("audit:statement", args=[42])


@pytest.mark.parametrize(
    "text",
    ["", "short", "x" * 90, "y" * 91, "é" * 95, "e\u0301" * 60, "e\u0301" * 100, "क़" * 50],
)
def test_a_text_is_cut_as_truncatechars_cuts_it(text):
    assert truncated(text, 90) == truncatechars(text, 90)


# The markup the tags replaced: the run comparison's figure cells (a partial per side) and its
# statement loop, and the error statements' loop.
SIDE_TEMPLATE = """{% if s.point is None %}<span class="muted">n/a</span>{% else %}{{ s.point|floatformat:3 }}{% if s.spread.n > 1 %} <span class="ci" title="range over {{ s.spread.n }} replicates">{{ s.spread.min|floatformat:3 }}–{{ s.spread.max|floatformat:3 }}{% if s.spread.sd is not None %}, SD {{ s.spread.sd|floatformat:3 }}{% endif %}</span>{% endif %}{% endif %}"""
DIFFERENCE_TEMPLATE = """{% if r.applicable %}{% if r.delta > 0 %}+{% endif %}{{ r.delta|floatformat:3 }} <span class="ci">[{{ r.low|floatformat:3 }}, {{ r.high|floatformat:3 }}]</span>{% else %}<span class="muted">n/a</span>{% endif %}"""
CHANGED_TEMPLATE = """{% for r in listed %}<tr><td class="stmt"><a href="{% url 'audit:statement' r.statement_id %}?run={{ run_id }}">Discussion #{{ r.discussion_id }}, statement #{{ r.order }}</a><div class="muted small">{{ r.text|truncatechars:90 }}</div></td>
        <td class="num" data-label="Baseline">{{ r.baseline|floatformat:3 }}</td><td class="num" data-label="Candidate">{{ r.candidate|floatformat:3 }}</td>
        <td class="num" data-label="Change">{% if r.delta > 0 %}+{% endif %}{{ r.delta|floatformat:3 }}</td>
        <td class="what-changed">{% for line in r.changes %}<div>{{ line }}</div>{% empty %}<span class="muted">no item changed; the figure moved with partial matches</span>{% endfor %}</td></tr>
{% endfor %}"""
ERRORS_TEMPLATE = """{% for row in rows %}<tr><td class="nowrap"><a href="{% url 'audit:statement' row.statement_id %}?run={{ run_id }}">Statement #{{ row.order }}</a></td>
        <td class="stmt-quote" data-testid="statement-text">{{ row.text|truncatechars:160 }}</td>
        <td class="error-items" data-testid="error-items" data-heading="{{ items_heading }}">{% for item in row.items %}{{ item }}{% if not forloop.last %}<br>{% endif %}{% empty %}<span class="muted">not named: the statement's coding changed since the figures were computed</span>{% endfor %}</td>
        <td class="nowrap"><a href="{% url 'audit:discussion' row.discussion_id %}?run={{ run_id }}&amp;at={{ row.statement_id }}#stmt-{{ row.statement_id }}">Discussion #{{ row.discussion_id }}</a></td>
        <td class="num">{{ row.count }}</td></tr>
{% endfor %}"""

SIDES = [
    {"point": None, "replicates": []},
    {"point": 0.81234, "replicates": [0.81234], "spread": {"n": 1}},
    {"point": 0.5, "spread": {"n": 3, "min": 0.4995, "max": 0.61, "sd": 0.0421}},
    {"point": -0.0004, "spread": {"n": 2, "min": -0.1, "max": 0.1, "sd": None}},
    {"point": 1, "spread": {"n": 3.0, "min": 1, "max": 1}},
    {"point": 0.25},
]
DIFFERENCES = [
    {"applicable": True, "delta": 0.0625, "low": -0.01, "high": 0.1355},
    {"applicable": True, "delta": -0.3733, "low": -0.5, "high": -0.2},
    {"applicable": True, "delta": 0.0, "low": None, "high": None},
    {"applicable": False, "delta": None, "low": None, "high": None},
    {"applicable": False, "delta": 0.2, "low": 0.1, "high": 0.3},
]


@pytest.mark.parametrize("side", SIDES)
def test_a_sides_cell_writes_what_the_partial_wrote(side):
    tag = render("{% load table_rows %}{% side_cell s %}", s=side)
    assert tag == render(SIDE_TEMPLATE, s=side)


@pytest.mark.parametrize("row", DIFFERENCES)
def test_a_difference_cell_writes_what_the_template_wrote(row):
    source = "{% load table_rows %}{% difference_cell r.delta r.low r.high r.applicable %}"
    assert render(source, r=row) == render(DIFFERENCE_TEMPLATE, r=row)


def changed_rows() -> list[dict]:
    return [
        {
            "statement_id": 17,
            "discussion_id": 3,
            "order": 4,
            "text": HOSTILE * 10,
            "baseline": 0.5,
            "candidate": 0.1235,
            "delta": -0.3765,
            "changes": [f"People newly missed: {HOSTILE}", "anxiety of event 2: up → down"],
        },
        {
            "statement_id": 18,
            "discussion_id": 3,
            "order": 5,
            "text": "e\u0301" * 100,
            "baseline": 0.0,
            "candidate": 1.0,
            "delta": 1.0,
            "changes": [],
        },
    ]


@pytest.mark.parametrize("listed", [changed_rows(), []])
def test_the_changed_statements_rows_write_what_the_loop_wrote(listed):
    source = '{% load table_rows %}{% changed_statement_rows listed "audit:statement" run_id %}'
    tag = render(source, listed=listed, run_id=7)
    assert tag == render(CHANGED_TEMPLATE, listed=listed, run_id=7)
    assert not listed or reverse("audit:statement", args=[17]) + "?run=7" in tag


def error_rows() -> list[dict]:
    return [
        {
            "statement_id": 21,
            "discussion_id": 9,
            "order": 2,
            "text": HOSTILE * 20,
            "items": [HOSTILE, "Mother"],
            "count": 2,
        },
        {"statement_id": 22, "discussion_id": 9, "order": 3, "text": "", "items": [], "count": 1},
    ]


@pytest.mark.parametrize("rows", [error_rows(), []])
def test_the_error_statements_rows_write_what_the_loop_wrote(rows):
    source = (
        "{% load table_rows %}"
        '{% error_statement_rows rows "audit:statement" "audit:discussion" run_id heading %}'
    )
    context = {"rows": rows, "run_id": 7, "heading": HOSTILE, "items_heading": HOSTILE}
    tag = render(source, **context)
    assert tag == render(ERRORS_TEMPLATE, **context)
    assert not rows or conditional_escape(HOSTILE) in tag
