"""The editor's fields written by the editor_options tags say what the template partials they
replace said: the same elements, attributes and escaped text, for every value a draft may
hold (none, one of the codes, a stray code, ids, unknown ids, hostile text)."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from audit.forms import CHOICE_TITLES, CHOICES
from tests.audit.test_item_cards import HOSTILE, squeezed

# The partials as the editor's template wrote them, before the tags.
PARTIALS = {
    "enum_select": """<select name="{{ name }}"{% if invalid %} aria-invalid="true"{% endif %}{% if required %} required{% endif %}>
  {% if not required %}<option value="">—</option>{% endif %}
  {% titled_options titled value %}
  {% if value and value not in choices %}<option selected>{{ value }}</option>{% endif %}
</select>""",
    # Since the editor lists its people once: the plain select for a browser without scripts,
    # and the picker's, holding the person chosen only (person-picker.js lists everyone).
    "person_select": """<noscript><select name="{{ name }}"
    {% if invalid %} aria-invalid="true"{% endif %}{% if required %} required{% endif %}>
  <option value="">—</option>
  {% options people value %}
</select></noscript><select name="{{ name }}" data-person-picker hidden disabled
    {% if invalid %} aria-invalid="true"{% endif %}{% if required %} required{% endif %}>
  <option value="">—</option>
  {% for ident, person in people %}{% if ident == value %}<option value="{{ ident }}" selected>{{ person }}</option>{% endif %}{% endfor %}
</select>""",
    "person_checklist": """<span class="ed-label" id="{{ name }}-label">{{ label }}</span>
<details class="multi" data-multi="{{ name }}"{% if invalid %} aria-invalid="true"{% endif %}>
  <summary aria-describedby="{{ name }}-label"><span class="visually-hidden">{{ label }}: </span><span class="chips">{% for ident, person in people %}{% if ident in value %}<span class="chip">{{ person }}</span>{% endif %}{% endfor %}</span><span class="none muted">none</span></summary>
  <div class="checklist" role="group" aria-labelledby="{{ name }}-label">
    <input type="search" data-multi-search placeholder="Search people…" aria-label="Search people for {{ label }}">
    {% for ident, person in people %}{% if ident in value %}<label class="opt"><input type="checkbox" name="{{ name }}" value="{{ ident }}" checked> {{ person }}</label>{% endif %}{% endfor %}
    <noscript>{% for ident, person in people %}{% if ident in value %}{% else %}<label class="opt"><input type="checkbox" name="{{ name }}" value="{{ ident }}"> {{ person }}</label>{% endif %}{% endfor %}</noscript>
  </div>
</details><input type="hidden" name="{{ name }}" value="">""",
}
TAGS = {
    "enum_select": "{% enum_select name value choices titled invalid=invalid required=required %}",
    "person_select": "{% person_select name people value invalid=invalid required=required %}",
    "person_checklist": "{% person_checklist name label people value invalid=invalid %}",
}
PEOPLE = [(1, "Ann (1)"), (2, f"{HOSTILE} (2)"), ("x", "odd id (x)")]


def _render(text: str, context: dict) -> str:
    html = squeezed(Template("{% load editor_options %}" + text).render(Context(context)))
    return html.replace(" >", ">")  # the partial broke its <select ...> over two lines


def _same(field: str, **context) -> str:
    written = _render(TAGS[field], context)
    assert written == _render(PARTIALS[field], context)
    return written


@pytest.mark.parametrize("value", [None, "", "up", "not a code", HOSTILE])
@pytest.mark.parametrize("required", [False, True])
@pytest.mark.parametrize("invalid", ["", "must be one of the codes"])
def test_a_code_list_says_what_the_partial_said(value, required, invalid):
    written = _same(
        "enum_select",
        name=f"events-0-{HOSTILE}",
        value=value,
        choices=CHOICES["symptom"],
        titled=CHOICE_TITLES["symptom"],
        invalid=invalid,
        required=required,
    )
    assert "<b>" not in written and written.count("selected") == (
        value in ("up", "not a code", HOSTILE)
    )


@pytest.mark.parametrize("value", [None, 1, 2, "x", 99, "1"])
@pytest.mark.parametrize("required", [False, True])
def test_a_person_picker_says_what_the_partial_said(value, required):
    written = _same(
        "person_select",
        name="events-0-person",
        people=PEOPLE,
        value=value,
        invalid="",
        required=required,
    )
    # Chosen in the plain select and in the picker's, which holds no one else.
    assert written.count("selected") == 2 * (value in (1, 2, "x"))
    picker = written.split("</noscript>")[1]
    assert picker.count("<option") == 1 + (value in (1, 2, "x"))


@pytest.mark.parametrize("value", [None, [], [1], [2, "x"], [99], "12", (1, 2)])
@pytest.mark.parametrize("invalid", ["", "unknown person 99"])
def test_a_checklist_says_what_the_partial_said(value, invalid):
    written = _same(
        "person_checklist",
        name="events-0-relationshipTargets",
        label="R triangles (△)",
        people=PEOPLE,
        value=value,
        invalid=invalid,
    )
    chosen = [ident for ident, _ in PEOPLE if isinstance(value, (list, tuple)) and ident in value]
    assert written.count('class="chip"') == written.count("checked") == len(chosen)
    # Everyone has a box: the people ticked before <noscript>, the others in it.
    assert written.split("<noscript>")[1].count('type="checkbox"') == len(PEOPLE) - len(chosen)
