"""The item cards written by the item_cards tag say what the template partial they replace
said: the same elements, classes and escaped text, for every state a card can be in."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template

from audit.display import Card

HOSTILE = '<b>O\'Brien</b> & "co"'

# The `item_card` partial as a template loop wrote it, before the tag (its confidence since
# labelled on screen, not in a tooltip only: one labelled figure per item).
TEMPLATE_CARD = """
  <div class="item item-{{ c.kind }}{% if c.state %} is-{{ c.state }}{% endif %}">
    <div class="item-title">
      <span class="kind-tag">{{ c.tag }}</span> <strong>{{ c.title }}</strong>
      {% if c.state == 'added' %}<span class="diff-tag">added</span>
      {% elif c.state == 'removed' %}<span class="diff-tag">removed</span>
      {% elif c.state == 'changed' %}<span class="diff-tag" title="changed: {{ c.changed_fields|join:', ' }}">changed: {{ c.changed_fields|join:", " }}</span>
      {% elif c.state == 'here' %}<span class="diff-tag">this statement</span>{% endif %}
      {% if c.confidence %}<span class="conf"><span class="conf-label">confidence</span> {{ c.confidence }}</span>{% endif %}
    </div>
    <dl>{% for label, value in c.lines %}<dt>{{ label }}</dt><dd>{{ value }}</dd>{% endfor %}</dl>
    {% if c.codes %}<div class="codes">{% for code in c.codes %}<span class="code">{{ code }}</span>{% endfor %}</div>{% endif %}
  </div>
"""


def squeezed(html: str) -> str:
    """Whitespace between tags and runs of it carry nothing in this markup."""
    return re.sub(r"\s+", " ", re.sub(r">\s+<", "><", html)).strip()


def cards() -> list[Card]:
    return [
        Card("people", 1, HOSTILE, [("Gender", "female")], confidence="0.91"),
        Card("events", 2, "Shift", [("Who", HOSTILE), ("When", "2020")], ["S ↑", HOSTILE]),
        Card("pair_bonds", 3, "A & B", [("Married", "yes")], state="added"),
        Card("people", 4, "Gone", state="removed"),
        Card("events", 5, "Moved", state="changed", changed_fields=["kind", HOSTILE]),
        Card("events", 6, "Here", state="here", confidence="high"),
        Card("people", 7, "", state=HOSTILE),
    ]


@pytest.mark.parametrize("card", cards(), ids=lambda card: f"{card.kind}-{card.state or 'plain'}")
def test_a_card_says_what_the_template_said(card):
    written = Template("{% load item_cards %}{% item_card c %}").render(Context({"c": card}))
    expected = Template(TEMPLATE_CARD).render(Context({"c": card}))
    assert squeezed(written) == squeezed(expected)
    assert "<b>" not in written  # hostile text arrives escaped


def test_a_list_of_cards_is_each_card_in_turn():
    every = cards()
    written = Template("{% load item_cards %}{% item_cards every %}").render(
        Context({"every": every})
    )
    one_by_one = "".join(
        Template("{% load item_cards %}{% item_card c %}").render(Context({"c": card}))
        for card in every
    )
    assert written == one_by_one and written.count('class="item item-') == len(every)
