"""The editor's choice lists escape every label and id as Django's own `escape` does."""

from __future__ import annotations

from django.template import Context, Template
from django.utils.html import escape

HOSTILE = '<b>O\'Brien</b> & "co"'


def render(source: str, **context) -> str:
    return Template("{% load editor_options %}" + source).render(Context(context))


def test_options_escape_labels_and_ids_and_select_the_value():
    odd_id = "x\"'<"
    people = [(-1, HOSTILE), (odd_id, "plain")]
    html = render("{% options people value show_ids=True %}", people=people, value=-1)
    assert html == (
        f'<option value="-1" selected>{escape(HOSTILE)} (-1)</option>'
        f'<option value="{escape(odd_id)}">plain ({escape(odd_id)})</option>'
    )


def test_checkboxes_and_titled_options_escape_as_well():
    boxes = render(
        "{% checkboxes name people value %}", name="a&b", people=[(-2, HOSTILE)], value=[-2]
    )
    assert boxes == (
        f'<label class="opt"><input type="checkbox" name="a&amp;b" value="-2" checked> '
        f"{escape(HOSTILE)}</label>"
    )
    titled = render("{% titled_options codes value %}", codes=[("up", HOSTILE)], value="up")
    assert titled == f'<option title="{escape(HOSTILE)}" selected>up</option>'


def test_the_people_list_escapes_and_starts_with_no_one():
    html = render("{% people_list people %}", people=[(-1, HOSTILE)])
    assert html == (
        '<template data-people><option value="">—</option>'
        f'<option value="-1">{escape(HOSTILE)}</option></template>'
    )
