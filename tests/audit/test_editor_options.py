"""The editor's choice lists escape every label and id as Django's own `escape` does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.template import Context, Template
from django.utils.html import escape
from django.utils.safestring import mark_safe

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


# The markup item_tail and remove_refs replaced, as template partials: the tags write the same.
TAIL_TEMPLATE = """
<div class="ed-tail s1"><span class="conf-cell" title="How sure the coding is of this item: the AI's own figure until you edit it, then 1.0"><span class="conf-label">confidence</span> <span class="conf" id="conf-{{ f.pk }}-{{ e.kind }}-{{ e.item.id }}">{{ e.item.confidence|default_if_none:"–" }}</span></span>
<button type="submit" name="op" value="remove:{{ e.kind }}:{{ e.item.id }}" class="icon" title="Remove" aria-label="Remove" hx-post="{{ save_url }}" hx-target="#stmt-{{ row.pk }}" hx-swap="outerHTML" hx-sync="closest form:queue all" data-confirm="remove-{{ f.pk }}-{{ e.kind }}-{{ e.index }}" data-confirm-op="remove">✕</button>

<dialog id="remove-{{ f.pk }}-{{ e.kind }}-{{ e.index }}" class="confirm" aria-labelledby="remove-title-{{ f.pk }}-{{ e.kind }}-{{ e.index }}" data-testid="remove-confirm">
  <h2 id="remove-title-{{ f.pk }}-{{ e.kind }}-{{ e.index }}">Remove this {% if e.kind == "people" %}person{% elif e.kind == "events" %}event{% else %}pair bond{% endif %}?</h2>
  REFS
  <button type="submit" name="op" value="remove:{{ e.kind }}:{{ e.item.id }}" data-confirm-op="remove" data-remove-only hx-post="{{ save_url }}" hx-target="#stmt-{{ row.pk }}" hx-swap="outerHTML" hx-sync="closest form:queue all">Remove it only</button>
  <button type="button" data-confirm-cancel>Keep it</button>
</dialog></div>
"""
REFS_TEMPLATE = """<div id="remove-refs-{{ f.pk }}-{{ e.kind }}-{{ e.index }}" data-refs-count="{{ e.refs|length }}"{% if oob %} hx-swap-oob="true"{% endif %}>{% if e.refs %}
  <p>{{ e.refs|length }} field{{ e.refs|length|pluralize }} of this coding point{{ e.refs|length|pluralize:"s," }} at it:</p>
  <ul>{% for words in e.refs %}<li>{{ words }}</li>{% endfor %}</ul>
  <p><button type="submit" name="op" value="remove_clear:{{ e.kind }}:{{ e.item.id }}" class="primary" data-confirm-op="remove" hx-post="{{ save_url }}" hx-target="#stmt-{{ f.statement_id }}" hx-swap="outerHTML" hx-sync="closest form:queue all">Remove it and clear these {{ e.refs|length }} reference{{ e.refs|length|pluralize }}</button></p>{% endif %}
</div>"""

ENTRIES = [
    {"kind": "people", "index": 0, "item": {"id": -1, "confidence": 0.8}, "refs": []},
    {"kind": "events", "index": 3, "item": {"id": -7, "confidence": None}, "refs": [HOSTILE]},
    {"kind": "pair_bonds", "index": 1, "item": {"id": "x\"'<"}, "refs": ["a", "b"]},
    {"kind": "events", "index": 2, "item": {"confidence": 1.0}, "refs": []},
]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("oob", [False, True])
def test_an_items_tail_and_remove_question_write_what_the_partials_wrote(entry, oob):
    feedback = SimpleNamespace(pk=5, statement_id=9)
    context = {"f": feedback, "e": entry, "row": SimpleNamespace(pk=9), "oob": oob}
    context["save_url"] = mark_safe("/audit/feedback/5/save/")
    refs = Template(REFS_TEMPLATE).render(Context(context))
    assert render("{% remove_refs f e save_url oob=oob %}", **context) == refs
    inner = mark_safe(Template(REFS_TEMPLATE).render(Context({**context, "oob": False})))
    tail = Template(TAIL_TEMPLATE.replace("REFS", "{{ inner }}"))
    expected = tail.render(Context({**context, "inner": inner}))
    assert render("{% item_tail f e row.pk save_url %}", **context) == expected
